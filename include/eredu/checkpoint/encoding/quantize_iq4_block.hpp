#pragma once
// Quantization of IQ4_NL blocks (32 elements) and IQ4_XS super-blocks (256: 8 sub-blocks of 32),
// whose values are a scale times one of 16 non-uniform codebook values (kIQ4NLValues, -127 ..
// 113). They write ggml's exact layouts (blocks.hpp), so ggml's and eredu's decoders read them
// alike; like the K-quant encoders (quantize_k_block.hpp) they do not claim llama-quantize's bytes.
// The search follows ggml's without an importance matrix, per block of 32:
//   1. each element is weighted by x^2: the error on the large weights is what matters;
//   2. scale candidates map the element of largest magnitude to +127 or to -127 + t for t in
//      [-7, 7]; for each, every element takes its
//      nearest codebook value and the scale is refitted by weighted least squares,
//      sum(w q x) / sum(w q^2); the fit with the largest sum(w q x)^2 / sum(w q^2) (the least
//      weighted squared error) is kept;
//   3. IQ4_NL: that scale is stored as F16; IQ4_XS: the super-block d is -(the sub-block scale of
//      largest magnitude) / 32 in F16, so that one becomes the 6-bit scale -32, and each sub-block
//      scale is the nearest multiple of d in [-32, 31] x d;
//   4. every code is then the nearest codebook value under the DECODED scale (the decoder's own
//      d, or d x scale for IQ4_XS).
//
// Preconditions: every input is finite (codec.hpp checks it). Any finite input avoids undefined
// behaviour: scales clamp to the largest finite F16, and an element whose scaled value is not
// finite (a scale that decodes to zero) takes the code nearest zero.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::encoding {

namespace iq4_detail {

inline constexpr float kMaxF16 = 65504.0f;
inline constexpr int kNearZero = 8;  // kIQ4NLValues[8] == 1, the value nearest 0

// Index of the codebook value nearest v (the lower one on a tie); kNearZero for NaN.
[[nodiscard]] inline int nearest_index(float v) noexcept {
  if (std::isnan(v)) return kNearZero;
  if (v <= kIQ4NLValues[0]) return 0;
  if (v >= kIQ4NLValues[15]) return 15;
  int lo = 0;
  int hi = 15;  // kIQ4NLValues[lo] <= v < kIQ4NLValues[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < static_cast<float>(kIQ4NLValues[mid])) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return v - static_cast<float>(kIQ4NLValues[lo]) <= static_cast<float>(kIQ4NLValues[hi]) - v ? lo
                                                                                              : hi;
}

// The weighted least-squares scale of 32 elements (step 2 above); 0 for a block of zeros. The
// search runs on the elements over their largest magnitude (within [-1, 1], so no weight or sum
// overflows whatever the input), and the scale found is scaled back.
[[nodiscard]] inline float fit_scale(const float* x) noexcept {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (amax < 1e-15f) return 0.0f;
  float xs[32];
  for (int j = 0; j < 32; ++j)
    xs[j] = x[j] / amax;
  const float top = max / amax;  // +-1
  float best_scale = 0.0f;
  float best = -1.0f;  // sum(w q x)^2 / sum(w q^2) of the best fit so far
  // t = 8 stands for the largest element mapped to +127 (clamped to the codebook's 113), the
  // first candidate ggml tries.
  for (int t = -7; t <= 8; ++t) {
    const float inverse = static_cast<float>(t == 8 ? -kIQ4NLValues[0] : t + kIQ4NLValues[0]) / top;
    float sum_qx = 0.0f;
    float sum_q2 = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float q = kIQ4NLValues[nearest_index(inverse * xs[j])];
      const float w = xs[j] * xs[j];
      sum_qx += w * q * xs[j];
      sum_q2 += w * q * q;
    }
    if (sum_q2 > 0.0f && sum_qx * sum_qx > best * sum_q2) {
      best_scale = sum_qx / sum_q2;
      best = best_scale * sum_qx;
    }
  }
  return best_scale * amax;
}

// F16 bits of a scale, clamped to the largest finite F16.
[[nodiscard]] inline std::uint16_t store_scale(float d) noexcept {
  return fp32_to_fp16(std::clamp(d, -kMaxF16, kMaxF16));
}

// The 32 codes of one block under the decoded scale d, in Q4_0 nibble order into qs[0..16).
inline void pack_codes(const float* x, float d, std::uint8_t* qs) noexcept {
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j) {
    const int lo = nearest_index(inverse * x[j]);
    const int hi = nearest_index(inverse * x[j + 16]);
    qs[j] = static_cast<std::uint8_t>(lo | (hi << 4));
  }
}

}  // namespace iq4_detail

inline void quantize_block(const float* x, BlockIQ4_NL& y) noexcept {
  y.d = iq4_detail::store_scale(iq4_detail::fit_scale(x));
  iq4_detail::pack_codes(x, fp16_to_fp32(y.d), y.qs);
}

inline void quantize_block(const float* x, BlockIQ4_XS& y) noexcept {
  constexpr int kSub = kQK_K / 32;
  float scales[kSub];
  float max_scale = 0.0f;
  for (int u = 0; u < kSub; ++u) {
    scales[u] = iq4_detail::fit_scale(x + 32 * u);
    if (std::fabs(scales[u]) > std::fabs(max_scale)) max_scale = scales[u];
  }
  y.d = iq4_detail::store_scale(-max_scale / 32.0f);
  const float d = fp16_to_fp32(y.d);
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  y.scales_h = 0;
  for (int u = 0; u < kSub; ++u) {
    const float v = inverse * scales[u];
    const int l = std::isfinite(v) ? static_cast<int>(std::clamp(std::round(v), -32.0f, 31.0f)) : 0;
    const int stored = l + 32;
    if (u % 2 == 0) {
      y.scales_l[u / 2] = static_cast<std::uint8_t>(stored & 0xF);
    } else {
      y.scales_l[u / 2] = static_cast<std::uint8_t>(y.scales_l[u / 2] | ((stored & 0xF) << 4));
    }
    y.scales_h = static_cast<std::uint16_t>(y.scales_h | ((stored >> 4) << (2 * u)));
    // The decoder's sub-block scale: d * float(stored - 32).
    iq4_detail::pack_codes(x + 32 * u, d * static_cast<float>(l), y.qs + 16 * u);
  }
}

}  // namespace eredu::encoding
