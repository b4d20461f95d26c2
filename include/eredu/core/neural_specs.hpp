#pragma once
// The small, backend-neutral parameter blocks of the NeuralBackend core operators. An architecture
// fills them from its normalized config; a backend reads them. Activations are row-major
// [tokens, features] matrices; heads are contiguous slices of the feature dimension.

#include <cstdint>
#include <limits>
#include <string>

#include "eredu/core/result.hpp"

namespace eredu {

// y = x / sqrt(mean(x^2) + epsilon) * weight, per row.
struct RmsNormSpec {
  float epsilon = 1e-5f;
};

// How a rotary embedding pairs the dimensions of a head.
enum class RotaryLayout : std::uint8_t {
  kInterleaved,  // pairs (0,1), (2,3), ... (llama.cpp "normal" / original LLaMA)
  kHalfSplit,    // pairs (i, i + rotated_dims/2) (GPT-NeoX / Hugging Face "rotate_half")
};

// Rotary position embedding over `heads` heads of `head_dim`, rotating the first `rotated_dims`.
struct RotarySpec {
  std::uint32_t heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t rotated_dims = 0;  // even, <= head_dim
  float frequency_base = 10000.0f;
  float frequency_scale = 1.0f;  // linear position scaling: 1 / (rope scaling factor)
  RotaryLayout layout = RotaryLayout::kInterleaved;

  [[nodiscard]] Result<void> validate() const {
    if (heads == 0 || head_dim == 0) {
      return fail(ErrorCode::kInvalidArgument, "rotary: heads and head_dim must be positive");
    }
    if (rotated_dims == 0 || rotated_dims > head_dim || rotated_dims % 2 != 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "rotary: rotated_dims must be even, positive and at most head_dim (" +
                      std::to_string(rotated_dims) + " of " + std::to_string(head_dim) + ")");
    }
    if (!(frequency_scale > 0.0f)) {
      return fail(ErrorCode::kInvalidArgument, "rotary: frequency_scale must be positive");
    }
    if (!(frequency_base > 0.0f)) {
      return fail(ErrorCode::kInvalidArgument, "rotary: frequency_base must be positive");
    }
    return ok();
  }
};

// The geometry of a session's KV cache: per layer, `max_positions` rows of kv_heads * head_dim.
struct KvCacheSpec {
  std::uint32_t layers = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t max_positions = 0;

  // Elements of K (or of V) over all layers; fails on zero dimensions or on overflow.
  [[nodiscard]] Result<std::uint64_t> elements_per_tensor() const {
    if (layers == 0 || kv_heads == 0 || head_dim == 0 || max_positions == 0) {
      return fail(ErrorCode::kInvalidArgument, "kv cache: every dimension must be positive");
    }
    std::uint64_t total = layers;
    for (std::uint64_t factor :
         {std::uint64_t{kv_heads}, std::uint64_t{head_dim}, std::uint64_t{max_positions}}) {
      if (total > std::numeric_limits<std::uint64_t>::max() / factor) {
        return fail(ErrorCode::kOverflow, "kv cache: element count overflows 64 bits");
      }
      total *= factor;
    }
    return total;
  }
};

// Causal attention of `heads` query heads over `kv_heads` key/value heads (grouped-query when
// kv_heads < heads) for one layer, scores scaled by `scale` (usually 1/sqrt(head_dim)).
struct AttentionSpec {
  std::uint32_t layer = 0;
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  float scale = 1.0f;

  [[nodiscard]] Result<void> validate() const {
    if (heads == 0 || kv_heads == 0 || head_dim == 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "attention: heads, kv_heads and head_dim must be positive");
    }
    if (heads % kv_heads != 0) {
      return fail(ErrorCode::kInvalidArgument, "attention: heads (" + std::to_string(heads) +
                                                   ") must be a multiple of kv_heads (" +
                                                   std::to_string(kv_heads) + ")");
    }
    return ok();
  }
};

}  // namespace eredu
