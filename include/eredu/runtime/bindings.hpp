#pragma once
// The generic, all-or-nothing weight binding of one unit (a module's parameters), written once
// over ParameterBackend:
//
//   materialize_bindings<B>(source, bindings, context)  -> MaterializedUnit<B>
//       every owner: B::materialize_recipe then B::finish_materialization (the lease is released
//       as soon as its weight is realized: at most one lease is open at a time); every alias:
//       B::share_materialized_weight of its owner (no re-read). Nothing is bound yet.
//   bind_materialized_unit<B>(module, unit)
//       pass 1: every parameter the module visits must have a weight (missing -> kInvalidModel
//       naming it) that B::validate_bind accepts; a weight no parameter claims is an error too;
//       pass 2: B::bind (noexcept) for all. On any error nothing was published.
//
// A module exposes `visit_parameters(f)` calling `f(std::string_view id, B::parameter&)` for each
// parameter slot. These templates depend only on core and checkpoint, so a backend's
// prepare_model may use them.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "eredu/checkpoint/recipe.hpp"
#include "eredu/checkpoint/source.hpp"
#include "eredu/core/concepts/parameter_backend.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/result.hpp"

namespace eredu::runtime {

// One weight of a unit: an owner built from a recipe, or an alias sharing an owner's weight.
struct WeightBinding {
  std::string target;
  checkpoint::DerivedWeightRecipe recipe;  // owners only
  std::optional<std::string> alias_of;     // aliases only: the owner's target
  bool rows_only = false;                  // read a row at a time only (model::TensorClass::kTable)
};

// The context a binding's weight is materialized with: the load's, plus, where the backend's
// context has a `rows_only` member (opt-in), whether the weight is only read a row at a time (so
// the backend may skip layouts it makes for products).
template <typename Context>
[[nodiscard]] Context binding_context(const Context& load, const WeightBinding& binding) {
  Context context = load;
  if constexpr (requires { context.rows_only = true; }) context.rows_only = binding.rows_only;
  return context;
}

template <typename B>
struct MaterializedUnit {
  std::vector<std::pair<std::string, typename B::materialized_weight>> weights;
};

// Converts a backend error into an eredu::Error (identity when it already is one).
template <typename E>
[[nodiscard]] Error to_eredu_error(E&& error) {
  if constexpr (std::is_convertible_v<E&&, Error>) {
    return Error(std::forward<E>(error));
  } else {
    return Error(ErrorCode::kBackend, std::string(error.what()));
  }
}

template <ParameterBackend B>
[[nodiscard]] Result<MaterializedUnit<B>> materialize_bindings(
    const checkpoint::CheckpointSource& source, std::span<const WeightBinding> bindings,
    const typename B::materialization_context& context) {
  MaterializedUnit<B> unit;
  std::unordered_map<std::string, std::size_t> index;
  unit.weights.reserve(bindings.size());
  for (const WeightBinding& binding : bindings) {
    if (index.contains(binding.target)) {
      return fail(Error(ErrorCode::kDuplicate, "weight '" + binding.target + "' is bound twice")
                      .with_subject(binding.target));
    }
    if (binding.alias_of) continue;
    auto in_flight =
        B::materialize_recipe(binding.recipe, source, binding_context(context, binding));
    if (!in_flight) {
      return fail(to_eredu_error(std::move(in_flight).error()).with_subject(binding.target));
    }
    auto weight = B::finish_materialization(std::move(in_flight).value());
    if (!weight)
      return fail(to_eredu_error(std::move(weight).error()).with_subject(binding.target));
    index.emplace(binding.target, unit.weights.size());
    unit.weights.emplace_back(binding.target, std::move(weight).value());
  }
  for (const WeightBinding& binding : bindings) {
    if (!binding.alias_of) continue;
    auto owner = index.find(*binding.alias_of);
    if (owner == index.end()) {
      return fail(Error(ErrorCode::kInvalidModel, "weight '" + binding.target + "' aliases '" +
                                                      *binding.alias_of +
                                                      "', which is not an owner of this unit")
                      .with_subject(binding.target));
    }
    auto shared = B::share_materialized_weight(unit.weights[owner->second].second);
    if (!shared)
      return fail(to_eredu_error(std::move(shared).error()).with_subject(binding.target));
    index.emplace(binding.target, unit.weights.size());
    unit.weights.emplace_back(binding.target, std::move(shared).value());
  }
  return unit;
}

template <ParameterBackend B, typename Module>
[[nodiscard]] Result<void> bind_materialized_unit(Module& module, MaterializedUnit<B>&& unit) {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < unit.weights.size(); ++i) {
    if (!index.emplace(unit.weights[i].first, i).second) {
      return fail(Error(ErrorCode::kDuplicate,
                        "materialized unit holds '" + unit.weights[i].first + "' twice")
                      .with_subject(unit.weights[i].first));
    }
  }
  // Pass 1: validate everything, publish nothing.
  std::vector<std::pair<typename B::parameter*, std::size_t>> plan;
  std::optional<Error> failure;
  module.visit_parameters([&](std::string_view id, typename B::parameter& parameter) {
    if (failure) return;
    auto found = index.find(id);
    if (found == index.end()) {
      failure =
          Error(ErrorCode::kInvalidModel,
                "parameter '" + std::string(id) + "' has no materialized weight (missing binding)")
              .with_subject(std::string(id));
      return;
    }
    auto valid = B::validate_bind(parameter, unit.weights[found->second].second);
    if (!valid) {
      failure = to_eredu_error(std::move(valid).error()).with_subject(std::string(id));
      return;
    }
    plan.emplace_back(&parameter, found->second);
  });
  if (failure) return fail(std::move(*failure));
  if (plan.size() != unit.weights.size()) {
    std::vector<bool> claimed(unit.weights.size(), false);
    for (const auto& entry : plan)
      claimed[entry.second] = true;
    for (std::size_t i = 0; i < claimed.size(); ++i) {
      if (!claimed[i]) {
        return fail(
            Error(ErrorCode::kInvalidModel,
                  "materialized weight '" + unit.weights[i].first + "' is claimed by no parameter")
                .with_subject(unit.weights[i].first));
      }
    }
  }
  // Pass 2: publish all (bind cannot fail).
  for (auto& [parameter, i] : plan)
    B::bind(*parameter, std::move(unit.weights[i].second));
  return ok();
}

}  // namespace eredu::runtime
