#pragma once
// ExecutionPlan: the one authority after planning. A plain, validated value type: the only way to
// build one is `ExecutionPlan::create`, which runs every structural check, so a plan that exists is
// structurally valid (a JSON reader must go through `create` too). Schema 1 was the first mirror of
// upstream's plan: device, residency (fully resident only), drafting, shard bound and required
// capabilities. Schema 2 adds how the session runs: context length, KV precision, threads, and the
// memory budget the plan was admitted against; n-gram drafting joins external drafting. Topology,
// bounded residency and weight transformation are not modelled yet. The JSON form is in
// execution_plan_json.hpp (it reads schema 1 and 2 and writes 2).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "eredu/core/backend_id.hpp"
#include "eredu/core/capabilities.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/result.hpp"

namespace eredu::plan {

// Which backend, and which of its devices, runs the model.
class DevicePlan {
 public:
  // Fails with kInvalidArgument when `device` is empty (the backend id is non-empty by type).
  [[nodiscard]] static Result<DevicePlan> create(BackendId backend, std::string device) {
    if (device.empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "a device plan must name a device")
                      .with_subject("device"));
    }
    return DevicePlan(std::move(backend), std::move(device));
  }

  [[nodiscard]] const BackendId& backend() const noexcept { return backend_; }
  [[nodiscard]] const std::string& device() const noexcept { return device_; }

  friend bool operator==(const DevicePlan&, const DevicePlan&) = default;

 private:
  DevicePlan(BackendId backend, std::string device)
      : backend_(std::move(backend)), device_(std::move(device)) {}
  BackendId backend_;
  std::string device_;
};

// Whether and how the plan drafts tokens for speculative decoding: not at all, with a separately
// loaded assistant model, or by prompt lookup (n-gram matches in the tokens so far; no model).
class DraftingPlan {
 public:
  enum class Kind : std::uint8_t { kDisabled, kExternal, kNgram };
  static constexpr std::uint32_t kMaxNgram = 64;

  [[nodiscard]] static DraftingPlan disabled() { return DraftingPlan(Kind::kDisabled, {}); }
  // Fails with kInvalidArgument unless 1 <= n <= kMaxNgram (n: the longest suffix matched).
  [[nodiscard]] static Result<DraftingPlan> ngram(std::uint32_t n) {
    if (n == 0 || n > kMaxNgram) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "n-gram drafting needs an n-gram size in [1, " + std::to_string(kMaxNgram) +
                            "], got " + std::to_string(n))
                      .with_subject("drafting.ngram"));
    }
    DraftingPlan plan(Kind::kNgram, {});
    plan.ngram_ = n;
    return plan;
  }
  // Fails with kInvalidArgument when `model` (the assistant's path or id) is empty.
  [[nodiscard]] static Result<DraftingPlan> external(std::string model) {
    if (model.empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "external drafting must name a draft model")
                      .with_subject("drafting.model"));
    }
    return DraftingPlan(Kind::kExternal, std::move(model));
  }

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] bool is_external() const noexcept { return kind_ == Kind::kExternal; }
  [[nodiscard]] bool is_ngram() const noexcept { return kind_ == Kind::kNgram; }
  // The assistant model; empty unless drafting is external.
  [[nodiscard]] const std::string& external_model() const noexcept { return model_; }
  // The n-gram size; 0 unless drafting is by n-gram.
  [[nodiscard]] std::uint32_t ngram_size() const noexcept { return ngram_; }

  friend bool operator==(const DraftingPlan&, const DraftingPlan&) = default;

 private:
  DraftingPlan(Kind kind, std::string model) : kind_(kind), model_(std::move(model)) {}
  Kind kind_;
  std::string model_;
  std::uint32_t ngram_ = 0;
};

[[nodiscard]] constexpr std::string_view to_string(DraftingPlan::Kind kind) noexcept {
  switch (kind) {
    case DraftingPlan::Kind::kExternal:
      return "external";
    case DraftingPlan::Kind::kNgram:
      return "ngram";
    case DraftingPlan::Kind::kDisabled:
      break;
  }
  return "disabled";
}

// How a session of the plan runs (schema 2). A context of 0 (what a schema-1 plan reads as) lets
// the loader choose: the model's training context, at most kDefaultContextLength.
struct SessionPlan {
  std::uint32_t context_length = 0;  // KV cache positions
  KvCacheType kv_cache_type = KvCacheType::kF16;
  std::uint32_t threads = 0;  // CPU threads; 0: the backend's default (every core)

  friend bool operator==(const SessionPlan&, const SessionPlan&) = default;
};

// Where the weights live while the model runs. Only "fully resident" (every weight on the planned
// device for the whole run) exists in schema 1; upstream's layerwise-host and disk-streaming
// residencies are rejected by the JSON reader as unsupported.
class ResidencyPlan {
 public:
  enum class Kind : std::uint8_t { kFullyResident };

  [[nodiscard]] static ResidencyPlan fully_resident() noexcept {
    return ResidencyPlan(Kind::kFullyResident);
  }
  [[nodiscard]] Kind kind() const noexcept { return kind_; }

  friend bool operator==(const ResidencyPlan&, const ResidencyPlan&) = default;

 private:
  explicit ResidencyPlan(Kind kind) noexcept : kind_(kind) {}
  Kind kind_;
};

