#pragma once
// The generic integer block dot: a weight block of any format against the q8_1 activation blocks
// that cover it, for a future warp-per-row matrix-vector kernel (a lane takes one 32-element
// sub-block at a time, as ggml-CUDA's mmvq does, then the warp sums the lanes' floats).
//
// A format's dot traits T (legacy_dot.hpp, k_quant_dot.hpp, iq4_dot.hpp) describe each weight
// element as value = scale(g) * code + min(g) for its scale group g (16 or 32 elements), with
// integer codes, and give four codes at a time as one dp4a operand. The dot of a 32-element
// sub-block is then, per group, an exact integer sum of code * activation code (dp4a), and a float
// combination with the group's scale, the activation scale d and, for affine formats, the
// activation sum:
//   - groups of 32 (Q4_1, Q5_1, Q4_K, Q5_K): min * s, the block's stored F16 d * sum (ggml's way
//     for Q4_1 / Q5_1: no extra dp4a, at the cost of the F16 rounding of s);
//   - groups of 16 (Q2_K): s covers 32 elements, so the activation sum of each group is an exact
//     integer (dp4a against ones) times d.
//
// Traits interface (all EREDU_HD static):
//   using Format                 the decode:: format (block sizes)
//   kGroup                       16 or 32: elements per scale group
//   kMin                         whether value has a min term
//   int codes4(block, q)         codes of elements 4q .. 4q + 3 as four signed bytes
//   int code(block, i)           code of element i (the plain form the tests compare with)
//   float scale(block, g)        the factor of group g
//   float min(block, g)          the offset of group g (formats with kMin only)

#include <cstdint>

#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/backends/cuda/dot/act_q8_1.hpp"
#include "eredu/backends/cuda/dot/dp4a.hpp"

namespace eredu::cuda::dot {

// The integer sums of one 32-element sub-block: per scale group h (only h = 0 for groups of 32)
// sum(code * activation code) and, for groups of 16 with a min, sum(activation code).
struct SubBlockSums {
  int codes[2];
  int act[2];
};

// What one 32-element sub-block of a weight block contributes, read once: its codes as eight dp4a
// words and the factors (and offsets) of its one or two scale groups. A matrix-vector kernel reads
// it once and meets several tokens' activations with it.
template <typename T>
struct SubBlockWeights {
  int codes[8];
  float scale[2];
  float min[2];
};

template <typename T>
EREDU_HD inline SubBlockWeights<T> load_sub_block(const std::uint8_t* block, int sub) {
  SubBlockWeights<T> w{};
  for (int k = 0; k < 8; ++k)
    w.codes[k] = T::codes4(block, 8 * sub + k);
  if constexpr (T::kGroup == 32) {
    w.scale[0] = T::scale(block, sub);
    if constexpr (T::kMin) w.min[0] = T::min(block, sub);
  } else {
    w.scale[0] = T::scale(block, 2 * sub);
    w.scale[1] = T::scale(block, 2 * sub + 1);
    if constexpr (T::kMin) {
      w.min[0] = T::min(block, 2 * sub);
      w.min[1] = T::min(block, 2 * sub + 1);
    }
  }
  return w;
}

// The integer sums of a sub-block's codes with the activation block `a`.
template <typename T>
EREDU_HD inline SubBlockSums sub_block_sums(const SubBlockWeights<T>& w, const BlockQ8_1& a) {
  SubBlockSums sums{{0, 0}, {0, 0}};
  constexpr int kWordsPerGroup = T::kGroup / 4;
  for (int k = 0; k < 8; ++k) {
    const int h = k / kWordsPerGroup;
    const int x = act_codes4(a, k);
    sums.codes[h] = dp4a(w.codes[k], x, sums.codes[h]);
    if constexpr (T::kGroup == 16 && T::kMin) sums.act[h] = dp4a(0x01010101, x, sums.act[h]);
  }
  return sums;
}

// The integer sums of sub-block `sub` (elements 32 * sub ..) of the weight block at `block` with
// the activation block `a`.
template <typename T>
EREDU_HD inline SubBlockSums sub_block_sums(const std::uint8_t* block, int sub,
                                            const BlockQ8_1& a) {
  return sub_block_sums<T>(load_sub_block<T>(block, sub), a);
}

// The float dot of a sub-block with the activation block `a`.
template <typename T>
EREDU_HD inline float sub_block_dot(const SubBlockWeights<T>& w, const BlockQ8_1& a) {
  const SubBlockSums sums = sub_block_sums<T>(w, a);
  const float d = act_scale(a);
  if constexpr (T::kGroup == 32) {
    float r = w.scale[0] * (d * static_cast<float>(sums.codes[0]));
    if constexpr (T::kMin) r += w.min[0] * act_scaled_sum(a);
    return r;
  } else {
    float r = w.scale[0] * static_cast<float>(sums.codes[0]) +
              w.scale[1] * static_cast<float>(sums.codes[1]);
    if constexpr (T::kMin) {
      r += w.min[0] * static_cast<float>(sums.act[0]) + w.min[1] * static_cast<float>(sums.act[1]);
    }
    return d * r;
  }
}

// The float dot of sub-block `sub` of the weight block with the activation block `a`.
template <typename T>
EREDU_HD inline float sub_block_dot(const std::uint8_t* block, int sub, const BlockQ8_1& a) {
  return sub_block_dot<T>(load_sub_block<T>(block, sub), a);
}

// The dot of one weight block with the Format::kBlockElements / 32 activation blocks at `a`.
template <typename T>
EREDU_HD inline float block_dot(const std::uint8_t* block, const BlockQ8_1* a) {
  float sum = 0.0F;
  for (int sub = 0; sub < T::Format::kBlockElements / kQK8_1; ++sub)
    sum += sub_block_dot<T>(block, sub, a[sub]);
  return sum;
}

// The dot of a row of n_blocks weight blocks with its quantized activation row.
template <typename T>
EREDU_HD inline float row_dot(const std::uint8_t* row, const BlockQ8_1* a, std::int64_t n_blocks) {
  constexpr int kActPerBlock = T::Format::kBlockElements / kQK8_1;
  float sum = 0.0F;
  for (std::int64_t b = 0; b < n_blocks; ++b)
    sum += block_dot<T>(row + b * T::Format::kBlockBytes, a + b * kActPerBlock);
  return sum;
}

}  // namespace eredu::cuda::dot
