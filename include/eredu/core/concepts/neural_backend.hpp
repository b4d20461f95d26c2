#pragma once
// NeuralBackend<B>: the operator set an architecture's forward pass is written against, once, as a
// template over B. Calls go straight to B's members (static dispatch), never through a virtual.
//
// Associated types:
//   tensor    an activation: a row-major [tokens, features] matrix owned by the backend
//   weight    a materialized parameter in its checkpoint encoding (packed blocks stay packed)
//   kv_cache  one session's key/value cache (KvCacheSpec geometry)
//   error     the backend's error
// Constant:
//   static constexpr OperatorCapabilities operator_capabilities  the optional operators provided
// Core operators (const members; every one returns Result<..., error>):
//   embedding(const weight& table, std::span<const std::uint32_t> tokens)        -> tensor
//   linear(const tensor& x, const weight& w)              x[n, in] * w[out, in]^T -> tensor [n,
//   out] rms_norm(const tensor& x, const weight& gain, const RmsNormSpec&)            -> tensor
//   rotary(const tensor& x, const RotarySpec&, std::uint32_t first_position)     -> tensor
//   create_kv_cache(const KvCacheSpec&)                                          -> kv_cache
//   attention(const tensor& q, const tensor& k, const tensor& v, kv_cache&,
//             const AttentionSpec&, std::uint32_t first_position)                -> tensor
//       appends k and v at [first_position, first_position + n) of layer spec.layer, then attends
//       causally over [0, first_position + n)
//   swiglu(const tensor& gate, const tensor& up)          silu(gate) * up         -> tensor
//   add(const tensor& a, const tensor& b)                 residual add            -> tensor
//   logits(const tensor& hidden, const weight& output)    the LAST row's logits   -> tensor [1,
//   vocab]
// An architecture checks its optional operators with
// `require_operators(required, B::operator_capabilities)` before it builds anything.

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "eredu/core/concepts/backend_error_type.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/result.hpp"

namespace eredu::neural_backend_requirements {

template <typename B>
concept has_tensor = requires {
  typename B::tensor;
};
template <typename B>
concept has_weight = requires {
  typename B::weight;
};
template <typename B>
concept has_kv_cache = requires {
  typename B::kv_cache;
};
template <typename B>
concept has_error = requires {
  typename B::error;
};
template <typename B>
concept error_is_backend_error = has_error<B> && BackendErrorType<typename B::error>;
template <typename B>
concept tensor_is_movable = has_tensor<B> && std::is_object_v<typename B::tensor> &&
    std::move_constructible<typename B::tensor>;
// A constant expression of type OperatorCapabilities (the integral_constant forces constexpr).
template <typename B>
concept has_operator_capabilities = requires {
  { B::operator_capabilities } -> std::same_as<const OperatorCapabilities&>;
  typename std::integral_constant<std::uint32_t, B::operator_capabilities.bits()>;
};

// Shorthand for "returns Result<tensor, error>".
template <typename R, typename B>
concept returns_tensor = std::same_as<R, Result<typename B::tensor, typename B::error>>;

template <typename B>
concept has_embedding = tensor_is_movable<B> && has_weight<B> && has_error<B> &&
    requires(const B& b, const typename B::weight& table, std::span<const std::uint32_t> tokens) {
  { b.embedding(table, tokens) } -> returns_tensor<B>;
};
template <typename B>
concept has_linear = tensor_is_movable<B> && has_weight<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& x, const typename B::weight& w) {
  { b.linear(x, w) } -> returns_tensor<B>;
};
template <typename B>
concept has_rms_norm = tensor_is_movable<B> && has_weight<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& x, const typename B::weight& gain,
             const RmsNormSpec& spec) {
  { b.rms_norm(x, gain, spec) } -> returns_tensor<B>;
};
template <typename B>
concept has_rotary = tensor_is_movable<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& x, const RotarySpec& spec,
             std::uint32_t first_position) {
  { b.rotary(x, spec, first_position) } -> returns_tensor<B>;
};
template <typename B>
concept has_create_kv_cache = has_kv_cache<B> && has_error<B> &&
    requires(const B& b, const KvCacheSpec& spec) {
  { b.create_kv_cache(spec) } -> std::same_as<Result<typename B::kv_cache, typename B::error>>;
};
template <typename B>
concept has_attention = tensor_is_movable<B> && has_kv_cache<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& q, const typename B::tensor& k,
             const typename B::tensor& v, typename B::kv_cache& cache, const AttentionSpec& spec,
             std::uint32_t first_position) {
  { b.attention(q, k, v, cache, spec, first_position) } -> returns_tensor<B>;
};
template <typename B>
concept has_swiglu = tensor_is_movable<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& gate, const typename B::tensor& up) {
  { b.swiglu(gate, up) } -> returns_tensor<B>;
};
template <typename B>
concept has_add = tensor_is_movable<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& x, const typename B::tensor& y) {
  { b.add(x, y) } -> returns_tensor<B>;
};
template <typename B>
concept has_logits = tensor_is_movable<B> && has_weight<B> && has_error<B> &&
    requires(const B& b, const typename B::tensor& hidden, const typename B::weight& output) {
  { b.logits(hidden, output) } -> returns_tensor<B>;
};

}  // namespace eredu::neural_backend_requirements

