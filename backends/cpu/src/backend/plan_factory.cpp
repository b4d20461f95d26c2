// CpuPlanFactory (see cpu_plan_factory.hpp).
#include "eredu/backends/cpu/cpu_plan_factory.hpp"

#include "eredu/plan/backend_plan_checks.hpp"

#include <string>
#include <utility>

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
  EREDU_TRY(auto devices, CpuBackend(CpuBackendOptions{1}).devices());
  return plan::check_plan_for_backend(p, "cpu", devices,
                                      CpuBackend::realized_session_capabilities());
}

Result<plan::CandidateAdmission, plan::AutomaticPlanningError> CpuPlanFactory::admit_candidate(
    const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const {
  return plan::admit_family_candidate(check_plan(candidate), inspection, "cpu");
}

Result<plan::ExecutionPlanTarget<CpuBackend>, plan::AutomaticPlanningError>
CpuPlanFactory::realize_target(const plan::ExecutionPlan& execution_plan) const {
  if (auto checked = check_plan(execution_plan); !checked) {
    return Unexpected(plan::AutomaticPlanningError::invalid(checked.error()));
  }
  CpuBackendOptions options = backend_options_;
  if (execution_plan.session().threads != 0) options.threads = execution_plan.session().threads;
  return plan::ExecutionPlanTarget<CpuBackend>{CpuBackend(options),
                                               plan::load_options_for(execution_plan)};
}

Result<plan::RealizedDrafting<CpuDrafter>, plan::AutomaticPlanningError>
CpuPlanFactory::realize_drafting(
    const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<CpuBackend>& target,
    std::optional<plan::ExternalDraftArtifact<CpuDrafterPreparation>>&& external_artifact) const {
  return plan::realize_drafting_on<CpuBackend>(execution_plan, target, std::move(external_artifact),
                                               "cpu");
}

}  // namespace eredu::cpu
