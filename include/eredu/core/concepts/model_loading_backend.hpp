#pragma once
// ModelLoadingBackend<B>: refines BackendProvider. Translates a header-only inspection and the
// caller's load options into the backend's materialization input, failing closed: everything the
// backend cannot do is rejected before the first payload byte is read.
//
// Associated types: load_options (the caller's request), selected_preparation (the intersection
// of architecture facts, request and backend support).
// Operations (const members):
//   b.preparation_policy(const load_options&)                       -> PreparationPolicy
//   b.select_preparation(const ArtifactInspection&, const load_options&, const PreparationPolicy&)
//                                                                   -> Result<selected_preparation,
//                                                                   error>
//   b.session_capabilities(const ArtifactInspection&, const PreparationPolicy&)
//                                                                   -> SessionCapabilities
//                                                                   (header-only)
//   b.build_model_config(const ModelPreparationPlan&, selected_preparation&&)
//                                                                   -> Result<model_config, error>
//       (upstream `model_config(plan, selected)`; renamed because the associated type already
//       takes the name model_config)
// Architecture/family resolution (upstream `configuration_resolver`) lives in the model layer.

#include <concepts>
#include <string_view>
#include <utility>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/concepts/backend_provider.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"

namespace eredu::model_loading_backend_requirements {

template <typename B>
concept has_load_options = requires {
  typename B::load_options;
};
template <typename B>
concept has_selected_preparation = requires {
  typename B::selected_preparation;
};
template <typename B>
concept has_preparation_policy = has_load_options<B> &&
    requires(const B& b, const typename B::load_options& options) {
  { b.preparation_policy(options) } -> std::same_as<PreparationPolicy>;
};
template <typename B>
concept has_select_preparation = has_load_options<B> && has_selected_preparation<B> && requires {
  typename B::error;
} && requires(const B& b, const ArtifactInspection& inspection,
              const typename B::load_options& options, const PreparationPolicy& policy) {
  {
    b.select_preparation(inspection, options, policy)
    } -> std::same_as<Result<typename B::selected_preparation, typename B::error>>;
};
template <typename B>
concept has_session_capabilities = requires(const B& b, const ArtifactInspection& inspection,
                                            const PreparationPolicy& policy) {
  { b.session_capabilities(inspection, policy) } -> std::same_as<SessionCapabilities>;
};
template <typename B>
concept has_build_model_config = has_selected_preparation<B> && requires {
  typename B::model_config;
  typename B::error;
} && requires(const B& b, const ModelPreparationPlan& plan,
              typename B::selected_preparation&& selected) {
  {
    b.build_model_config(plan, std::move(selected))
    } -> std::same_as<Result<typename B::model_config, typename B::error>>;
};

}  // namespace eredu::model_loading_backend_requirements

// clang-format off
#define EREDU_MODEL_LOADING_BACKEND_REQUIREMENTS(X)                                              \
  X(::eredu::BackendProvider<B>,                                                                  \
    "ModelLoadingBackend: B must satisfy BackendProvider; see "                                   \
    "eredu::diagnose::backend_provider<B>()")                                                     \
  X(::eredu::model_loading_backend_requirements::has_load_options<B>,                             \
    "ModelLoadingBackend: missing associated type load_options")                                  \
  X(::eredu::model_loading_backend_requirements::has_selected_preparation<B>,                     \
    "ModelLoadingBackend: missing associated type selected_preparation")                          \
  X(::eredu::model_loading_backend_requirements::has_preparation_policy<B>,                       \
    "ModelLoadingBackend: missing preparation_policy(const load_options&) const -> "              \
    "PreparationPolicy")                                                                          \
  X(::eredu::model_loading_backend_requirements::has_select_preparation<B>,                       \
    "ModelLoadingBackend: missing select_preparation(const ArtifactInspection&, "                 \
    "const load_options&, const PreparationPolicy&) const -> "                                    \
    "Result<selected_preparation, error>")                                                        \
  X(::eredu::model_loading_backend_requirements::has_session_capabilities<B>,                     \
    "ModelLoadingBackend: missing session_capabilities(const ArtifactInspection&, "               \
    "const PreparationPolicy&) const -> SessionCapabilities")                                     \
  X(::eredu::model_loading_backend_requirements::has_build_model_config<B>,                       \
    "ModelLoadingBackend: missing build_model_config(const ModelPreparationPlan&, "               \
    "selected_preparation&&) const -> Result<model_config, error>")
// clang-format on

namespace eredu {

template <typename B>
concept ModelLoadingBackend =
    true EREDU_MODEL_LOADING_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename B>
constexpr std::string_view model_loading_backend_unmet() noexcept {
  EREDU_MODEL_LOADING_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename B>
consteval bool model_loading_backend() {
  using diagnosed_type [[maybe_unused]] = B;
  EREDU_MODEL_LOADING_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
