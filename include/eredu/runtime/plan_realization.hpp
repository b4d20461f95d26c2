#pragma once
// The core wrappers applications call to turn an ExecutionPlan into a running backend. A factory
// only builds things; these functions check that what it built is what the plan asked for, so a
// plan naming another backend, a device that is not there or a capability the device lacks is
// rejected here, before any weight byte is read (realizing a target reads no payload: weights are
// loaded afterwards, by load_model with the returned load options).
//
//   realize_execution_plan_target(factory, plan):
//     1. the plan names the factory's backend (plan.device().backend() == factory.backend_id());
//     2. the plan's structure is valid;
//     3. factory.realize_target(plan);
//     4. the realized backend's descriptor name is that backend id;
//     5. the realized backend exposes the planned device id;
//     6. that device's capabilities satisfy the plan's required device capabilities.
//   realize_execution_plan_drafting(factory, plan, target, artifact?):
//     1. the plan names the factory's backend and is structurally valid;
//     2. an external draft artifact is given exactly when the plan drafts externally;
//     3. factory.realize_drafting(...);
//     4. the realized drafting mode is the planned one.
// Every rejection is AutomaticPlanningError::invalid with an eredu::Error whose subject names the
// plan field; a factory or backend failure is AutomaticPlanningError::backend naming the
// operation.

#include <concepts>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eredu/core/concepts/execution_plan_backend_factory.hpp"
#include "eredu/core/descriptors.hpp"
#include "eredu/core/result.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::runtime {

namespace detail {

inline Unexpected<plan::AutomaticPlanningError> invalid_plan(ErrorCode code, std::string message,
                                                             std::string field) {
  return Unexpected<plan::AutomaticPlanningError>(plan::AutomaticPlanningError::invalid(
      Error(code, std::move(message)).with_subject(std::move(field))));
}

// Checks 1 and 2 of both wrappers.
template <typename F>
Result<void, plan::AutomaticPlanningError> check_plan_for_factory(const F& factory,
                                                                  const plan::ExecutionPlan& p) {
  const BackendId factory_id = factory.backend_id();
  if (p.device().backend() != factory_id) {
    return invalid_plan(ErrorCode::kInvalidArgument,
                        "the plan names backend '" + p.device().backend().value() +
                            "' but this factory realizes backend '" + factory_id.value() + "'",
                        "device.backend");
  }
  if (Result<void> structure = p.validate_structure(); !structure) {
    return Unexpected<plan::AutomaticPlanningError>(
        plan::AutomaticPlanningError::invalid(std::move(structure).error()));
  }
  return ok<plan::AutomaticPlanningError>();
}

template <typename E>
Error backend_cause(const E& error) {
  if constexpr (std::same_as<E, Error>) {
    return error;
  } else {
    return Error(ErrorCode::kBackend, error.what());
  }
}

}  // namespace detail

template <ExecutionPlanBackendFactory F>
[[nodiscard]] Result<plan::ExecutionPlanTarget<typename F::backend>, plan::AutomaticPlanningError>
realize_execution_plan_target(const F& factory, const plan::ExecutionPlan& execution_plan) {
  using Error_ = plan::AutomaticPlanningError;
  EREDU_TRY_VOID(detail::check_plan_for_factory(factory, execution_plan));
  EREDU_TRY(plan::ExecutionPlanTarget<typename F::backend> target,
            factory.realize_target(execution_plan));

  const std::string& planned_backend = execution_plan.device().backend().value();
  const BackendDescriptor descriptor = target.backend.descriptor();
  if (descriptor.name != planned_backend) {
    return detail::invalid_plan(ErrorCode::kInvalidArgument,
                                "the factory realized a backend named '" + descriptor.name +
                                    "' for a plan that names backend '" + planned_backend + "'",
                                "device.backend");
  }

  auto devices = target.backend.devices();
  if (!devices) {
    return Unexpected<Error_>(Error_::backend("devices", detail::backend_cause(devices.error())));
  }
  const std::string& planned_device = execution_plan.device().device();
  const DeviceReport* report = nullptr;
  std::string present;
  for (const DeviceReport& candidate : *devices) {
    if (candidate.descriptor.id == planned_device) report = &candidate;
    if (!present.empty()) present += ", ";
    present += "'" + candidate.descriptor.id + "'";
  }
  if (report == nullptr) {
    return detail::invalid_plan(
        ErrorCode::kNotFound,
        "backend '" + planned_backend + "' has no device '" + planned_device +
            "' (present: " + (present.empty() ? std::string("none") : present) + ")",
        "device.device");
  }
  if (Result<void> caps = execution_plan.validate_device_capabilities(report->capabilities);
      !caps) {
    Error cause = std::move(caps).error();
    return detail::invalid_plan(cause.code(), "device '" + planned_device + "': " + cause.message(),
                                "required_device_capabilities");
  }
  return target;
}

template <ExecutionPlanBackendFactory F>
[[nodiscard]] Result<plan::RealizedDrafting<typename F::drafter>, plan::AutomaticPlanningError>
realize_execution_plan_drafting(
    const F& factory, const plan::ExecutionPlan& execution_plan,
    const ModelRuntime<typename F::backend>& target,
    std::optional<plan::ExternalDraftArtifact<typename F::drafter_preparation>>&& artifact) {
  EREDU_TRY_VOID(detail::check_plan_for_factory(factory, execution_plan));
  const bool external = execution_plan.drafting().is_external();
  if (external && !artifact.has_value()) {
    return detail::invalid_plan(ErrorCode::kInvalidArgument,
                                "the plan drafts externally with '" +
                                    execution_plan.drafting().external_model() +
                                    "' but no external draft artifact was given",
                                "drafting");
  }
  if (!external && artifact.has_value()) {
    return detail::invalid_plan(ErrorCode::kInvalidArgument,
                                "an external draft artifact was given but the plan does not "
                                "draft externally",
                                "drafting");
  }
  EREDU_TRY(plan::RealizedDrafting<typename F::drafter> realized,
            factory.realize_drafting(execution_plan, target, std::move(artifact)));
  if (realized.kind() != execution_plan.drafting().kind()) {
    return detail::invalid_plan(
        ErrorCode::kInternal,
        "the factory realized drafting '" + std::string(plan::to_string(realized.kind())) +
            "' but the plan asks for '" +
            std::string(plan::to_string(execution_plan.drafting().kind())) + "'",
        "drafting");
  }
  return realized;
}

}  // namespace eredu::runtime
