#pragma once
// CudaPlanFactory: the CUDA backend's ExecutionPlanBackendFactory (and AutomaticPlanningBackend).
// It realizes plans that name backend "cuda" and a device "cuda:<index>" that exists, whose
// required device and session capabilities the backend provides; an external draft model is
// loaded on the same device (plan/backend_plan_checks.hpp). Every rejection happens before any
// weight byte is read. discover_hardware lists every CUDA device, the one
// `backend_options.device` selects (device 0 by default) first. The load options a realized
// target gets come from the plan's session (context, KV type).

#include <optional>

#include "eredu/backends/cuda/cuda_backend.hpp"
#include "eredu/core/backend_id.hpp"
#include "eredu/core/concepts/execution_plan_backend_factory.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::cuda {

// External drafting: the draft model prepared as the target is (its admitted config), and
// materialized into its own runtime on the target's device (plan/backend_plan_checks.hpp).
using CudaDrafterPreparation = CudaBackend::model_config;
using CudaDrafter = runtime::ModelRuntime<CudaBackend>;

class CudaPlanFactory {
 public:
  using backend = CudaBackend;
  using drafter_preparation = CudaDrafterPreparation;
  using drafter = CudaDrafter;

  // The load options of a realized target come from the plan's session (context, KV type).
  explicit CudaPlanFactory(CudaBackendOptions backend_options = {})
      : backend_options_(std::move(backend_options)) {}

  [[nodiscard]] BackendId backend_id() const;
  [[nodiscard]] Result<plan::HardwareProfile, plan::AutomaticPlanningError> discover_hardware()
      const;
  // Accepted when the plan is realizable here and the architecture is one the CUDA backend runs.
  [[nodiscard]] Result<plan::CandidateAdmission, plan::AutomaticPlanningError> admit_candidate(
      const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const;
  [[nodiscard]] Result<plan::ExecutionPlanTarget<CudaBackend>, plan::AutomaticPlanningError>
  realize_target(const plan::ExecutionPlan& execution_plan) const;
  [[nodiscard]] Result<plan::RealizedDrafting<CudaDrafter>, plan::AutomaticPlanningError>
  realize_drafting(
      const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<CudaBackend>& target,
      std::optional<plan::ExternalDraftArtifact<CudaDrafterPreparation>>&& external_artifact) const;

  // The checks realize_target makes (backend id, device, capabilities, drafting), as an Error.
  [[nodiscard]] Result<void> check_plan(const plan::ExecutionPlan& execution_plan) const;

 private:
  CudaBackendOptions backend_options_;
};

static_assert(diagnose::execution_plan_backend_factory<CudaPlanFactory>());

}  // namespace eredu::cuda
