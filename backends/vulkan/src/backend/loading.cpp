// VulkanBackend's ModelLoadingBackend and BackendProvider: admission from headers (fail closed),
// then prepare_model = declare -> preflight all -> materialize (uploads) -> validate all -> bind
// all.
#include <string>
#include <vector>

#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/model/llama/admission.hpp"
#include "eredu/runtime/bindings.hpp"

namespace eredu::vulkan {

PreparationPolicy VulkanBackend::preparation_policy(const load_options&) const {
  PreparationPolicy policy;
  policy.required_session_capabilities.persistent_cache = true;
  policy.required_session_capabilities.output_observation = true;
  return policy;
}

SessionCapabilities VulkanBackend::session_capabilities(const ArtifactInspection&,
                                                        const PreparationPolicy&) const {
  return realized_session_capabilities();
}

Result<VulkanSelectedPreparation> VulkanBackend::select_preparation(
    const ArtifactInspection& inspection, const load_options& options,
    const PreparationPolicy&) const {
  EREDU_TRY(auto admitted,
            ::eredu::model::llama::admit_llama("vulkan backend", inspection, options.context_length,
                                               [](const checkpoint::DerivedWeightRecipe& recipe,
                                                  const checkpoint::CheckpointSource& source) {
                                                 return preflight_recipe(recipe, source);
                                               }));
  VulkanSelectedPreparation selected;
  selected.max_positions = admitted.max_positions;
  selected.kv_cache_type = options.kv_cache_type;
  selected.config = std::move(admitted.config);
  selected.schema = std::move(admitted.schema);
  return selected;
}

Result<VulkanModelConfig> VulkanBackend::build_model_config(const ModelPreparationPlan& plan,
                                                            selected_preparation&& selected) const {
  if (plan.inspection.source == nullptr) {
    return fail(ErrorCode::kInvalidArgument,
                "vulkan backend: the plan carries no checkpoint source");
  }
  return VulkanModelConfig{std::move(selected), plan.inspection.source,
                           plan.admitted_session_capabilities};
}

Result<PreparedModel<VulkanModel>> VulkanBackend::prepare_model(model_config&& config) const {
  if (config.source == nullptr) {
    return fail(ErrorCode::kInvalidArgument, "vulkan backend: no checkpoint source");
  }
  const auto& selected = config.selected;
  using Llama = ::eredu::model::llama::LlamaModel<VulkanBackend>;
  EREDU_TRY(auto llama, Llama::declare(selected.config, selected.schema));
  std::vector<runtime::WeightBinding> bindings;
  bindings.reserve(selected.schema.size());
  for (const auto& p : selected.schema) {
    if (!p.alias_of) EREDU_TRY_VOID(preflight_recipe(p.recipe, *config.source));
    bindings.push_back(runtime::WeightBinding{p.id, p.recipe, p.alias_of});
  }
  EREDU_TRY(auto unit, runtime::materialize_bindings<VulkanBackend>(
                           *config.source, bindings, VulkanMaterializationContext{device_ptr()}));
  EREDU_TRY_VOID(runtime::bind_materialized_unit<VulkanBackend>(llama, std::move(unit)));
  VulkanModel result;
  result.llama = std::make_shared<const Llama>(std::move(llama));
  result.max_positions = selected.max_positions;
  result.kv_cache_type = selected.kv_cache_type;
  return PreparedModel<VulkanModel>(std::move(result), config.admitted);
}

Result<VulkanSession> VulkanBackend::create_session(PreparedModel<model>&& prepared) const {
  auto parts = std::move(prepared).into_parts();
  const ::eredu::model::llama::LlamaConfig& c = parts.model.llama->config();
  const KvCacheSpec spec{c.n_layer, c.n_head_kv, c.head_dim, parts.model.max_positions};
  EREDU_TRY(auto cache, create_kv_cache_of(spec, parts.model.kv_cache_type));
  return VulkanSession(std::move(parts.model), std::move(cache));
}

}  // namespace eredu::vulkan
