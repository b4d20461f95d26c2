// VulkanPlanFactory (see vulkan_plan_factory.hpp).
#include "eredu/backends/vulkan/vulkan_plan_factory.hpp"

#include "eredu/plan/backend_plan_checks.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace eredu::vulkan {

BackendId VulkanPlanFactory::backend_id() const {
  return BackendId::create("vulkan").value();
}

Result<plan::HardwareProfile, plan::AutomaticPlanningError> VulkanPlanFactory::discover_hardware()
    const {
  auto instance = Instance::create(InstanceOptions{});
  if (!instance) {
    return Unexpected(plan::AutomaticPlanningError::backend("discover_hardware", instance.error()));
  }
  const auto& infos = (*instance)->devices();
  auto selected = select_device(infos, backend_options_.device);
  if (!selected) {
    return Unexpected(plan::AutomaticPlanningError::backend("discover_hardware", selected.error()));
  }
  plan::HardwareProfile profile;
  profile.devices = device_reports(infos);
  // The selected device first: callers that plan for "the first device" get the preferred one.
  auto it = std::find_if(profile.devices.begin(), profile.devices.end(), [&](const auto& d) {
    return d.descriptor.id == "vulkan:" + std::to_string(*selected);
  });
  if (it != profile.devices.end()) std::rotate(profile.devices.begin(), it, it + 1);
  return profile;
}

Result<void> VulkanPlanFactory::check_plan(const plan::ExecutionPlan& p) const {
  EREDU_TRY(auto devices, discover_device_reports());
  return plan::check_plan_for_backend(p, "vulkan", devices,
                                      VulkanBackend::realized_session_capabilities());
}

Result<plan::CandidateAdmission, plan::AutomaticPlanningError> VulkanPlanFactory::admit_candidate(
    const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const {
  return plan::admit_family_candidate(check_plan(candidate), inspection, "vulkan");
}

Result<plan::ExecutionPlanTarget<VulkanBackend>, plan::AutomaticPlanningError>
VulkanPlanFactory::realize_target(const plan::ExecutionPlan& execution_plan) const {
  if (auto checked = check_plan(execution_plan); !checked) {
    return Unexpected(plan::AutomaticPlanningError::invalid(checked.error()));
  }
  const auto index = plan::device_ordinal(execution_plan.device().device(), "vulkan");
  if (!index) {
    return Unexpected(plan::AutomaticPlanningError::invalid(
        Error(ErrorCode::kInvalidArgument,
              "device '" + execution_plan.device().device() + "' is not vulkan:<index>")
            .with_subject("device")));
  }
  VulkanBackendOptions options = backend_options_;
  options.device = std::to_string(*index);
  auto created = VulkanBackend::create(options);
  if (!created) {
    return Unexpected(plan::AutomaticPlanningError::backend("realize_target", created.error()));
  }
  return plan::ExecutionPlanTarget<VulkanBackend>{std::move(*created),
                                                  plan::load_options_for(execution_plan)};
}

Result<plan::RealizedDrafting<VulkanDrafter>, plan::AutomaticPlanningError>
VulkanPlanFactory::realize_drafting(
    const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<VulkanBackend>& target,
    std::optional<plan::ExternalDraftArtifact<VulkanDrafterPreparation>>&& external_artifact)
    const {
  return plan::realize_drafting_on<VulkanBackend>(execution_plan, target,
                                                  std::move(external_artifact), "vulkan");
}

}  // namespace eredu::vulkan