inline constexpr std::uint32_t kExecutionPlanSchemaVersion = 2;        // written
inline constexpr std::uint32_t kOldestExecutionPlanSchemaVersion = 1;  // still read
inline constexpr std::uint32_t kDefaultMaxCachedShards = 4;
inline constexpr std::uint32_t kMaxThreads = 4096;

// Everything of a plan besides its device; the defaults are the fail-closed, single-model plan.
struct ExecutionPlanOptions {
  DraftingPlan drafting = DraftingPlan::disabled();
  DeviceCapabilities required_device_capabilities{};
  SessionCapabilities required_session_capabilities{};
  std::uint32_t max_cached_shards = kDefaultMaxCachedShards;  // > 0
  ResidencyPlan residency = ResidencyPlan::fully_resident();
  SessionPlan session{};
  // The memory (bytes) the plan was admitted against; absent when it was not planned against one.
  std::optional<std::uint64_t> memory_budget_bytes = std::nullopt;
};

class ExecutionPlan {
 public:
  // Validates the structure: the schema version is one that is read (1 or 2), max_cached_shards
  // > 0, and a schema-1 plan asks nothing schema 1 cannot say (n-gram drafting).
  [[nodiscard]] static Result<ExecutionPlan> create(
      DevicePlan device, ExecutionPlanOptions options = {},
      std::uint32_t schema_version = kExecutionPlanSchemaVersion) {
    if (schema_version < kOldestExecutionPlanSchemaVersion ||
        schema_version > kExecutionPlanSchemaVersion) {
      return fail(Error(ErrorCode::kUnsupported,
                        "execution plan schema version " + std::to_string(schema_version) +
                            " is not supported (expected " +
                            std::to_string(kOldestExecutionPlanSchemaVersion) + " to " +
                            std::to_string(kExecutionPlanSchemaVersion) + ")")
                      .with_subject("schema_version"));
    }
    if (schema_version == 1 && options.drafting.is_ngram()) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "n-gram drafting needs execution plan schema version 2")
                      .with_subject("drafting.kind"));
    }
    if (options.session.threads > kMaxThreads) {
      return fail(Error(ErrorCode::kInvalidArgument, "threads must be at most " +
                                                         std::to_string(kMaxThreads) + ", got " +
                                                         std::to_string(options.session.threads))
                      .with_subject("session.threads"));
    }
    if (options.max_cached_shards == 0) {
      return fail(Error(ErrorCode::kInvalidArgument, "max_cached_shards must be positive")
                      .with_subject("max_cached_shards"));
    }
    return ExecutionPlan(std::move(device), std::move(options));
  }

  [[nodiscard]] std::uint32_t schema_version() const noexcept {
    return kExecutionPlanSchemaVersion;
  }
  [[nodiscard]] const DevicePlan& device() const noexcept { return device_; }
  [[nodiscard]] const DraftingPlan& drafting() const noexcept { return options_.drafting; }
  [[nodiscard]] const ResidencyPlan& residency() const noexcept { return options_.residency; }
  [[nodiscard]] const SessionPlan& session() const noexcept { return options_.session; }
  [[nodiscard]] std::optional<std::uint64_t> memory_budget_bytes() const noexcept {
    return options_.memory_budget_bytes;
  }
  [[nodiscard]] const ExecutionPlanOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::uint32_t max_cached_shards() const noexcept {
    return options_.max_cached_shards;
  }
  [[nodiscard]] const DeviceCapabilities& required_device_capabilities() const noexcept {
    return options_.required_device_capabilities;
  }
  [[nodiscard]] const SessionCapabilities& required_session_capabilities() const noexcept {
    return options_.required_session_capabilities;
  }

  // Re-runs the structural checks of `create` (and of the parts' constructors). A plan is built
  // valid, so this fails only if a later schema change lets an invalid one through; the
  // realization wrappers call it anyway, as upstream's do.
  [[nodiscard]] Result<void> validate_structure() const {
    EREDU_TRY(const ExecutionPlan checked, create(device_, options_, kExecutionPlanSchemaVersion));
    (void)checked;
    if (device_.device().empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "a device plan must name a device")
                      .with_subject("device"));
    }
    if (options_.drafting.is_external() && options_.drafting.external_model().empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "external drafting must name a draft model")
                      .with_subject("drafting.model"));
    }
    return ok();
  }

  friend bool operator==(const ExecutionPlan& a, const ExecutionPlan& b) {
    const ExecutionPlanOptions& x = a.options_;
    const ExecutionPlanOptions& y = b.options_;
    return a.device_ == b.device_ && x.drafting == y.drafting &&
           x.required_device_capabilities == y.required_device_capabilities &&
           x.required_session_capabilities == y.required_session_capabilities &&
           x.max_cached_shards == y.max_cached_shards && x.residency == y.residency &&
           x.session == y.session && x.memory_budget_bytes == y.memory_budget_bytes;
  }

  // Fails with kCapabilityMissing naming the first required device capability `available` lacks.
  [[nodiscard]] Result<void> validate_device_capabilities(
      const DeviceCapabilities& available) const {
    return options_.required_device_capabilities.validate(available);
  }
  [[nodiscard]] Result<void> validate_session_capabilities(
      const SessionCapabilities& available) const {
    return options_.required_session_capabilities.validate(available);
  }

 private:
  ExecutionPlan(DevicePlan device, ExecutionPlanOptions options)
      : device_(std::move(device)), options_(std::move(options)) {}
  DevicePlan device_;
  ExecutionPlanOptions options_;
};

}  // namespace eredu::plan
