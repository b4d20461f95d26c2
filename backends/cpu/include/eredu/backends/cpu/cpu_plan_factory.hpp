#pragma once
// CpuPlanFactory: the CPU backend's ExecutionPlanBackendFactory (and AutomaticPlanningBackend).
// It realizes plans that name backend "cpu" and device "cpu:0", whose required device and session
// capabilities the CPU provides, and whose drafting is disabled or n-gram (the CPU has no external
// drafter yet: an external drafting plan is rejected with kUnsupported). Every rejection happens
// before any weight byte is read. The backend it makes uses `backend_options` (the plan's thread
// count, when it names one); the load options it returns are the plan's session.

#include <optional>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/core/backend_id.hpp"
#include "eredu/core/concepts/execution_plan_backend_factory.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::cpu {

// External drafting: the draft model prepared as the target is (its admitted config), and
// materialized into its own runtime on the target's device (plan/backend_plan_checks.hpp).
using CpuDrafterPreparation = CpuBackend::model_config;
using CpuDrafter = runtime::ModelRuntime<CpuBackend>;

class CpuPlanFactory {
 public:
  using backend = CpuBackend;
  using drafter_preparation = CpuDrafterPreparation;
  using drafter = CpuDrafter;

  // The load options of a realized target come from the plan's session (context, KV type), and
  // so do its threads when the plan names a count.
  explicit CpuPlanFactory(CpuBackendOptions backend_options = {})
      : backend_options_(backend_options) {}

  [[nodiscard]] BackendId backend_id() const;
  [[nodiscard]] Result<plan::HardwareProfile, plan::AutomaticPlanningError> discover_hardware()
      const;
  // Accepted when the plan is realizable here and the architecture is one the CPU runs.
  [[nodiscard]] Result<plan::CandidateAdmission, plan::AutomaticPlanningError> admit_candidate(
      const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const;
  [[nodiscard]] Result<plan::ExecutionPlanTarget<CpuBackend>, plan::AutomaticPlanningError>
  realize_target(const plan::ExecutionPlan& execution_plan) const;
  [[nodiscard]] Result<plan::RealizedDrafting<CpuDrafter>, plan::AutomaticPlanningError>
  realize_drafting(
      const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<CpuBackend>& target,
      std::optional<plan::ExternalDraftArtifact<CpuDrafterPreparation>>&& external_artifact) const;

  // The checks realize_target makes (backend id, device, capabilities, drafting), as an Error.
  [[nodiscard]] Result<void> check_plan(const plan::ExecutionPlan& execution_plan) const;

 private:
  CpuBackendOptions backend_options_;
};

static_assert(diagnose::execution_plan_backend_factory<CpuPlanFactory>());

}  // namespace eredu::cpu
