#pragma once
// What every backend's ExecutionPlanBackendFactory checks, written once:
//
//   check_plan_for_backend(plan, backend, devices, realized)
//       the plan names `backend` and one of its `devices`, whose capabilities the plan's required
//       device capabilities fit, and sessions that realize `realized`;
//   admit_family_candidate(checked, inspection, backend)
//       a candidate is accepted when those checks passed and the architecture is a registered
//       family (model/registry.hpp);
//   realize_drafting_on<B>(plan, target, artifact, backend)
//       every drafting mode: disabled; n-gram (prompt lookup: no model, nothing of the backend's);
//       external: the draft model's prepared config materialized on a copy of the target's
//       backend (its device), checked to score the target's vocabulary. The drafter is the draft
//       model's runtime; generation::speculative::ExternalDrafter drives it with the proof;
//   load_options_for(plan)
//       the load options a plan's session asks for (context length, KV precision);
//   device_ordinal(id, backend)
//       the index of a device id "<backend>:<index>" (the device backends' ids).
// Every rejection happens before any weight byte is read.

#include <cstdint>
#include <optional>
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
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::plan {

[[nodiscard]] Result<void> check_plan_for_backend(const ExecutionPlan& plan,
                                                  std::string_view backend,
                                                  std::span<const DeviceReport> devices,
                                                  const SessionCapabilities& realized);

[[nodiscard]] CandidateAdmission admit_family_candidate(const Result<void>& checked,
                                                        const ArtifactInspection& inspection,
                                                        std::string_view backend);

template <typename B>
[[nodiscard]] Result<RealizedDrafting<runtime::ModelRuntime<B>>, AutomaticPlanningError>
realize_drafting_on(const ExecutionPlan& plan, const runtime::ModelRuntime<B>& target,
                    std::optional<ExternalDraftArtifact<typename B::model_config>>&& artifact,
                    std::string_view backend) {
  using Realized = RealizedDrafting<runtime::ModelRuntime<B>>;
  const auto invalid = [](ErrorCode code, std::string message) {
    return Unexpected(
        AutomaticPlanningError::invalid(Error(code, std::move(message)).with_subject("drafting")));
  };
  if (!plan.drafting().is_external()) {
    if (artifact) {
      return invalid(ErrorCode::kInvalidArgument,
                     "a draft model was given but the plan does not draft externally");
    }
    if (plan.drafting().is_ngram()) return Realized::ngram(plan.drafting().ngram_size());
    return Realized::disabled();
  }
  if (!artifact) {
    return invalid(ErrorCode::kInvalidArgument, "the plan drafts with '" +
                                                    plan.drafting().external_model() +
                                                    "' but no prepared draft model was given");
  }
  auto draft =
      runtime::ModelRuntime<B>::prepare(B(target.backend()), std::move(artifact->preparation));
  if (!draft) {
    return Unexpected(AutomaticPlanningError::backend(
        "realize_drafting on the " + std::string(backend) + " backend",
        runtime::to_eredu_error(std::move(draft).error())));
  }
  if (draft->session().n_vocab() != target.session().n_vocab()) {
    return invalid(ErrorCode::kInvalidModel,
                   "the draft model '" + plan.drafting().external_model() + "' scores " +
                       std::to_string(draft->session().n_vocab()) + " tokens, the target " +
                       std::to_string(target.session().n_vocab()));
  }
  return Realized::external(std::move(draft).value());
}

[[nodiscard]] inline runtime::LoadOptions load_options_for(const ExecutionPlan& plan) {
  return runtime::LoadOptions{plan.session().kv_cache_type, plan.session().context_length};
}

// "<backend>:<index>" -> index; nothing for any other id (another backend's, no digits, or an
// index past 100000).
[[nodiscard]] inline std::optional<std::uint32_t> device_ordinal(std::string_view id,
                                                                 std::string_view backend) {
  if (id.size() <= backend.size() + 1 || id.substr(0, backend.size()) != backend ||
      id[backend.size()] != ':') {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (std::size_t i = backend.size() + 1; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9' || value > 100000) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(id[i] - '0');
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace eredu::plan
