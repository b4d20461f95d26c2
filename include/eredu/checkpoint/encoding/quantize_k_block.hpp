#pragma once
// Reference quantization of one K-quant super-block (256 elements): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
//
// These write ggml's exact block layouts (blocks.hpp), so ggml and eredu's dequantizers decode
// them identically, but they do not reproduce llama-quantize's bytes (its scale search is more
// elaborate). The algorithm, per super-block:
//   1. each sub-block gets a float scale (and, for the affine formats, a minimum <= 0) from its
//      range, refined by trying a few slightly different grid densities and refitting the scale
//      (and minimum) by least squares to the rounded codes, keeping the fit with the least error;
//   2. the super-block's F16 d (and dmin) is the largest sub-block scale (minimum) over the
//      format's scale range, rounded away from zero in F16 so that the largest still fits;
//   3. each sub-block's quantized scale (and minimum) is the floor or the ceiling of its float
//      value over d (dmin), whichever decodes with the least squared error, and every code is the
//      nearest one to the element under the DECODED scale, clamped to the code range.
// All error evaluations use the decoder's own arithmetic (dequantize_block.hpp).
//
// Preconditions: every input is finite (codec.hpp checks it). Any finite input, however large or
// small, avoids undefined behaviour: scales clamp to the largest finite F16, and a code whose
// computation is not finite becomes 0.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::encoding {

namespace kquant_detail {

inline constexpr float kMaxF16 = 65504.0f;

// Nearest integer to v (halves round up) clamped to [lo, hi], for code ranges within
// [-128, 127]; 0 clamped into range when v is NaN. This runs for every element a few dozen times,
// so it avoids a libm rounding call: after the clamp, v + 128.5 is positive and truncation is
// floor.
[[nodiscard]] inline int nearest_code(float v, int lo, int hi) noexcept {
  if (std::isnan(v)) return std::clamp(0, lo, hi);
  const float c = std::clamp(v, static_cast<float>(lo), static_cast<float>(hi));
  return static_cast<int>(c + 128.5f) - 128;
}

// Stores `d` as F16 with its magnitude rounded up (so that value / |d16| never exceeds the scale
// range it was derived for) and clamped to the largest finite F16. Returns the decoded F16.
[[nodiscard]] inline float store_scale_up(float d, std::uint16_t& bits) noexcept {
  const float mag = std::min(std::fabs(d), kMaxF16);
  std::uint16_t h = fp32_to_fp16(mag);
  if (fp16_to_fp32(h) < mag) ++h;  // next larger F16 (positive values order like their bits)
  if (d < 0.0f) h = static_cast<std::uint16_t>(h | 0x8000u);
  bits = h;
  return fp16_to_fp32(h);
}

// Affine fit of x[0..n) as scale * q - min, q in [0, top], scale >= 0, min >= 0.
struct Affine {
  float scale;
  float min;
};

[[nodiscard]] inline float affine_error(const float* x, int n, int top, float scale,
                                        float min) noexcept {
  float err = 0.0f;
  const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
  for (int i = 0; i < n; ++i) {
    const int q = nearest_code((x[i] + min) * inv, 0, top);
    const float diff = scale * static_cast<float>(q) - min - x[i];
    err += diff * diff;
  }
  return err;
}

[[nodiscard]] inline Affine fit_affine(const float* x, int n, int top) noexcept {
  float lo = 0.0f;  // the format's offset is -min with min >= 0, so 0 is always in range
  float hi = x[0];
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (!(hi > lo)) return {0.0f, -lo};  // constant non-positive (or all-zero) sub-block: exact
  Affine best{(hi - lo) / static_cast<float>(top), -lo};
  float best_err = affine_error(x, n, top, best.scale, best.min);
  for (int step = -4; step <= 8; ++step) {
    const float iscale = (static_cast<float>(top) + 0.1f * static_cast<float>(step)) / (hi - lo);
    double sq = 0, sqq = 0, sx = 0, sxq = 0;
    for (int i = 0; i < n; ++i) {
      const double q = nearest_code((x[i] - lo) * iscale, 0, top);
      sq += q;
      sqq += q * q;
      sx += x[i];
      sxq += x[i] * q;
    }
    const double det = n * sqq - sq * sq;
    if (!(det > 0)) continue;
    double scale = (n * sxq - sq * sx) / det;
    double offset = (sqq * sx - sq * sxq) / det;
    if (offset > 0) {  // a positive offset is not representable: refit the scale with offset 0
      offset = 0;
      scale = sxq / sqq;
    }
    if (!(scale > 0)) continue;
    const Affine cand{static_cast<float>(scale), static_cast<float>(-offset)};
    if (!std::isfinite(cand.scale) || !std::isfinite(cand.min)) continue;
    const float err = affine_error(x, n, top, cand.scale, cand.min);
    if (err < best_err) {
      best_err = err;
      best = cand;
    }
  }
  return best;
}

// Symmetric fit of x[0..n) as scale * q, q in [-neg, neg - 1]; the scale may be negative (the
// element of largest magnitude then lands on -neg, using the full code range).
[[nodiscard]] inline float symmetric_error(const float* x, int n, int neg, float scale) noexcept {
  float err = 0.0f;
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int i = 0; i < n; ++i) {
    const int q = nearest_code(x[i] * inv, -neg, neg - 1);
    const float diff = scale * static_cast<float>(q) - x[i];
    err += diff * diff;
  }
  return err;
}

