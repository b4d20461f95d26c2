#pragma once
// What every backend's ExecutionPlanBackendFactory checks, written once:
//
//   check_plan_for_backend(plan, backend, devices, realized)
//       the plan names `backend` and one of its `devices`, whose capabilities the plan's required
//       device capabilities fit, and sessions that realize `realized`; drafting is disabled or
//       n-gram (no backend has an external drafter yet);
//   admit_family_candidate(checked, inspection, backend)
//       a candidate is accepted when those checks passed and the architecture is a registered
//       family (model/registry.hpp);
//   realize_modelless_drafting<Drafter>(plan, has_external_artifact, backend)
//       the drafting a backend realizes today: disabled, or n-gram (which needs no model);
//   load_options_for(plan)
//       the load options a plan's session asks for (context length, KV precision).
// Every rejection happens before any weight byte is read.

#include <span>
#include <string>
#include <string_view>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/descriptors.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/family_model.hpp"

namespace eredu::plan {

[[nodiscard]] Result<void> check_plan_for_backend(const ExecutionPlan& plan,
                                                  std::string_view backend,
                                                  std::span<const DeviceReport> devices,
                                                  const SessionCapabilities& realized);

[[nodiscard]] CandidateAdmission admit_family_candidate(const Result<void>& checked,
                                                        const ArtifactInspection& inspection,
                                                        std::string_view backend);

template <typename Drafter>
[[nodiscard]] Result<RealizedDrafting<Drafter>, AutomaticPlanningError> realize_modelless_drafting(
    const ExecutionPlan& plan, bool has_external_artifact, std::string_view backend) {
  if (plan.drafting().is_external() || has_external_artifact) {
    return Unexpected(AutomaticPlanningError::invalid(
        Error(ErrorCode::kUnsupported,
              "the " + std::string(backend) + " backend realizes disabled and n-gram drafting only")
            .with_subject("drafting")));
  }
  if (plan.drafting().is_ngram()) {
    return RealizedDrafting<Drafter>::ngram(plan.drafting().ngram_size());
  }
  return RealizedDrafting<Drafter>::disabled();
}

[[nodiscard]] inline runtime::LoadOptions load_options_for(const ExecutionPlan& plan) {
  return runtime::LoadOptions{plan.session().kv_cache_type, plan.session().context_length};
}

}  // namespace eredu::plan
