// CudaPlanFactory (see cuda_plan_factory.hpp).
#include "eredu/backends/cuda/cuda_plan_factory.hpp"

#include "eredu/plan/backend_plan_checks.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace eredu::cuda {

BackendId CudaPlanFactory::backend_id() const {
  return BackendId::create("cuda").value();
}

Result<plan::HardwareProfile, plan::AutomaticPlanningError> CudaPlanFactory::discover_hardware()
    const {
  auto selected = select_device(backend_options_);
  if (!selected) {
    return Unexpected(plan::AutomaticPlanningError::backend("discover_hardware", selected.error()));
  }
  auto reports = discover_device_reports();
  if (!reports) {
    return Unexpected(plan::AutomaticPlanningError::backend("discover_hardware", reports.error()));
  }
  plan::HardwareProfile profile;
  profile.devices = std::move(*reports);
  // The selected device first: callers that plan for "the first device" get it.
  auto it = std::find_if(profile.devices.begin(), profile.devices.end(), [&](const auto& d) {
    return d.descriptor.id == "cuda:" + std::to_string(*selected);
  });
  if (it != profile.devices.end()) std::rotate(profile.devices.begin(), it, it + 1);
  return profile;
}

Result<void> CudaPlanFactory::check_plan(const plan::ExecutionPlan& p) const {
  EREDU_TRY(auto devices, discover_device_reports());
  return plan::check_plan_for_backend(p, "cuda", devices,
                                      CudaBackend::realized_session_capabilities());
}

Result<plan::CandidateAdmission, plan::AutomaticPlanningError> CudaPlanFactory::admit_candidate(
    const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const {
  return plan::admit_family_candidate(check_plan(candidate), inspection, "cuda");
}

Result<plan::ExecutionPlanTarget<CudaBackend>, plan::AutomaticPlanningError>
CudaPlanFactory::realize_target(const plan::ExecutionPlan& execution_plan) const {
  if (auto checked = check_plan(execution_plan); !checked) {
    return Unexpected(plan::AutomaticPlanningError::invalid(checked.error()));
  }
  const auto index = plan::device_ordinal(execution_plan.device().device(), "cuda");
  if (!index) {
    return Unexpected(plan::AutomaticPlanningError::invalid(
        Error(ErrorCode::kInvalidArgument,
              "device '" + execution_plan.device().device() + "' is not cuda:<index>")
            .with_subject("device")));
  }
  CudaBackendOptions options = backend_options_;
  options.device = std::to_string(*index);
  auto created = CudaBackend::create(options);
  if (!created) {
    return Unexpected(plan::AutomaticPlanningError::backend("realize_target", created.error()));
  }
  return plan::ExecutionPlanTarget<CudaBackend>{std::move(*created),
                                                plan::load_options_for(execution_plan)};
}

Result<plan::RealizedDrafting<CudaDrafter>, plan::AutomaticPlanningError>
CudaPlanFactory::realize_drafting(
    const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<CudaBackend>& target,
    std::optional<plan::ExternalDraftArtifact<CudaDrafterPreparation>>&& external_artifact) const {
  return plan::realize_drafting_on<CudaBackend>(execution_plan, target,
                                                std::move(external_artifact), "cuda");
}

}  // namespace eredu::cuda
