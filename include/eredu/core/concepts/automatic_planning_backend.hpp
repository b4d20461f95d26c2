#pragma once
// AutomaticPlanningBackend<F>: what the automatic planner needs from a backend family to choose an
// ExecutionPlan, all of it header-only (no payload read, nothing allocated on a device).
//   f.backend_id()                                    -> BackendId
//   f.discover_hardware()                             -> Result<plan::HardwareProfile,
//   plan::AutomaticPlanningError> f.admit_candidate(const ArtifactInspection&, const
//   plan::ExecutionPlan&)
//                                                     -> Result<plan::CandidateAdmission,
//                                                     plan::AutomaticPlanningError>
// Upstream's resource and bounded-residency probes arrive with the planner (they need its
// residency vocabulary); this is the part backends and the factory rely on today.
// The plan types are forward-declared (core/planning_fwd.hpp); include eredu/plan/*.hpp to check.

#include <concepts>
#include <string_view>

#include "eredu/core/backend_id.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/result.hpp"

namespace eredu::automatic_planning_backend_requirements {

template <typename F>
concept has_backend_id = requires(const F& f) {
  { f.backend_id() } -> std::same_as<BackendId>;
};
template <typename F>
concept has_discover_hardware = requires(const F& f) {
  {
    f.discover_hardware()
    } -> std::same_as<Result<plan::HardwareProfile, plan::AutomaticPlanningError>>;
};
template <typename F>
concept has_admit_candidate = requires(const F& f, const ArtifactInspection& inspection,
                                       const plan::ExecutionPlan& candidate) {
  {
    f.admit_candidate(inspection, candidate)
    } -> std::same_as<Result<plan::CandidateAdmission, plan::AutomaticPlanningError>>;
};

}  // namespace eredu::automatic_planning_backend_requirements

// clang-format off
#define EREDU_AUTOMATIC_PLANNING_BACKEND_REQUIREMENTS(X)                                         \
  X(::eredu::automatic_planning_backend_requirements::has_backend_id<F>,                          \
    "AutomaticPlanningBackend: missing backend_id() const -> BackendId")                          \
  X(::eredu::automatic_planning_backend_requirements::has_discover_hardware<F>,                   \
    "AutomaticPlanningBackend: missing discover_hardware() const -> "                             \
    "Result<plan::HardwareProfile, plan::AutomaticPlanningError>")                                \
  X(::eredu::automatic_planning_backend_requirements::has_admit_candidate<F>,                     \
    "AutomaticPlanningBackend: missing admit_candidate(const ArtifactInspection&, "               \
    "const plan::ExecutionPlan&) const -> "                                                       \
    "Result<plan::CandidateAdmission, plan::AutomaticPlanningError>")
// clang-format on

namespace eredu {

template <typename F>
concept AutomaticPlanningBackend =
    true EREDU_AUTOMATIC_PLANNING_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename F>
constexpr std::string_view automatic_planning_backend_unmet() noexcept {
  EREDU_AUTOMATIC_PLANNING_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename F>
consteval bool automatic_planning_backend() {
  using diagnosed_type [[maybe_unused]] = F;
  EREDU_AUTOMATIC_PLANNING_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
