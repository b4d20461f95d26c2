#pragma once
// Optional operators and the constexpr set a NeuralBackend declares (`operator_capabilities`).
//
// The core operator set of NeuralBackend (embedding, linear, RMS norm, rotary, attention, SwiGLU,
// add, logits) is required of every backend. Anything beyond it is an optional operator: a backend
// lists the ones it implements in a `static constexpr OperatorCapabilities`, and an architecture
// checks its requirements against that set (`require_operators`) before it builds anything or
// reads a byte of payload. The list mirrors upstream eredu-nn's OPERATOR_CAPABILITIES.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "eredu/core/result.hpp"

namespace eredu {

enum class OptionalOperator : std::uint8_t {
  kApproximateGelu,
  kSigmoid,
  kSoftplus,
  kExp,
  kGatedGroupedRmsNorm,
  kL2Norm,
  kWeightlessRmsNorm,
  kSlidingWindowAttention,
  kSegmentedAttention,
  kIndexedAttention,
  kPooledAttention,
  kPooledPositionSelection,
  kPooledMaskGather,
  kAttentionSinks,
  kRelativeAttention,
  kGatedDeltaScan,
  kSelectiveStateSpaceScan,
  kExpertRouting,
  kGroupedLinear,
  kTensorParallelSum,
  // Beyond upstream's list: what the llama/qwen decoder families need (optional_operators.hpp
  // gives their signatures).
  kBiasAdd,                 // add_bias: x + a bias vector broadcast over the rows
  kHeadRmsNorm,             // head_rms_norm: RMS norm of every head slice (Qwen3 q/k norms)
  kRotaryFrequencyFactors,  // rotary_scaled: rotary angles divided by per-pair factors
  // A fusion, never required: families call it where present and take one linear per weight
  // where not, with the same values either way.
  kSharedInputLinear,  // linear_shared_input: several linears of one input, read once
};
inline constexpr std::size_t kOptionalOperatorCount = 24;

constexpr std::string_view to_string(OptionalOperator op) noexcept {
  switch (op) {
    case OptionalOperator::kApproximateGelu:
      return "approximate_gelu";
    case OptionalOperator::kSigmoid:
      return "sigmoid";
    case OptionalOperator::kSoftplus:
      return "softplus";
    case OptionalOperator::kExp:
      return "exp";
    case OptionalOperator::kGatedGroupedRmsNorm:
      return "gated_grouped_rms_norm";
    case OptionalOperator::kL2Norm:
      return "l2_norm";
    case OptionalOperator::kWeightlessRmsNorm:
      return "weightless_rms_norm";
    case OptionalOperator::kSlidingWindowAttention:
      return "sliding_window_attention";
    case OptionalOperator::kSegmentedAttention:
      return "segmented_attention";
    case OptionalOperator::kIndexedAttention:
      return "indexed_attention";
    case OptionalOperator::kPooledAttention:
      return "pooled_attention";
    case OptionalOperator::kPooledPositionSelection:
      return "pooled_position_selection";
    case OptionalOperator::kPooledMaskGather:
      return "pooled_mask_gather";
    case OptionalOperator::kAttentionSinks:
      return "attention_sinks";
    case OptionalOperator::kRelativeAttention:
      return "relative_attention";
    case OptionalOperator::kGatedDeltaScan:
      return "gated_delta_scan";
    case OptionalOperator::kSelectiveStateSpaceScan:
      return "selective_state_space_scan";
    case OptionalOperator::kExpertRouting:
      return "expert_routing";
    case OptionalOperator::kGroupedLinear:
      return "grouped_linear";
    case OptionalOperator::kTensorParallelSum:
      return "tensor_parallel_sum";
    case OptionalOperator::kBiasAdd:
      return "bias_add";
    case OptionalOperator::kHeadRmsNorm:
      return "head_rms_norm";
    case OptionalOperator::kRotaryFrequencyFactors:
      return "rotary_frequency_factors";
    case OptionalOperator::kSharedInputLinear:
      return "shared_input_linear";
  }
  return "unknown_operator";
}

// A set of optional operators, usable in constant expressions (std::bitset's mutators are not
// constexpr in C++20). Empty by default: fail closed.
class OperatorCapabilities {
 public:
  constexpr OperatorCapabilities() noexcept = default;
  constexpr OperatorCapabilities(std::initializer_list<OptionalOperator> ops) noexcept {
    for (OptionalOperator op : ops)
      bits_ |= bit(op);
  }

  [[nodiscard]] constexpr bool has(OptionalOperator op) const noexcept {
    return (bits_ & bit(op)) != 0;
  }
  [[nodiscard]] constexpr OperatorCapabilities with(OptionalOperator op) const noexcept {
    OperatorCapabilities out = *this;
    out.bits_ |= bit(op);
    return out;
  }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
  [[nodiscard]] constexpr std::uint32_t bits() const noexcept { return bits_; }

  // The first operator (in enum order) in `*this` that `available` lacks.
  [[nodiscard]] constexpr std::optional<OptionalOperator> first_missing(
      const OperatorCapabilities& available) const noexcept {
    for (std::size_t i = 0; i < kOptionalOperatorCount; ++i) {
      const auto op = static_cast<OptionalOperator>(i);
      if (has(op) && !available.has(op)) return op;
    }
    return std::nullopt;
  }

  friend constexpr bool operator==(OperatorCapabilities, OperatorCapabilities) noexcept = default;

 private:
  static constexpr std::uint32_t bit(OptionalOperator op) noexcept {
    return std::uint32_t{1} << static_cast<unsigned>(op);
  }
  std::uint32_t bits_ = 0;
  static_assert(kOptionalOperatorCount <= 32, "the set is one 32-bit word");
};

// Fails with kCapabilityMissing naming the first operator of `required` that `available` lacks.
[[nodiscard]] inline Result<void> require_operators(const OperatorCapabilities& required,
                                                    const OperatorCapabilities& available) {
  if (auto missing = required.first_missing(available)) {
    const std::string name(to_string(*missing));
    return fail(Error(ErrorCode::kCapabilityMissing,
                      "operator '" + name + "' is required but the backend does not provide it")
                    .with_subject(name));
  }
  return ok();
}

}  // namespace eredu
