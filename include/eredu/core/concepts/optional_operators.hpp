#pragma once
// The signatures of the optional operators a NeuralBackend may provide (operator_capabilities.hpp
// lists them). A backend that declares one in `operator_capabilities` must have its member; an
// architecture calls one only under `if constexpr (provides<B, op>)` after `require_operators`
// said it is there, so a backend without it still compiles every family and fails closed, with
// kCapabilityMissing naming the operator, only for the models that need it.
//
//   add_bias(const tensor& x, const weight& bias)                      kBiasAdd
//       y[t][j] = x[t][j] + bias[j]; bias is a vector of x's width
//   head_rms_norm(const tensor& x, const weight& gain, const RmsNormSpec&)  kHeadRmsNorm
//       RMS norm of every gain-sized slice of each row (one per head), each scaled by gain
//   rotary_scaled(const tensor& x, const RotarySpec&, std::uint32_t first_position,
//                 const weight& factors)                               kRotaryFrequencyFactors
//       rotary, with pair i's angle divided by factors[i] (rotated_dims / 2 values)
//   linear_shared_input(const tensor& x, std::span<const weight* const> ws)  kSharedInputLinear
//       -> Result<std::vector<tensor>, error>: {linear(x, *ws[0]), linear(x, *ws[1]), ...} with
//       linear's values, x read once for all of them (Q/K/V, gate/up). A fusion, never required:
//       where it is absent a family takes one linear per weight.

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/concepts/neural_backend.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/operator_capabilities.hpp"

namespace eredu::optional_operator_requirements {

using neural_backend_requirements::returns_tensor;

template <typename B>
concept has_add_bias = requires(const B& b, const typename B::tensor& x,
                                const typename B::weight& bias) {
  { b.add_bias(x, bias) } -> returns_tensor<B>;
};
template <typename B>
concept has_head_rms_norm = requires(const B& b, const typename B::tensor& x,
                                     const typename B::weight& gain, const RmsNormSpec& spec) {
  { b.head_rms_norm(x, gain, spec) } -> returns_tensor<B>;
};
template <typename B>
concept has_rotary_scaled = requires(const B& b, const typename B::tensor& x,
                                     const RotarySpec& spec, std::uint32_t first_position,
                                     const typename B::weight& factors) {
  { b.rotary_scaled(x, spec, first_position, factors) } -> returns_tensor<B>;
};

template <typename B>
concept has_linear_shared_input = requires(const B& b, const typename B::tensor& x,
                                           std::span<const typename B::weight* const> ws) {
  {
    b.linear_shared_input(x, ws)
    } -> std::same_as<Result<std::vector<typename B::tensor>, typename B::error>>;
};

// A declared operator has its member (an undeclared one may exist; it is then simply unused).
template <typename B, OptionalOperator op, bool has_member>
concept declared_implies_member = !B::operator_capabilities.has(op) || has_member;

}  // namespace eredu::optional_operator_requirements

// clang-format off
#define EREDU_OPTIONAL_OPERATOR_REQUIREMENTS(X)                                                    \
  X((::eredu::optional_operator_requirements::declared_implies_member<B,                          \
        ::eredu::OptionalOperator::kBiasAdd,                                                       \
        ::eredu::optional_operator_requirements::has_add_bias<B>>),                               \
    "NeuralBackend declares bias_add but lacks add_bias(const tensor&, const weight&) const -> "  \
    "Result<tensor, error>")                                                                      \
  X((::eredu::optional_operator_requirements::declared_implies_member<B,                          \
        ::eredu::OptionalOperator::kHeadRmsNorm,                                                   \
        ::eredu::optional_operator_requirements::has_head_rms_norm<B>>),                          \
    "NeuralBackend declares head_rms_norm but lacks head_rms_norm(const tensor&, const weight&, " \
    "const RmsNormSpec&) const -> Result<tensor, error>")                                         \
  X((::eredu::optional_operator_requirements::declared_implies_member<B,                          \
        ::eredu::OptionalOperator::kRotaryFrequencyFactors,                                        \
        ::eredu::optional_operator_requirements::has_rotary_scaled<B>>),                          \
    "NeuralBackend declares rotary_frequency_factors but lacks rotary_scaled(const tensor&, "     \
    "const RotarySpec&, std::uint32_t, const weight&) const -> Result<tensor, error>")             \
  X((::eredu::optional_operator_requirements::declared_implies_member<B,                          \
        ::eredu::OptionalOperator::kSharedInputLinear,                                             \
        ::eredu::optional_operator_requirements::has_linear_shared_input<B>>),                    \
    "NeuralBackend declares shared_input_linear but lacks linear_shared_input(const tensor&, "    \
    "std::span<const weight* const>) const -> Result<std::vector<tensor>, error>")
// clang-format on

namespace eredu {

// B declares `op` and has its member: an architecture may call it (under if constexpr).
template <typename B, OptionalOperator op>
inline constexpr bool provides = NeuralBackend<B>&& B::operator_capabilities.has(op) &&
                                 ((op == OptionalOperator::kBiasAdd &&
                                   optional_operator_requirements::has_add_bias<B>) ||
                                  (op == OptionalOperator::kHeadRmsNorm &&
                                   optional_operator_requirements::has_head_rms_norm<B>) ||
                                  (op == OptionalOperator::kRotaryFrequencyFactors &&
                                   optional_operator_requirements::has_rotary_scaled<B>) ||
                                  (op == OptionalOperator::kSharedInputLinear &&
                                   optional_operator_requirements::has_linear_shared_input<B>));

template <typename B>
concept OptionalOperatorsConsistent =
    NeuralBackend<B> EREDU_OPTIONAL_OPERATOR_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename B>
constexpr std::string_view optional_operators_unmet() noexcept {
  EREDU_OPTIONAL_OPERATOR_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename B>
consteval bool optional_operators() {
  using diagnosed_type [[maybe_unused]] = B;
  EREDU_OPTIONAL_OPERATOR_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
