#pragma once
// VulkanPlanFactory: the Vulkan backend's ExecutionPlanBackendFactory (and
// AutomaticPlanningBackend). It realizes plans that name backend "vulkan" and a device
// "vulkan:<index>" that exists and is usable, whose required device and session capabilities the
// backend provides, and whose drafting is disabled (no drafter yet: an external drafting plan is
// rejected with kUnsupported). Every rejection happens before any weight byte is read.
// discover_hardware lists every physical device, the one `backend_options.device` selects (by
// default the preferred one: a discrete GPU before llvmpipe) first. The backend it makes runs on
// the plan's device, with the options' validation setting; the load options it returns are
// `load_options`.

#include <optional>

#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/core/backend_id.hpp"
#include "eredu/core/concepts/execution_plan_backend_factory.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::vulkan {

// External drafting: the draft model prepared as the target is (its admitted config), and
// materialized into its own runtime on the target's device (plan/backend_plan_checks.hpp).
using VulkanDrafterPreparation = VulkanBackend::model_config;
using VulkanDrafter = runtime::ModelRuntime<VulkanBackend>;

class VulkanPlanFactory {
 public:
  using backend = VulkanBackend;
  using drafter_preparation = VulkanDrafterPreparation;
  using drafter = VulkanDrafter;

  // The load options of a realized target come from the plan's session (context, KV type).
  explicit VulkanPlanFactory(VulkanBackendOptions backend_options = {})
      : backend_options_(std::move(backend_options)) {}

  [[nodiscard]] BackendId backend_id() const;
  [[nodiscard]] Result<plan::HardwareProfile, plan::AutomaticPlanningError> discover_hardware()
      const;
  // Accepted when the plan is realizable here and the architecture is one the Vulkan backend runs.
  [[nodiscard]] Result<plan::CandidateAdmission, plan::AutomaticPlanningError> admit_candidate(
      const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const;
  [[nodiscard]] Result<plan::ExecutionPlanTarget<VulkanBackend>, plan::AutomaticPlanningError>
  realize_target(const plan::ExecutionPlan& execution_plan) const;
  [[nodiscard]] Result<plan::RealizedDrafting<VulkanDrafter>, plan::AutomaticPlanningError>
  realize_drafting(const plan::ExecutionPlan& execution_plan,
                   const runtime::ModelRuntime<VulkanBackend>& target,
                   std::optional<plan::ExternalDraftArtifact<VulkanDrafterPreparation>>&&
                       external_artifact) const;

  // The checks realize_target makes (backend id, device, capabilities, drafting), as an Error.
  [[nodiscard]] Result<void> check_plan(const plan::ExecutionPlan& execution_plan) const;

 private:
  VulkanBackendOptions backend_options_;
};

static_assert(diagnose::execution_plan_backend_factory<VulkanPlanFactory>());

}  // namespace eredu::vulkan
