#pragma once
// Forward declarations of the planning and runtime types that the AutomaticPlanningBackend and
// ExecutionPlanBackendFactory concepts name.
//
// Layering: these types belong to higher layers (include/eredu/plan/, include/eredu/runtime/),
// and core never includes a higher layer. The concepts only need the names (by reference, or
// inside a Result they never instantiate), so core declares them here and the owning headers
// include this file before defining them: any drift between declaration and definition is a
// compile error wherever the definition is included. To CHECK a type against these concepts,
// include the definitions (eredu/plan/execution_plan.hpp, eredu/plan/automatic_planning.hpp,
// eredu/plan/realization.hpp, eredu/runtime/model_runtime.hpp).

namespace eredu::plan {
class ExecutionPlan;
struct HardwareProfile;
struct CandidateAdmission;
class AutomaticPlanningError;
template <typename B>
struct ExecutionPlanTarget;
template <typename D>
class RealizedDrafting;
template <typename P>
struct ExternalDraftArtifact;
}  // namespace eredu::plan

namespace eredu::runtime {
template <typename B>
class ModelRuntime;
}  // namespace eredu::runtime
