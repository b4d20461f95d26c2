// ExecutionPlan <-> JSON (schema versions 1 and 2). See execution_plan_json.hpp for the format.

#include "eredu/plan/execution_plan_json.hpp"

#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace eredu::plan {
namespace {

using nlohmann::json;

Unexpected<Error> field_error(ErrorCode code, const std::string& field, std::string message) {
  return Unexpected<Error>(Error(code, field + ": " + std::move(message)).with_subject(field));
}

const char* type_name(const json& value) {
  return value.type_name();
}

// Every key of `object` must be one of `allowed`; `where` prefixes the field names ("" or
// "device.").
Result<void> reject_unknown_keys(const json& object,
                                 std::initializer_list<std::string_view> allowed,
                                 const std::string& where, std::uint32_t version = 2) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (const std::string_view key : allowed)
      known = known || item.key() == key;
    if (!known) {
      return field_error(
          ErrorCode::kInvalidArgument, where + item.key(),
          "unknown field in an execution plan (schema version " + std::to_string(version) + ")");
    }
  }
  return ok();
}

Result<const json*> require_object(const json& parent, const std::string& key,
                                   const std::string& field) {
  const auto it = parent.find(key);
  if (it == parent.end()) {
    return field_error(ErrorCode::kInvalidArgument, field, "required field is missing");
  }
  if (!it->is_object()) {
    return field_error(ErrorCode::kInvalidArgument, field,
                       std::string("must be an object, found ") + type_name(*it));
  }
  return &*it;
}

Result<std::string> require_string(const json& parent, const std::string& key,
                                   const std::string& field) {
  const auto it = parent.find(key);
  if (it == parent.end()) {
    return field_error(ErrorCode::kInvalidArgument, field, "required field is missing");
  }
  if (!it->is_string()) {
    return field_error(ErrorCode::kInvalidArgument, field,
                       std::string("must be a string, found ") + type_name(*it));
  }
  return it->get<std::string>();
}

Result<std::uint32_t> require_u32(const json& value, const std::string& field) {
  if (!value.is_number_integer()) {
    return field_error(ErrorCode::kInvalidArgument, field,
                       std::string("must be an integer, found ") + type_name(value));
  }
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > std::numeric_limits<std::uint32_t>::max()) {
      return field_error(ErrorCode::kInvalidArgument, field,
                         "value " + std::to_string(v) + " does not fit in 32 bits");
    }
    return static_cast<std::uint32_t>(v);
  }
  const auto v = value.get<std::int64_t>();
  if (v < 0 || v > std::numeric_limits<std::uint32_t>::max()) {
    return field_error(ErrorCode::kInvalidArgument, field,
                       "value " + std::to_string(v) + " is out of range");
  }
  return static_cast<std::uint32_t>(v);
}

// Caps::kFields names every flag; the list must name only those (repeats are harmless).
template <typename Caps>
Result<Caps> read_capabilities(const json& parent, const std::string& key) {
  Caps caps{};
  const auto it = parent.find(key);
  if (it == parent.end()) return caps;
  if (!it->is_array()) {
    return field_error(
        ErrorCode::kInvalidArgument, key,
        std::string("must be an array of capability names, found ") + type_name(*it));
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& entry = (*it)[i];
    const std::string field = key + "[" + std::to_string(i) + "]";
    if (!entry.is_string()) {
      return field_error(ErrorCode::kInvalidArgument, field,
                         std::string("must be a capability name, found ") + type_name(entry));
    }
    const auto& name = entry.get_ref<const std::string&>();
    bool found = false;
    for (const auto& capability : Caps::kFields) {
      if (capability.name == name) {
        caps.*(capability.member) = true;
        found = true;
      }
    }
    if (!found) {
      std::string known;
      for (const auto& capability : Caps::kFields) {
        if (!known.empty()) known += ", ";
        known += capability.name;
      }
      return field_error(ErrorCode::kInvalidArgument, field,
                         "unknown capability '" + name + "' (known: " + known + ")");
    }
  }
  return caps;
}

template <typename Caps>
json capabilities_to_json(const Caps& caps) {
  json list = json::array();
  for (const auto& capability : Caps::kFields) {
    if (caps.*(capability.member)) list.push_back(std::string(capability.name));
  }
  return list;
}

// A constructor error (subject "device", "drafting.model", ...) re-anchored on its JSON field.
Unexpected<Error> as_field_error(Error error, const std::string& field) {
  return field_error(error.code(), field, error.message());
}

Result<DevicePlan> read_device(const json& root) {
  EREDU_TRY(const json* device, require_object(root, "device", "device"));
  EREDU_TRY_VOID(reject_unknown_keys(*device, {"backend", "device"}, "device."));
  EREDU_TRY(std::string backend_name, require_string(*device, "backend", "device.backend"));
  EREDU_TRY(std::string device_id, require_string(*device, "device", "device.device"));
  Result<BackendId> backend = BackendId::create(std::move(backend_name));
  if (!backend) return as_field_error(std::move(backend).error(), "device.backend");
  Result<DevicePlan> plan = DevicePlan::create(std::move(backend).value(), std::move(device_id));
  if (!plan) return as_field_error(std::move(plan).error(), "device.device");
  return plan;
}