[[nodiscard]] inline float fit_symmetric(const float* x, int n, int neg) noexcept {
  float amax = 0.0f;
  float max = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax == 0.0f) return 0.0f;
  float best = max / -static_cast<float>(neg);
  float best_err = symmetric_error(x, n, neg, best);
  for (int step = -4; step <= 8; ++step) {
    const float iscale = -(static_cast<float>(neg) + 0.1f * static_cast<float>(step)) / max;
    double sqq = 0, sxq = 0;
    for (int i = 0; i < n; ++i) {
      const double q = nearest_code(x[i] * iscale, -neg, neg - 1);
      sqq += q * q;
      sxq += x[i] * q;
    }
    if (!(sqq > 0)) continue;
    const float cand = static_cast<float>(sxq / sqq);
    if (!std::isfinite(cand) || cand == 0.0f) continue;
    const float err = symmetric_error(x, n, neg, cand);
    if (err < best_err) {
      best_err = err;
      best = cand;
    }
  }
  return best;
}

// Quantized sub-block scale/min codes for the affine formats, and the element codes under them.
// Tries floor and ceiling of scale/d and min/dmin; codes use the decoded values
// (d * ls) * q - dmin * lm exactly as the decoder computes them.
template <int kN, int kTop>
inline void quantize_affine_sub(const float* x, float d, float dmin, float scale, float min,
                                int max_code, int& ls_out, int& lm_out, int* q_out) noexcept {
  const float fs = d > 0.0f ? scale / d : 0.0f;
  const float fm = dmin > 0.0f ? min / dmin : 0.0f;
  const int s0 = std::clamp(static_cast<int>(std::floor(std::min(fs, 1e6f))), 0, max_code);
  const int m0 = std::clamp(static_cast<int>(std::floor(std::min(fm, 1e6f))), 0, max_code);
  float best_err = -1.0f;
  for (int ls = s0; ls <= std::min(s0 + 1, max_code); ++ls) {
    for (int lm = m0; lm <= std::min(m0 + 1, max_code); ++lm) {
      const float dl = d * static_cast<float>(ls);
      const float ml = dmin * static_cast<float>(lm);
      const float inv = dl > 0.0f ? 1.0f / dl : 0.0f;
      int q[kN];
      float err = 0.0f;
      for (int i = 0; i < kN; ++i) {
        q[i] = nearest_code((x[i] + ml) * inv, 0, kTop);
        const float diff = dl * static_cast<float>(q[i]) - ml - x[i];
        err += diff * diff;
      }
      if (best_err < 0.0f || err < best_err) {
        best_err = err;
        ls_out = ls;
        lm_out = lm;
        std::memcpy(q_out, q, sizeof(q));
      }
    }
  }
}

// The symmetric counterpart: scale code in [lo, hi], element codes in [-neg, neg - 1].
template <int kN, int kNeg>
inline void quantize_symmetric_sub(const float* x, float d, float scale, int lo, int hi,
                                   int& ls_out, int* q_out) noexcept {
  const float fs = d != 0.0f ? scale / d : 0.0f;
  const int s0 = std::clamp(static_cast<int>(std::floor(std::clamp(fs, -1e6f, 1e6f))), lo, hi);
  float best_err = -1.0f;
  for (int ls = s0; ls <= std::min(s0 + 1, hi); ++ls) {
    const float dl = d * static_cast<float>(ls);
    const float inv = dl != 0.0f ? 1.0f / dl : 0.0f;
    int q[kN];
    float err = 0.0f;
    for (int i = 0; i < kN; ++i) {
      q[i] = nearest_code(x[i] * inv, -kNeg, kNeg - 1);
      const float diff = dl * static_cast<float>(q[i]) - x[i];
      err += diff * diff;
    }
    if (best_err < 0.0f || err < best_err) {
      best_err = err;
      ls_out = ls;
      std::memcpy(q_out, q, sizeof(q));
    }
  }
}

