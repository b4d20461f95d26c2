#pragma once
// FamilyRuntimeBackend<B>: the BackendProvider / ModelLoadingBackend half of a backend that runs
// the registered families, written once. A backend inherits it (CRTP; its associated types and
// members become B's own) and keeps only what is its own: operators, ParameterBackend hooks,
// devices, KV storage and the session's execution hooks (family_session.hpp), plus
//   static constexpr std::string_view message_name;    // "cpu backend": how errors name it
//   static SessionCapabilities realized_session_capabilities();
//   materialization_context materialization_context_for_load() const;

#include <string_view>
#include <utility>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/runtime/family_model.hpp"
#include "eredu/runtime/family_session.hpp"

namespace eredu::runtime {

template <typename B>
class FamilyRuntimeBackend {
 public:
  // BackendProvider
  using model_config = FamilyModelConfig;
  using model = FamilyModel<B>;
  using session = FamilySession<B>;
  // ModelLoadingBackend
  using load_options = LoadOptions;
  using selected_preparation = FamilyPreparation;

  // A session with a persistent KV cache whose logits the host reads.
  [[nodiscard]] PreparationPolicy preparation_policy(const load_options&) const {
    PreparationPolicy policy;
    policy.required_session_capabilities.persistent_cache = true;
    policy.required_session_capabilities.output_observation = true;
    return policy;
  }
  [[nodiscard]] SessionCapabilities session_capabilities(const ArtifactInspection&,
                                                         const PreparationPolicy&) const {
    return B::realized_session_capabilities();
  }
  // Header-only admission over the registry with B's preflight (fail closed).
  [[nodiscard]] Result<selected_preparation> select_preparation(
      const ArtifactInspection& inspection, const load_options& options,
      const PreparationPolicy&) const {
    return select_family_preparation<B>(B::message_name, inspection, options);
  }
  [[nodiscard]] Result<model_config> build_model_config(const ModelPreparationPlan& plan,
                                                        selected_preparation&& selected) const {
    return family_model_config(B::message_name, plan, std::move(selected));
  }
  // Declare, preflight every recipe, materialize all weights (one bounded lease at a time),
  // validate every binding, bind all.
  [[nodiscard]] Result<PreparedModel<model>> prepare_model(model_config&& config) const {
    return prepare_family_model(self(), B::message_name, std::move(config));
  }
  [[nodiscard]] Result<session> create_session(PreparedModel<model>&& prepared) const {
    return create_family_session(self(), std::move(prepared));
  }

 private:
  [[nodiscard]] const B& self() const noexcept { return static_cast<const B&>(*this); }
};

}  // namespace eredu::runtime
