#pragma once
// Argument types shared by the scalar reference kernels (reference.hpp) and the dispatched,
// threaded kernels (kernels.hpp). Layouts are row-major, outermost first.

#include <cstddef>
#include <cstdint>

#include "eredu/core/dtype.hpp"

namespace eredu::cpu {

// A weight matrix exactly as stored in the checkpoint: `rows` rows (n_out) of `cols` elements
// (n_in), each row `cols / block_elements` consecutive packed blocks of `dtype` (F32, F16 and BF16
// are blocks of one element). Kernels read the blocks in place; nothing is densified.
// `row_groups`, where the table lays the encoding out so (KernelTable::row_group_bytes), is the
// same weight packed by KernelTable::pack_row_groups: its products then read rows [0, rows / 16 *
// 16) from there and only the last rows % 16 as stored, with the same values.
struct MatrixView {
  DType dtype = DType::kF32;
  const void* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  const void* row_groups = nullptr;
};

// Bytes of one packed row (core's definition, shared with every backend).
using ::eredu::packed_row_bytes;

// Rotary embedding variants. kNormal (GGML_ROPE_TYPE_NORMAL): the pairs are consecutive,
// (x[2i], x[2i+1]). kNeox (GGML_ROPE_TYPE_NEOX): the pairs are (x[i], x[i + n_rot/2]).
// In both, pair i turns by theta_i = pos * freq_scale * freq_base^(-2i / n_rot); dimensions at or
// beyond n_rot are left unchanged.
enum class RopeMode { kNormal, kNeox };

// With `freq_factors` (n_rot / 2 values, a checkpoint's rotary frequency factors), pair i turns by
// theta_i / freq_factors[i] instead.
struct RopeParams {
  std::size_t n_rot = 0;  // rotated dimensions per head (even, <= head_dim)
  float freq_base = 10000.0F;
  float freq_scale = 1.0F;  // linear position scaling: 1 / (rope scaling factor)
  RopeMode mode = RopeMode::kNormal;
  const float* freq_factors = nullptr;  // optional, n_rot / 2 divisors of the angles
};

// How a KV cache's keys are laid out (values are always rows). With row = n_head_kv * head_dim:
//   kRows      element e of position j at j * row + e (position-major rows);
//   kBlocks16  positions in blocks of 16, each block's elements side by side: element e of
//              position j at (j / 16 * row + e) * 16 + j % 16, so one vector load is element e of
//              16 consecutive positions (a cache of n positions holds n rounded up to 16).
// The AVX2 and AVX-512 attention read a decoded token's keys 8 or 16 positions at a time, one
// per lane: kBlocks16 spares them a transpose per 16 keys (KernelTable::key_layout says which a
// table reads fastest). The values of the attention are the same for both, bit for bit.
enum class KeyLayout { kRows, kBlocks16 };
inline constexpr std::size_t kKeyBlockPositions = 16;
// Where element e of position j is, counted in elements, for rows of `row` elements.
[[nodiscard]] constexpr std::size_t key_offset(KeyLayout layout, std::size_t j, std::size_t e,
                                               std::size_t row) noexcept {
  if (layout == KeyLayout::kRows) return j * row + e;
  return (j / kKeyBlockPositions * row + e) * kKeyBlockPositions + j % kKeyBlockPositions;
}

// Causal grouped-query attention of a batch of query tokens over one layer's KV cache.
//   q    [n_tokens][n_head][head_dim]       F32
//   k    n_kv positions of [n_head_kv][head_dim] in key_layout, kv_dtype (F32 or F16)
//   v    [n_kv][n_head_kv][head_dim]        kv_dtype, position-major
//   out  [n_tokens][n_head][head_dim]       F32
// Query token t attends to cache positions 0..positions[t] inclusive (positions[t] < n_kv). Query
// head h reads KV head h / (n_head / n_head_kv). Scores are scale * dot(q, k), usually
// scale = 1 / sqrt(head_dim).
struct AttentionArgs {
  const float* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  DType kv_dtype = DType::kF32;
  KeyLayout key_layout = KeyLayout::kRows;
  const std::int32_t* positions = nullptr;
  std::size_t n_tokens = 0;
  std::size_t n_head = 0;
  std::size_t n_head_kv = 0;
  std::size_t head_dim = 0;
  std::size_t n_kv = 0;
  float scale = 1.0F;
  float* out = nullptr;
};

}  // namespace eredu::cpu
