#pragma once
// The loading half of a backend, written once over the family registry. A backend's
// ModelLoadingBackend / BackendProvider members forward here; it keeps only its ParameterBackend
// hooks (preflight, materialize, validate, bind) and `materialization_context_for_load()` (the
// context its weights are materialized in).
//
//   select_family_preparation<B>(who, inspection, options)   header-only admission, fail closed:
//       registered family, valid config and schema, every recipe preflighted by B, every optional
//       operator the model needs provided by B;
//   family_model_config(who, plan, selected)                  the prepare_model input;
//   prepare_family_model<B>(b, who, config)                   declare -> preflight all ->
//       materialize (one bounded lease at a time) -> validate all -> bind all: on any error nothing
//       is published and nothing already loaded is touched.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "eredu/checkpoint/source.hpp"
#include "eredu/core/capabilities.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/model/admission.hpp"
#include "eredu/runtime/bindings.hpp"

namespace eredu::runtime {

// What a model load asks for, the same on every backend.
struct LoadOptions {
  KvCacheType kv_cache_type = KvCacheType::kF32;
  // KV cache positions; 0: the model's training context, at most model::kDefaultContextLength.
  std::uint32_t context_length = 0;
};

// What select_preparation admitted (header-only facts + load options).
struct FamilyPreparation {
  model::ModelAdmission admission;
  KvCacheType kv_cache_type = KvCacheType::kF32;
};

// The input of prepare_model: the admitted preparation and the source its weights come from.
struct FamilyModelConfig {
  FamilyPreparation selected;
  std::shared_ptr<const checkpoint::CheckpointSource> source;
  SessionCapabilities admitted;
};

// The materialized model of whichever family, and the session geometry chosen at load.
template <typename B>
struct FamilyModel {
  std::shared_ptr<const model::AnyModel<B>> model;
  model::ModelGeometry geometry;
  std::uint32_t max_positions = 0;
  KvCacheType kv_cache_type = KvCacheType::kF32;
};

template <model::ModelBackend B>
[[nodiscard]] Result<FamilyPreparation> select_family_preparation(
    std::string_view who, const ArtifactInspection& inspection, const LoadOptions& options) {
  EREDU_TRY(model::ModelAdmission admitted,
            model::admit_model(who, inspection, options.context_length,
                               [](const checkpoint::DerivedWeightRecipe& recipe,
                                  const checkpoint::CheckpointSource& source) -> Result<void> {
                                 auto checked = B::preflight_recipe(recipe, source);
                                 if (!checked) return fail(to_eredu_error(checked.error()));
                                 return ok();
                               }));
  if (auto missing = require_operators(admitted.required_operators, B::operator_capabilities);
      !missing) {
    return fail(Error(missing.error().code(), std::string(who) + ": the " +
                                                  inspection.architecture + " model needs " +
                                                  missing.error().message())
                    .with_subject(missing.error().subject()));
  }
  return FamilyPreparation{std::move(admitted), options.kv_cache_type};
}

[[nodiscard]] inline Result<FamilyModelConfig> family_model_config(std::string_view who,
                                                                   const ModelPreparationPlan& plan,
                                                                   FamilyPreparation&& selected) {
  if (plan.inspection.source == nullptr) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(who) + ": the plan carries no checkpoint source");
  }
  return FamilyModelConfig{std::move(selected), plan.inspection.source,
                           plan.admitted_session_capabilities};
}

template <model::ModelBackend B>
[[nodiscard]] Result<PreparedModel<FamilyModel<B>>> prepare_family_model(
    const B& backend, std::string_view who, FamilyModelConfig&& config) {
  if (config.source == nullptr) {
    return fail(ErrorCode::kInvalidArgument, std::string(who) + ": no checkpoint source");
  }
  const model::ModelAdmission& admitted = config.selected.admission;
  EREDU_TRY(model::AnyModel<B> declared, model::declare_model<B>(admitted));
  std::vector<WeightBinding> bindings;
  bindings.reserve(admitted.schema.size());
  for (const model::ParameterSchema& p : admitted.schema) {
    if (!p.alias_of) {
      auto checked = B::preflight_recipe(p.recipe, *config.source);
      if (!checked) return fail(to_eredu_error(checked.error()).with_subject(p.id));
    }
    bindings.push_back(
        WeightBinding{p.id, p.recipe, p.alias_of, p.tensor_class == model::TensorClass::kTable});
  }
  EREDU_TRY(MaterializedUnit<B> unit,
            materialize_bindings<B>(*config.source, bindings,
                                    backend.materialization_context_for_load()));
  EREDU_TRY_VOID(
      std::visit([&](auto& m) { return bind_materialized_unit<B>(m, std::move(unit)); }, declared));
  FamilyModel<B> result;
  result.model = std::make_shared<const model::AnyModel<B>>(std::move(declared));
  result.geometry = admitted.geometry;
  result.max_positions = admitted.max_positions;
  result.kv_cache_type = config.selected.kv_cache_type;
  return PreparedModel<FamilyModel<B>>(std::move(result), config.admitted);
}

}  // namespace eredu::runtime
