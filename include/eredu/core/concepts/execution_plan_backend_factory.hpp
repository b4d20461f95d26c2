#pragma once
// ExecutionPlanBackendFactory<F> (seed 003): refines AutomaticPlanningBackend. Creates an
// executable whole-model backend from a portable execution plan; core then verifies backend
// identity, device identity, plan structure and fail-closed capabilities.
//
// Associated types: backend (satisfies ModelLoadingBackend), drafter_preparation
// (architecture-owned preparation consumed by assistant materialization), drafter (separately
// prepared assistant). Operations (const members):
//   f.realize_target(const plan::ExecutionPlan&)
//       -> Result<plan::ExecutionPlanTarget<backend>, plan::AutomaticPlanningError>
//   f.realize_drafting(const plan::ExecutionPlan&, const runtime::ModelRuntime<backend>&,
//                      std::optional<plan::ExternalDraftArtifact<drafter_preparation>>&&)
//       -> Result<plan::RealizedDrafting<drafter>, plan::AutomaticPlanningError>
//   The artifact is present exactly when the plan drafts externally (the core wrappers check).
// The plan/runtime types are forward-declared (core/planning_fwd.hpp); include
// eredu/plan/realization.hpp and eredu/runtime/model_runtime.hpp to check a factory.

#include <concepts>
#include <optional>
#include <string_view>
#include <utility>

#include "eredu/core/concepts/automatic_planning_backend.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/concepts/model_loading_backend.hpp"
#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/result.hpp"

namespace eredu::execution_plan_backend_factory_requirements {

template <typename F>
concept has_backend = requires {
  typename F::backend;
};
template <typename F>
concept backend_is_model_loading_backend =
    has_backend<F> && ModelLoadingBackend<typename F::backend>;
template <typename F>
concept has_drafter_preparation = requires {
  typename F::drafter_preparation;
};
template <typename F>
concept has_drafter = requires {
  typename F::drafter;
};
template <typename F>
concept has_realize_target = has_backend<F> &&
    requires(const F& f, const plan::ExecutionPlan& execution_plan) {
  {
    f.realize_target(execution_plan)
    } -> std::same_as<
        Result<plan::ExecutionPlanTarget<typename F::backend>, plan::AutomaticPlanningError>>;
};
template <typename F>
concept has_realize_drafting = has_backend<F> && has_drafter_preparation<F> && has_drafter<F> &&
    requires(const F& f, const plan::ExecutionPlan& execution_plan,
             const runtime::ModelRuntime<typename F::backend>& target,
             std::optional<plan::ExternalDraftArtifact<typename F::drafter_preparation>>&&
                 external_artifact) {
  {
    f.realize_drafting(execution_plan, target, std::move(external_artifact))
    } -> std::same_as<
        Result<plan::RealizedDrafting<typename F::drafter>, plan::AutomaticPlanningError>>;
};

}  // namespace eredu::execution_plan_backend_factory_requirements

// clang-format off
#define EREDU_EXECUTION_PLAN_BACKEND_FACTORY_REQUIREMENTS(X)                                     \
  X(::eredu::AutomaticPlanningBackend<F>,                                                         \
    "ExecutionPlanBackendFactory: F must satisfy AutomaticPlanningBackend; see "                  \
    "eredu::diagnose::automatic_planning_backend<F>()")                                           \
  X(::eredu::execution_plan_backend_factory_requirements::has_backend<F>,                         \
    "ExecutionPlanBackendFactory: missing associated type backend")                               \
  X(::eredu::execution_plan_backend_factory_requirements::backend_is_model_loading_backend<F>,    \
    "ExecutionPlanBackendFactory: backend must satisfy ModelLoadingBackend; see "                 \
    "eredu::diagnose::model_loading_backend<typename F::backend>()")                              \
  X(::eredu::execution_plan_backend_factory_requirements::has_drafter_preparation<F>,             \
    "ExecutionPlanBackendFactory: missing associated type drafter_preparation")                   \
  X(::eredu::execution_plan_backend_factory_requirements::has_drafter<F>,                         \
    "ExecutionPlanBackendFactory: missing associated type drafter")                               \
  X(::eredu::execution_plan_backend_factory_requirements::has_realize_target<F>,                  \
    "ExecutionPlanBackendFactory: missing realize_target(const plan::ExecutionPlan&) const -> "   \
    "Result<plan::ExecutionPlanTarget<backend>, plan::AutomaticPlanningError>")                   \
  X(::eredu::execution_plan_backend_factory_requirements::has_realize_drafting<F>,                \
    "ExecutionPlanBackendFactory: missing realize_drafting(const plan::ExecutionPlan&, "          \
    "const runtime::ModelRuntime<backend>&, "                                                     \
    "std::optional<plan::ExternalDraftArtifact<drafter_preparation>>&&) const -> "                \
    "Result<plan::RealizedDrafting<drafter>, plan::AutomaticPlanningError>")
// clang-format on

namespace eredu {

template <typename F>
concept ExecutionPlanBackendFactory =
    true EREDU_EXECUTION_PLAN_BACKEND_FACTORY_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename F>
constexpr std::string_view execution_plan_backend_factory_unmet() noexcept {
  EREDU_EXECUTION_PLAN_BACKEND_FACTORY_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename F>
consteval bool execution_plan_backend_factory() {
  using diagnosed_type [[maybe_unused]] = F;
  EREDU_EXECUTION_PLAN_BACKEND_FACTORY_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