Result<ResidencyPlan> read_residency(const json& root) {
  if (!root.contains("residency")) return ResidencyPlan::fully_resident();
  EREDU_TRY(const json* residency, require_object(root, "residency", "residency"));
  EREDU_TRY_VOID(reject_unknown_keys(*residency, {"kind"}, "residency."));
  EREDU_TRY(std::string kind, require_string(*residency, "kind", "residency.kind"));
  if (kind == "fully_resident") return ResidencyPlan::fully_resident();
  if (kind == "layerwise_host" || kind == "dense_disk_stream") {
    return field_error(ErrorCode::kUnsupported, "residency.kind",
                       "residency '" + kind + "' is not supported yet (only 'fully_resident' is)");
  }
  return field_error(ErrorCode::kInvalidArgument, "residency.kind",
                     "unknown residency '" + kind + "' (expected 'fully_resident')");
}

Result<std::uint64_t> require_u64(const json& value, const std::string& field) {
  if (!value.is_number_integer() ||
      (!value.is_number_unsigned() && value.get<std::int64_t>() < 0)) {
    return field_error(ErrorCode::kInvalidArgument, field,
                       std::string("must be a non-negative integer, found ") + value.dump());
  }
  return value.get<std::uint64_t>();
}

Result<DraftingPlan> read_drafting(const json& root) {
  if (!root.contains("drafting")) return DraftingPlan::disabled();
  EREDU_TRY(const json* drafting, require_object(root, "drafting", "drafting"));
  EREDU_TRY(std::string kind, require_string(*drafting, "kind", "drafting.kind"));
  if (kind == "disabled") {
    EREDU_TRY_VOID(reject_unknown_keys(*drafting, {"kind"}, "drafting."));
    return DraftingPlan::disabled();
  }
  if (kind == "external") {
    EREDU_TRY_VOID(reject_unknown_keys(*drafting, {"kind", "model"}, "drafting."));
    EREDU_TRY(std::string model, require_string(*drafting, "model", "drafting.model"));
    Result<DraftingPlan> plan = DraftingPlan::external(std::move(model));
    if (!plan) return as_field_error(std::move(plan).error(), "drafting.model");
    return plan;
  }
  if (kind == "ngram") {
    EREDU_TRY_VOID(reject_unknown_keys(*drafting, {"kind", "ngram"}, "drafting."));
    std::uint32_t n = 3;
    if (const auto it = drafting->find("ngram"); it != drafting->end()) {
      EREDU_TRY(n, require_u32(*it, "drafting.ngram"));
    }
    Result<DraftingPlan> plan = DraftingPlan::ngram(n);
    if (!plan) return as_field_error(std::move(plan).error(), "drafting.ngram");
    return plan;
  }
  if (kind == "embedded") {
    return field_error(ErrorCode::kUnsupported, "drafting.kind",
                       "embedded drafting is not supported yet (expected 'disabled', 'external' "
                       "or 'ngram')");
  }
  return field_error(
      ErrorCode::kInvalidArgument, "drafting.kind",
      "unknown drafting mode '" + kind + "' (expected 'disabled', 'external' or 'ngram')");
}

Result<SessionPlan> read_session(const json& root) {
  SessionPlan session;
  if (!root.contains("session")) return session;
  EREDU_TRY(const json* object, require_object(root, "session", "session"));
  EREDU_TRY_VOID(
      reject_unknown_keys(*object, {"context_length", "kv_cache_type", "threads"}, "session."));
  if (const auto it = object->find("context_length"); it != object->end()) {
    EREDU_TRY(session.context_length, require_u32(*it, "session.context_length"));
  }
  if (object->contains("kv_cache_type")) {
    EREDU_TRY(std::string type, require_string(*object, "kv_cache_type", "session.kv_cache_type"));
    const std::optional<KvCacheType> parsed = parse_kv_cache_type(type);
    if (!parsed) {
      return field_error(
          ErrorCode::kInvalidArgument, "session.kv_cache_type",
          "unknown KV cache type '" + type + "' (expected " + std::string(kKvCacheTypeNames) + ")");
    }
    session.kv_cache_type = *parsed;
  }
  if (const auto it = object->find("threads"); it != object->end()) {
    EREDU_TRY(session.threads, require_u32(*it, "session.threads"));
  }
  return session;
}

