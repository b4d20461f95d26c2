// The JSON rendering of a Report. One object:
//   {"path", "format": "gguf"|"safetensors",
//    "container": {"format", "version", "alignment", "data_offset", "file_size",
//                  "header_bytes", "index", "index_total_size", "shard_count",
//                  "shards": [{"path", "file_size", "data_offset", "header_bytes", "tensors"}]},
//    "metadata": [{"key", "type", "value", ...}],
//    "tensors": [{"name", "encoding", "shape", "elements", "bytes", "offset", "shard"}],
//    "totals": [{"encoding", "tensors", "bytes", "share"}],
//    "verdict": {"valid": true, "tensor_count", "tensor_bytes", "summary", "warnings"}}
// Metadata values follow the same limits as the text: a string longer than max_string carries
// "truncated": true and its full "bytes"; an array carries "element_type", "count" and its first
// max_array elements in "value", with "truncated": true when there are more. Strings are raw
// bytes in GGUF; the caller dumps with invalid UTF-8 replaced.

#include <variant>

#include "output.hpp"

namespace eredu::inspect {
namespace {

using json = nlohmann::ordered_json;

// A string value (or array element): the text itself, or {"value", "bytes", "truncated"}.
void put_string(json& object, std::string_view text, const ValueLimits& limits) {
  const std::string_view shown = utf8_prefix(text, limits.max_string);
  object["value"] = std::string(shown);
  if (shown.size() != text.size()) {
    object["bytes"] = text.size();
    object["truncated"] = true;
  }
}

json array_json(const checkpoint::GgufArray& array, const ValueLimits& limits);

json string_element(std::string_view text, const ValueLimits& limits) {
  const std::string_view shown = utf8_prefix(text, limits.max_string);
  if (shown.size() == text.size()) return std::string(text);
  json object = json::object();
  put_string(object, text, limits);
  return object;
}

json array_element(const checkpoint::GgufArray& array, std::uint64_t i, const ValueLimits& limits) {
  using checkpoint::GgufValueType;
  switch (array.element_type()) {
    case GgufValueType::kU8:
      return *array.at<std::uint8_t>(i);
    case GgufValueType::kI8:
      return *array.at<std::int8_t>(i);
    case GgufValueType::kU16:
      return *array.at<std::uint16_t>(i);
    case GgufValueType::kI16:
      return *array.at<std::int16_t>(i);
    case GgufValueType::kU32:
      return *array.at<std::uint32_t>(i);
    case GgufValueType::kI32:
      return *array.at<std::int32_t>(i);
    case GgufValueType::kF32:
      return *array.at<float>(i);
    case GgufValueType::kBool:
      return *array.at<bool>(i);
    case GgufValueType::kU64:
      return *array.at<std::uint64_t>(i);
    case GgufValueType::kI64:
      return *array.at<std::int64_t>(i);
    case GgufValueType::kF64:
      return *array.at<double>(i);
    case GgufValueType::kString:
      if (i < array.strings().size()) {
        return string_element(array.strings()[static_cast<std::size_t>(i)], limits);
      }
      return nullptr;
    case GgufValueType::kArray:
      if (i < array.arrays().size()) {
        return array_json(array.arrays()[static_cast<std::size_t>(i)], limits);
      }
      return nullptr;
  }
  return nullptr;
}

// {"element_type", "count", "value": [first elements], "truncated"?}
json array_json(const checkpoint::GgufArray& array, const ValueLimits& limits) {
  json object = json::object();
  object["element_type"] = std::string(to_string(array.element_type()));
  object["count"] = array.size();
  json values = json::array();
  const std::uint64_t shown = std::min(array.size(), limits.max_array);
  for (std::uint64_t i = 0; i < shown; ++i)
    values.push_back(array_element(array, i, limits));
  object["value"] = std::move(values);
  if (shown < array.size()) object["truncated"] = true;
  return object;
}

json metadata_json(const MetadataItem& item, const ValueLimits& limits) {
  json entry = json::object();
  entry["key"] = item.key;
  entry["type"] = value_type_name(item.value);
  std::visit(
      [&](const auto& held) {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::string>) {
          put_string(entry, held, limits);
        } else if constexpr (std::is_same_v<T, checkpoint::GgufArray>) {
          entry.update(array_json(held, limits));
        } else {
          entry["value"] = held;
        }
      },
      item.value.storage());
  return entry;
}

json container_json(const ContainerSummary& c) {
  json out = json::object();
  const bool gguf = c.format == Format::kGguf;
  out["format"] = gguf ? "GGUF" : "SafeTensors";
  if (gguf) {
    out["version"] = c.gguf_version;
    out["alignment"] = c.alignment;
  }
  if (!c.shards.empty()) {
    out["data_offset"] = c.shards.front().data_offset;
    out["file_size"] = c.shards.front().file_size;
    if (!gguf) out["header_bytes"] = c.shards.front().header_bytes;
  }
  if (!gguf) {
    out["index"] = c.index_file ? json(*c.index_file) : json(nullptr);
    out["index_total_size"] = c.index_total_size ? json(*c.index_total_size) : json(nullptr);
  }
  out["shard_count"] = c.shards.size();
  json shards = json::array();
  for (const ShardSummary& s : c.shards) {
    json shard = {{"path", s.path},
                  {"file_size", s.file_size},
                  {"data_offset", s.data_offset},
                  {"tensors", s.tensor_count}};
    if (!gguf) shard["header_bytes"] = s.header_bytes;
    shards.push_back(std::move(shard));
  }
  out["shards"] = std::move(shards);
  return out;
}

}  // namespace

json render_json(const Report& report, const OutputOptions& options) {
  json out = json::object();
  out["path"] = report.container.path;
  out["format"] = report.container.format == Format::kGguf ? "gguf" : "safetensors";
  out["container"] = container_json(report.container);

  json metadata = json::array();
  for (const MetadataItem& item : report.metadata)
    metadata.push_back(metadata_json(item, options.limits));
  out["metadata"] = std::move(metadata);

  if (options.tensors) {
    json tensors = json::array();
    for (const TensorRow& t : report.tensors) {
      tensors.push_back({{"name", t.name},
                         {"encoding", t.encoding},
                         {"shape", t.shape},
                         {"elements", t.elements},
                         {"bytes", t.bytes},
                         {"offset", t.offset},
                         {"shard", t.shard}});
    }
    out["tensors"] = std::move(tensors);
  }

  json totals = json::array();
  for (const EncodingTotal& t : report.totals) {
    totals.push_back(
        {{"encoding", t.encoding}, {"tensors", t.tensors}, {"bytes", t.bytes}, {"share", t.share}});
  }
  out["totals"] = std::move(totals);

  out["verdict"] = {{"valid", true},
                    {"tensor_count", report.verdict.tensor_count},
                    {"tensor_bytes", report.verdict.tensor_bytes},
                    {"summary", report.verdict.summary},
                    {"warnings", report.verdict.warnings}};
  return out;
}

}  // namespace eredu::inspect
