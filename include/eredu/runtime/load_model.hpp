#pragma once
// load_model<B>: checkpoint file -> running ModelRuntime<B>, the main job's pipeline:
//
//   inspect_artifact(path)          open headers only (no payload), read general.architecture
//   b.preparation_policy(options)   what the load demands of the session
//   b.select_preparation(...)       normalize config, schema, fail closed on anything unsupported
//   b.session_capabilities(...)     derived from headers; policy.admit() checks them
//   b.build_model_config(plan, ..)  the plan is the one authority from here on
//   ModelRuntime<B>::prepare        prepare_model (preflight, materialize, validate, bind) and
//                                   create_session, comparing realized with admitted capabilities
//
// prepare_inspected_model<B> runs everything after inspection (tests wrap the inspection's source
// in a counting source to prove which steps read payload).

#include <filesystem>
#include <utility>

#include "eredu/core/concepts/model_loading_backend.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"
#include "eredu/runtime/bindings.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::runtime {

// Opens `path` (a .gguf file or a SafeTensors model) headers-only: format, architecture
// (GGUF general.architecture; kUnsupported when missing), catalog and the source itself.
[[nodiscard]] Result<ArtifactInspection> inspect_artifact(const std::filesystem::path& path);

namespace detail {
// A model error is about the file: name it when the layer that failed did not (a schema error
// names the tensor, not the vocabulary-only GGUF it was looked for in).
inline Error about_artifact(Error error, const ArtifactInspection& inspection) {
  return std::move(error).with_path(inspection.path.string());
}
}  // namespace detail

// Admission up to the backend's model config, reading no payload.
template <ModelLoadingBackend B>
[[nodiscard]] Result<typename B::model_config> plan_inspected_model(
    const B& backend, const ArtifactInspection& inspection,
    const typename B::load_options& options) {
  const PreparationPolicy policy = backend.preparation_policy(options);
  auto selected = backend.select_preparation(inspection, options, policy);
  if (!selected) {
    return fail(detail::about_artifact(to_eredu_error(std::move(selected).error()), inspection));
  }
  const SessionCapabilities caps = backend.session_capabilities(inspection, policy);
  if (auto admitted = policy.admit(caps); !admitted) {
    return fail(detail::about_artifact(std::move(admitted).error(), inspection));
  }
  ModelPreparationPlan plan{inspection, caps};
  auto config = backend.build_model_config(plan, std::move(selected).value());
  if (!config) {
    return fail(detail::about_artifact(to_eredu_error(std::move(config).error()), inspection));
  }
  return std::move(config).value();
}

template <ModelLoadingBackend B>
[[nodiscard]] Result<ModelRuntime<B>> prepare_inspected_model(
    B backend, const ArtifactInspection& inspection, const typename B::load_options& options) {
  EREDU_TRY(auto config, plan_inspected_model(backend, inspection, options));
  auto runtime = ModelRuntime<B>::prepare(std::move(backend), std::move(config));
  if (!runtime) {
    return fail(detail::about_artifact(to_eredu_error(std::move(runtime).error()), inspection));
  }
  return std::move(runtime).value();
}

template <ModelLoadingBackend B>
[[nodiscard]] Result<ModelRuntime<B>> load_model(B backend, const std::filesystem::path& path,
                                                 const typename B::load_options& options) {
  EREDU_TRY(auto inspection, inspect_artifact(path));
  return prepare_inspected_model(std::move(backend), inspection, options);
}

}  // namespace eredu::runtime