// Steps 1-3 for the affine formats with sub-blocks of kSub elements, codes in [0, kTop] and
// scale/min codes in [0, kMaxCode]. Fills the 256 element codes and the per-sub-block codes.
template <int kSub, int kTop, int kMaxCode>
inline void quantize_affine_superblock(const float* x, std::uint16_t& d_bits,
                                       std::uint16_t& dmin_bits, int* ls, int* lm,
                                       int* q) noexcept {
  constexpr int kSubs = kQK_K / kSub;
  Affine fits[kSubs];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int s = 0; s < kSubs; ++s) {
    fits[s] = fit_affine(x + kSub * s, kSub, kTop);
    max_scale = std::max(max_scale, fits[s].scale);
    max_min = std::max(max_min, fits[s].min);
  }
  const float d = store_scale_up(max_scale / static_cast<float>(kMaxCode), d_bits);
  const float dmin = store_scale_up(max_min / static_cast<float>(kMaxCode), dmin_bits);
  for (int s = 0; s < kSubs; ++s) {
    quantize_affine_sub<kSub, kTop>(x + kSub * s, d, dmin, fits[s].scale, fits[s].min, kMaxCode,
                                    ls[s], lm[s], q + kSub * s);
  }
}

// Steps 1-3 for the symmetric formats (16 sub-blocks of 16): element codes in [-kNeg, kNeg - 1],
// scale codes in [-kScaleNeg, kScaleNeg - 1].
template <int kNeg, int kScaleNeg>
inline void quantize_symmetric_superblock(const float* x, std::uint16_t& d_bits, int* ls,
                                          int* q) noexcept {
  float scales[16];
  float max_scale = 0.0f;  // the sub-block scale of largest magnitude, with its sign
  for (int s = 0; s < 16; ++s) {
    scales[s] = fit_symmetric(x + 16 * s, 16, kNeg);
    if (std::fabs(scales[s]) > std::fabs(max_scale)) max_scale = scales[s];
  }
  const float d = store_scale_up(max_scale / -static_cast<float>(kScaleNeg), d_bits);
  for (int s = 0; s < 16; ++s) {
    quantize_symmetric_sub<16, kNeg>(x + 16 * s, d, scales[s], -kScaleNeg, kScaleNeg - 1, ls[s],
                                     q + 16 * s);
  }
}