// clang-format off
#define EREDU_NEURAL_BACKEND_REQUIREMENTS(X)                                                     \
  X(::eredu::neural_backend_requirements::has_tensor<B>,                                          \
    "NeuralBackend: missing associated type tensor")                                              \
  X(::eredu::neural_backend_requirements::has_weight<B>,                                          \
    "NeuralBackend: missing associated type weight")                                              \
  X(::eredu::neural_backend_requirements::has_kv_cache<B>,                                        \
    "NeuralBackend: missing associated type kv_cache")                                            \
  X(::eredu::neural_backend_requirements::has_error<B>,                                           \
    "NeuralBackend: missing associated type error")                                               \
  X(::eredu::neural_backend_requirements::error_is_backend_error<B>,                              \
    "NeuralBackend: error must be move-constructible and have what() -> std::string")             \
  X(::eredu::neural_backend_requirements::tensor_is_movable<B>,                                   \
    "NeuralBackend: tensor must be a move-constructible object type")                             \
  X(::eredu::neural_backend_requirements::has_operator_capabilities<B>,                           \
    "NeuralBackend: missing static constexpr OperatorCapabilities operator_capabilities")         \
  X(::eredu::neural_backend_requirements::has_embedding<B>,                                       \
    "NeuralBackend: missing embedding(const weight&, std::span<const std::uint32_t>) const -> "   \
    "Result<tensor, error>")                                                                      \
  X(::eredu::neural_backend_requirements::has_linear<B>,                                          \
    "NeuralBackend: missing linear(const tensor&, const weight&) const -> Result<tensor, error>") \
  X(::eredu::neural_backend_requirements::has_rms_norm<B>,                                        \
    "NeuralBackend: missing rms_norm(const tensor&, const weight&, const RmsNormSpec&) const -> " \
    "Result<tensor, error>")                                                                      \
  X(::eredu::neural_backend_requirements::has_rotary<B>,                                          \
    "NeuralBackend: missing rotary(const tensor&, const RotarySpec&, std::uint32_t) const -> "    \
    "Result<tensor, error>")                                                                      \
  X(::eredu::neural_backend_requirements::has_create_kv_cache<B>,                                 \
    "NeuralBackend: missing create_kv_cache(const KvCacheSpec&) const -> "                        \
    "Result<kv_cache, error>")                                                                    \
  X(::eredu::neural_backend_requirements::has_attention<B>,                                       \
    "NeuralBackend: missing attention(const tensor& q, const tensor& k, const tensor& v, "        \
    "kv_cache&, const AttentionSpec&, std::uint32_t) const -> Result<tensor, error>")             \
  X(::eredu::neural_backend_requirements::has_swiglu<B>,                                          \
    "NeuralBackend: missing swiglu(const tensor&, const tensor&) const -> Result<tensor, error>") \
  X(::eredu::neural_backend_requirements::has_add<B>,                                             \
    "NeuralBackend: missing add(const tensor&, const tensor&) const -> Result<tensor, error>")    \
  X(::eredu::neural_backend_requirements::has_logits<B>,                                          \
    "NeuralBackend: missing logits(const tensor&, const weight&) const -> Result<tensor, error>")
// clang-format on

namespace eredu {

template <typename B>
concept NeuralBackend =
    true EREDU_NEURAL_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

// Fails with kCapabilityMissing naming the first optional operator in `required` that B lacks.
template <NeuralBackend B>
[[nodiscard]] Result<void> require_operators(const OperatorCapabilities& required) {
  return require_operators(required, B::operator_capabilities);
}

namespace diagnose {
template <typename B>
constexpr std::string_view neural_backend_unmet() noexcept {
  EREDU_NEURAL_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename B>
consteval bool neural_backend() {
  using diagnosed_type [[maybe_unused]] = B;
  EREDU_NEURAL_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