Result<ExecutionPlan> plan_from_json_unguarded(const json& root) {
  if (!root.is_object()) {
    return fail(
        Error(ErrorCode::kInvalidArgument,
              std::string("an execution plan must be a JSON object, found ") + type_name(root)));
  }
  // The version decides how everything else reads, so it is checked first.
  const auto version_it = root.find("schema_version");
  if (version_it == root.end()) {
    return field_error(ErrorCode::kInvalidArgument, "schema_version", "required field is missing");
  }
  EREDU_TRY(const std::uint32_t version, require_u32(*version_it, "schema_version"));
  if (version < kOldestExecutionPlanSchemaVersion || version > kExecutionPlanSchemaVersion) {
    return field_error(ErrorCode::kUnsupported, "schema_version",
                       "execution plan schema version " + std::to_string(version) +
                           " is not supported (expected " +
                           std::to_string(kOldestExecutionPlanSchemaVersion) + " to " +
                           std::to_string(kExecutionPlanSchemaVersion) + ")");
  }
  if (version == 1) {
    EREDU_TRY_VOID(reject_unknown_keys(
        root,
        {"schema_version", "device", "residency", "drafting", "max_cached_shards",
         "required_device_capabilities", "required_session_capabilities"},
        "", 1));
  } else {
    EREDU_TRY_VOID(reject_unknown_keys(
        root,
        {"schema_version", "device", "residency", "drafting", "session", "memory_budget_bytes",
         "max_cached_shards", "required_device_capabilities", "required_session_capabilities"},
        ""));
  }
  EREDU_TRY(DevicePlan device, read_device(root));
  ExecutionPlanOptions options;
  EREDU_TRY(options.residency, read_residency(root));
  EREDU_TRY(options.drafting, read_drafting(root));
  EREDU_TRY(options.session, read_session(root));
  if (const auto it = root.find("memory_budget_bytes"); it != root.end() && !it->is_null()) {
    EREDU_TRY(options.memory_budget_bytes, require_u64(*it, "memory_budget_bytes"));
  }
  if (const auto it = root.find("max_cached_shards"); it != root.end()) {
    EREDU_TRY(options.max_cached_shards, require_u32(*it, "max_cached_shards"));
  }
  EREDU_TRY(options.required_device_capabilities,
            read_capabilities<DeviceCapabilities>(root, "required_device_capabilities"));
  EREDU_TRY(options.required_session_capabilities,
            read_capabilities<SessionCapabilities>(root, "required_session_capabilities"));
  Result<ExecutionPlan> plan =
      ExecutionPlan::create(std::move(device), std::move(options), version);
  if (!plan) {
    Error error = std::move(plan).error();
    const std::string field = error.subject().empty() ? std::string("plan") : error.subject();
    return as_field_error(std::move(error), field);
  }
  return plan;
}

}  // namespace

json execution_plan_to_json(const ExecutionPlan& plan) {
  json drafting = json::object();
  drafting["kind"] = std::string(to_string(plan.drafting().kind()));
  if (plan.drafting().is_external()) drafting["model"] = plan.drafting().external_model();
  if (plan.drafting().is_ngram()) drafting["ngram"] = plan.drafting().ngram_size();
  const SessionPlan& session = plan.session();
  json budget = nullptr;
  if (plan.memory_budget_bytes()) budget = *plan.memory_budget_bytes();
  return json{
      {"schema_version", plan.schema_version()},
      {"device",
       json{{"backend", plan.device().backend().value()}, {"device", plan.device().device()}}},
      {"residency", json{{"kind", "fully_resident"}}},
      {"drafting", std::move(drafting)},
      {"session", json{{"context_length", session.context_length},
                       {"kv_cache_type", std::string(to_string(session.kv_cache_type))},
                       {"threads", session.threads}}},
      {"memory_budget_bytes", std::move(budget)},
      {"max_cached_shards", plan.max_cached_shards()},
      {"required_device_capabilities", capabilities_to_json(plan.required_device_capabilities())},
      {"required_session_capabilities", capabilities_to_json(plan.required_session_capabilities())},
  };
}

std::string execution_plan_to_json_string(const ExecutionPlan& plan, int indent) {
  return execution_plan_to_json(plan).dump(indent);
}

Result<ExecutionPlan> execution_plan_from_json(const json& value) {
  try {
    return plan_from_json_unguarded(value);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while reading an execution plan");
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInvalidArgument, std::string("execution plan: ") + e.what());
  }
}

Result<ExecutionPlan> parse_execution_plan(std::string_view text) {
  json value;
  try {
    value = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      std::string("execution plan is not valid JSON: ") + e.what())
                    .with_offset(e.byte));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while parsing an execution plan");
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInvalidArgument,
                std::string("execution plan is not valid JSON: ") + e.what());
  }
  return execution_plan_from_json(value);
}

Result<ExecutionPlan> read_execution_plan_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    return fail(Error(ErrorCode::kIo, "cannot read execution plan: " + ec.message())
                    .with_path(path.string()));
  }
  if (size > kMaxExecutionPlanFileBytes) {
    return fail(Error(ErrorCode::kLimitExceeded, "execution plan file is " + std::to_string(size) +
                                                     " bytes; the limit is " +
                                                     std::to_string(kMaxExecutionPlanFileBytes))
                    .with_path(path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Error(ErrorCode::kIo, "cannot open execution plan").with_path(path.string()));
  }
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory reading an execution plan")
                    .with_path(path.string()));
  }
  if (text.size() > kMaxExecutionPlanFileBytes) {
    return fail(Error(ErrorCode::kLimitExceeded, "execution plan file grew while being read")
                    .with_path(path.string()));
  }
  Result<ExecutionPlan> plan = parse_execution_plan(text);
  if (!plan) return fail(std::move(plan).error().with_path(path.string()));
  return plan;
}

}  // namespace eredu::plan
