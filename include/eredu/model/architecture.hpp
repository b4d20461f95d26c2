#pragma once
// Architecture<F>: a model family, the unit the registry (registry.hpp) is made of. A family is one
// folder, include/eredu/model/<family>/ + src/model/<family>/, and one line in the registry;
// nothing under backends/ names it.
//
//   F::name                                  the GGUF `general.architecture` it reads
//   F::config                                its normalized hyper-parameters
//   F::read_config(gguf, catalog)           -> Result<config>   (header-only: metadata + catalog)
//   F::schema(config, catalog)              -> Result<std::vector<ParameterSchema>>
//   F::required_operators(config)           -> OperatorCapabilities   (optional operators used)
//   F::geometry(config)                     -> ModelGeometry   (KV cache, vocabulary, context)
//   F::model<B>                              its parameter slots and forward pass on backend B
//                                            (ArchitectureModel<F::model<B>, B>)

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/geometry.hpp"
#include "eredu/model/model_backend.hpp"
#include "eredu/model/parameter_schema.hpp"

namespace eredu::checkpoint {
class GgufContents;
class TensorCatalog;
}  // namespace eredu::checkpoint

namespace eredu::model {

template <typename F>
concept Architecture = requires(const checkpoint::GgufContents& gguf,
                                const checkpoint::TensorCatalog& catalog,
                                const typename F::config& config) {
  { F::name } -> std::convertible_to<std::string_view>;
  { F::read_config(gguf, catalog) } -> std::same_as<Result<typename F::config>>;
  { F::schema(config, catalog) } -> std::same_as<Result<std::vector<ParameterSchema>>>;
  { F::required_operators(config) } -> std::same_as<OperatorCapabilities>;
  { F::geometry(config) } -> std::same_as<ModelGeometry>;
};

// A family's model on backend B: declared from its config and schema, bound by the generic
// binding (visit_parameters), run by the generic session (forward).
template <typename M, typename B>
concept ArchitectureModel = ModelBackend<B> &&
    requires(const typename M::config_type& config, const std::vector<ParameterSchema>& schema,
             M& m, const M& cm, const B& b, typename B::kv_cache& cache,
             std::span<const std::uint32_t> tokens, std::uint32_t position) {
  { M::declare(config, schema) } -> std::same_as<Result<M>>;
  { cm.geometry() } -> std::same_as<ModelGeometry>;
  { cm.forward(b, cache, tokens, position) } -> std::same_as<Result<typename B::tensor>>;
};

}  // namespace eredu::model
