#pragma once
// ExecutionPlan: the one authority after planning. A plain, validated value type: the only way to
// build one is `ExecutionPlan::create`, which runs every structural check, so a plan that exists is
// structurally valid (a JSON reader must go through `create` too). This is the first-mirror subset
// of upstream's plan (schema 1): device, residency (fully resident only), drafting, shard bound and
// required capabilities; topology, bounded residency and weight transformation arrive with the
// planner. The JSON form is in execution_plan_json.hpp.

#include <cstdint>
#include <string>
#include <utility>

#include "eredu/core/backend_id.hpp"
#include "eredu/core/capabilities.hpp"
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

// Whether the plan drafts with a separately loaded assistant model.
class DraftingPlan {
 public:
  enum class Kind : std::uint8_t { kDisabled, kExternal };

  [[nodiscard]] static DraftingPlan disabled() { return DraftingPlan(Kind::kDisabled, {}); }
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
  // The assistant model; empty when drafting is disabled.
  [[nodiscard]] const std::string& external_model() const noexcept { return model_; }

  friend bool operator==(const DraftingPlan&, const DraftingPlan&) = default;

 private:
  DraftingPlan(Kind kind, std::string model) : kind_(kind), model_(std::move(model)) {}
  Kind kind_;
  std::string model_;
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

inline constexpr std::uint32_t kExecutionPlanSchemaVersion = 1;
inline constexpr std::uint32_t kDefaultMaxCachedShards = 4;

// Everything of a plan besides its device; the defaults are the fail-closed, single-model plan.
struct ExecutionPlanOptions {
  DraftingPlan drafting = DraftingPlan::disabled();
  DeviceCapabilities required_device_capabilities{};
  SessionCapabilities required_session_capabilities{};
  std::uint32_t max_cached_shards = kDefaultMaxCachedShards;  // > 0
  ResidencyPlan residency = ResidencyPlan::fully_resident();
};

class ExecutionPlan {
 public:
  // Validates the structure: the schema version is the supported one and max_cached_shards > 0.
  [[nodiscard]] static Result<ExecutionPlan> create(
      DevicePlan device, ExecutionPlanOptions options = {},
      std::uint32_t schema_version = kExecutionPlanSchemaVersion) {
    if (schema_version != kExecutionPlanSchemaVersion) {
      return fail(Error(ErrorCode::kUnsupported,
                        "execution plan schema version " + std::to_string(schema_version) +
                            " is not supported (expected " +
                            std::to_string(kExecutionPlanSchemaVersion) + ")")
                      .with_subject("schema_version"));
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
           x.max_cached_shards == y.max_cached_shards && x.residency == y.residency;
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