// Packs 8 six-bit scales and 8 six-bit minimums into Q4_K / Q5_K's 12 bytes (the inverse of
// detail::k4_scale_min in dequantize_block.hpp).
inline void pack_k4_scales(const int* ls, const int* lm, std::uint8_t (&out)[kKScaleSize]) {
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<std::uint8_t>((ls[j] & 63) | ((ls[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<std::uint8_t>((lm[j] & 63) | ((lm[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<std::uint8_t>((ls[j + 4] & 0xF) | ((lm[j + 4] & 0xF) << 4));
  }
}

}  // namespace kquant_detail

inline void quantize_block(const float* x, BlockQ4_K& y) noexcept {
  int ls[8], lm[8], q[kQK_K];
  std::uint16_t d = 0, dmin = 0;  // locals: a packed field cannot bind to a reference
  kquant_detail::quantize_affine_superblock<32, 15, 63>(x, d, dmin, ls, lm, q);
  y.d = d;
  y.dmin = dmin;
  kquant_detail::pack_k4_scales(ls, lm, y.scales);
  for (int e = 0; e < kQK_K; e += 64) {  // 64 elements per 32 bytes: low nibbles, then high
    for (int l = 0; l < 32; ++l) {
      y.qs[e / 2 + l] = static_cast<std::uint8_t>(q[e + l] | (q[e + 32 + l] << 4));
    }
  }
}

inline void quantize_block(const float* x, BlockQ5_K& y) noexcept {
  int ls[8], lm[8], q[kQK_K];
  std::uint16_t d = 0, dmin = 0;  // locals: a packed field cannot bind to a reference
  kquant_detail::quantize_affine_superblock<32, 31, 63>(x, d, dmin, ls, lm, q);
  y.d = d;
  y.dmin = dmin;
  kquant_detail::pack_k4_scales(ls, lm, y.scales);
  std::memset(y.qh, 0, sizeof(y.qh));
  for (int e = 0; e < kQK_K; ++e) {  // qh[l] bit k holds the fifth bit of element 32 * k + l
    y.qh[e % 32] = static_cast<std::uint8_t>(y.qh[e % 32] | ((q[e] >> 4) << (e / 32)));
  }
  for (int e = 0; e < kQK_K; e += 64) {
    for (int l = 0; l < 32; ++l) {
      y.qs[e / 2 + l] = static_cast<std::uint8_t>((q[e + l] & 0xF) | ((q[e + 32 + l] & 0xF) << 4));
    }
  }
}

inline void quantize_block(const float* x, BlockQ2_K& y) noexcept {
  int ls[16], lm[16], q[kQK_K];
  std::uint16_t d = 0, dmin = 0;  // locals: a packed field cannot bind to a reference
  kquant_detail::quantize_affine_superblock<16, 3, 15>(x, d, dmin, ls, lm, q);
  y.d = d;
  y.dmin = dmin;
  for (int s = 0; s < 16; ++s)
    y.scales[s] = static_cast<std::uint8_t>(ls[s] | (lm[s] << 4));
  std::memset(y.qs, 0, sizeof(y.qs));
  for (int e = 0; e < kQK_K; ++e) {  // element 128 * h + 32 * k + l: qs[32 * h + l] bits 2k
    const int byte = 32 * (e / 128) + e % 32;
    const int shift = 2 * ((e % 128) / 32);
    y.qs[byte] = static_cast<std::uint8_t>(y.qs[byte] | (q[e] << shift));
  }
}

inline void quantize_block(const float* x, BlockQ3_K& y) noexcept {
  int ls[16], q[kQK_K];
  std::uint16_t d = 0;  // a local: a packed field cannot bind to a reference
  kquant_detail::quantize_symmetric_superblock<4, 32>(x, d, ls, q);
  y.d = d;
  std::memset(y.scales, 0, sizeof(y.scales));
  for (int j = 0; j < 16; ++j) {  // the inverse of detail::q3_k_scale_code
    const int code = ls[j] + 32;
    const int low = code & 0xF;
    y.scales[j % 8] = static_cast<std::uint8_t>(y.scales[j % 8] | (low << (j < 8 ? 0 : 4)));
    y.scales[8 + j % 4] =
        static_cast<std::uint8_t>(y.scales[8 + j % 4] | ((code >> 4) << (2 * (j / 4))));
  }
  std::memset(y.qs, 0, sizeof(y.qs));
  std::memset(y.hmask, 0, sizeof(y.hmask));
  for (int e = 0; e < kQK_K; ++e) {
    const int u = q[e] + 4;  // 0..7: a cleared high bit means the decoder subtracts 4
    const int half = e / 128;
    const int k = (e % 128) / 32;
    const int l = e % 32;
    y.qs[32 * half + l] = static_cast<std::uint8_t>(y.qs[32 * half + l] | ((u & 3) << (2 * k)));
    y.hmask[l] = static_cast<std::uint8_t>(y.hmask[l] | ((u >> 2) << (4 * half + k)));
  }
}

inline void quantize_block(const float* x, BlockQ6_K& y) noexcept {
  int ls[16], q[kQK_K];
  std::uint16_t d = 0;  // a local: a packed field cannot bind to a reference
  kquant_detail::quantize_symmetric_superblock<32, 128>(x, d, ls, q);
  y.d = d;
  for (int s = 0; s < 16; ++s)
    y.scales[s] = static_cast<std::int8_t>(ls[s]);
  for (int half = 0; half < 2; ++half) {
    const int* u = q + 128 * half;
    for (int l = 0; l < 32; ++l) {
      const int q1 = u[l] + 32, q2 = u[l + 32] + 32, q3 = u[l + 64] + 32, q4 = u[l + 96] + 32;
      y.ql[64 * half + l] = static_cast<std::uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
      y.ql[64 * half + l + 32] = static_cast<std::uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
      y.qh[32 * half + l] = static_cast<std::uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) |
                                                      ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

}  // namespace eredu::encoding
