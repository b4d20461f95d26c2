// CpuPlanFactory (see cpu_plan_factory.hpp).
#include "eredu/backends/cpu/cpu_plan_factory.hpp"

#include <string>

namespace eredu::cpu {

BackendId CpuPlanFactory::backend_id() const {
  return BackendId::create("cpu").value();
}

Result<plan::HardwareProfile, plan::AutomaticPlanningError> CpuPlanFactory::discover_hardware()
    const {
  auto devices = CpuBackend(CpuBackendOptions{1}).devices();
  if (!devices) {
    return Unexpected(plan::AutomaticPlanningError::backend("discover_hardware", devices.error()));
  }
  plan::HardwareProfile profile;
  profile.devices = std::move(devices).value();
  if (!profile.devices.empty())
    profile.host_memory_bytes = profile.devices.front().descriptor.memory_bytes;
  return profile;
}

Result<void> CpuPlanFactory::check_plan(const plan::ExecutionPlan& p) const {
  if (p.device().backend().value() != "cpu") {
    return fail(Error(ErrorCode::kUnsupported, "the plan names backend '" +
                                                   std::string(p.device().backend().value()) +
                                                   "', not 'cpu'")
                    .with_subject("backend"));
  }
  EREDU_TRY(auto devices, CpuBackend(CpuBackendOptions{1}).devices());
  const DeviceReport* device = nullptr;
  for (const auto& report : devices)
    if (report.descriptor.id == p.device().device()) device = &report;
  if (device == nullptr) {
    return fail(Error(ErrorCode::kNotFound,
                      "the cpu backend has no device '" + p.device().device() + "' (it has cpu:0)")
                    .with_subject("device"));
  }
  EREDU_TRY_VOID(p.validate_device_capabilities(device->capabilities));
  EREDU_TRY_VOID(p.validate_session_capabilities(CpuBackend::realized_session_capabilities()));
  if (p.drafting().is_external()) {
    return fail(Error(ErrorCode::kUnsupported, "the cpu backend has no external drafter yet")
                    .with_subject("drafting"));
  }
  return ok();
}

Result<plan::CandidateAdmission, plan::AutomaticPlanningError> CpuPlanFactory::admit_candidate(
    const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const {
  if (auto checked = check_plan(candidate); !checked) {
    return plan::CandidateAdmission::rejected(checked.error().what());
  }
  if (!::eredu::model::llama::is_llama_architecture(inspection.architecture)) {
    return plan::CandidateAdmission::rejected("architecture '" + inspection.architecture +
                                              "' is not supported by the cpu backend");
  }
  return plan::CandidateAdmission::accepted();
}

Result<plan::ExecutionPlanTarget<CpuBackend>, plan::AutomaticPlanningError>
CpuPlanFactory::realize_target(const plan::ExecutionPlan& execution_plan) const {
  if (auto checked = check_plan(execution_plan); !checked) {
    return Unexpected(plan::AutomaticPlanningError::invalid(checked.error()));
  }
  return plan::ExecutionPlanTarget<CpuBackend>{CpuBackend(backend_options_), load_options_};
}

Result<plan::RealizedDrafting<CpuDrafter>, plan::AutomaticPlanningError>
CpuPlanFactory::realize_drafting(
    const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<CpuBackend>&,
    std::optional<plan::ExternalDraftArtifact<CpuDrafterPreparation>>&& external_artifact) const {
  if (execution_plan.drafting().is_external() || external_artifact.has_value()) {
    return Unexpected(plan::AutomaticPlanningError::invalid(
        Error(ErrorCode::kUnsupported, "the cpu backend realizes disabled drafting only")
            .with_subject("drafting")));
  }
  return plan::RealizedDrafting<CpuDrafter>::disabled();
}

}  // namespace eredu::cpu
