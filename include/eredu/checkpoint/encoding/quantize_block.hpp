#pragma once
// Reference quantization of one block (and of a row of blocks) for Q8_0, Q4_0, Q4_1, Q5_0 and
// Q5_1: the deterministic "ref" algorithms ggml uses when llama-quantize runs without an
// importance matrix, so files eredu writes hold the same bytes llama.cpp would write.
//
//   Q8_0        d = amax / 127;          q = round_half_away(x * (1/d))        (|q| <= 127)
//   Q4_0, Q5_0  d = max / -8 (or -16), where max is the element of largest magnitude with its
//               sign;                    q = min(15|31, trunc(x * (1/d) + 8.5|16.5))
//   Q4_1, Q5_1  d = (max - min) / 15|31, m = min;
//                                        q = min(15|31, trunc((x - min) * (1/d) + 0.5))
// The scale used for the codes is the float32 d (1/d, or 0 when d == 0), and d (and m) are then
// stored as F16, rounded to nearest even. The multiply and the add are two roundings, as in
// ggml's reference; they are separate statements so that no compiler fuses them into an FMA
// (GCC in ISO C++ mode defaults to -ffp-contract=off, Clang fuses only within one expression).
// tests/unit/encodings/test_quantize.cpp checks the result against llama-quantize's own bytes.
//
// Preconditions: every input is finite (the span API in codec.hpp checks it; ggml leaves
// non-finite input undefined), and `n_elements` is a multiple of 32 for the row functions.
// Finite input never reaches undefined behaviour: if 1/d overflows (every |x| below ~1e-38),
// the codes become 0 as ggml's casts make them on x86.

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::encoding {

namespace detail {
// The element of largest magnitude, with its sign; the first one wins a tie. 0 for all zeros.
[[nodiscard]] inline float signed_absmax(const float* x, int n) noexcept {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

struct MinMax {
  float min;
  float max;
};
[[nodiscard]] inline MinMax min_max(const float* x, int n) noexcept {
  MinMax r{FLT_MAX, -FLT_MAX};
  for (int j = 0; j < n; ++j) {
    if (x[j] < r.min) r.min = x[j];
    if (x[j] > r.max) r.max = x[j];
  }
  return r;
}

// trunc(scaled + offset) clamped to [0, top]; scaled and offset are added as a separate rounding.
// A non-finite sum (only possible when 1/d overflowed: every |x| below ~1e-38, where d itself
// stores as F16 zero) gives code 0, which is what ggml's float-to-int8 cast yields on x86
// (cvttss2si's 0x80000000, truncated to a byte); in C++ that cast would be undefined.
[[nodiscard]] inline std::uint8_t truncate_code(float scaled, float offset, int top) noexcept {
  const float shifted = scaled + offset;
  if (!std::isfinite(shifted)) return 0;
  const float clamped = std::clamp(shifted, 0.0f, static_cast<float>(top));
  return static_cast<std::uint8_t>(clamped);  // truncation toward zero, as ggml's (int8_t) cast
}

// round-half-away-from-zero (roundf) as a signed byte; non-finite gives 0, as truncate_code.
[[nodiscard]] inline std::int8_t round_code(float scaled) noexcept {
  const float rounded = std::round(scaled);
  if (!std::isfinite(rounded)) return 0;
  return static_cast<std::int8_t>(std::clamp(rounded, -128.0f, 127.0f));
}
}  // namespace detail

inline void quantize_block(const float* x, BlockQ8_0& y) noexcept {
  float amax = 0.0f;
  for (int j = 0; j < kQK8_0; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = fp32_to_fp16(d);
  for (int j = 0; j < kQK8_0; ++j) {
    y.qs[j] = detail::round_code(x[j] * id);
  }
}

inline void quantize_block(const float* x, BlockQ4_0& y) noexcept {
  const float max = detail::signed_absmax(x, kQK4_0);
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = fp32_to_fp16(d);
  for (int j = 0; j < kQK4_0 / 2; ++j) {
    const std::uint8_t x0 = detail::truncate_code(x[j] * id, 8.5f, 15);
    const std::uint8_t x1 = detail::truncate_code(x[j + kQK4_0 / 2] * id, 8.5f, 15);
    y.qs[j] = static_cast<std::uint8_t>(x0 | (x1 << 4));
  }
}

inline void quantize_block(const float* x, BlockQ4_1& y) noexcept {
  const detail::MinMax mm = detail::min_max(x, kQK4_1);
  const float d = (mm.max - mm.min) / 15.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = fp32_to_fp16(d);
  y.m = fp32_to_fp16(mm.min);
  for (int j = 0; j < kQK4_1 / 2; ++j) {
    const std::uint8_t x0 = detail::truncate_code((x[j] - mm.min) * id, 0.5f, 15);
    const std::uint8_t x1 = detail::truncate_code((x[j + kQK4_1 / 2] - mm.min) * id, 0.5f, 15);
    y.qs[j] = static_cast<std::uint8_t>(x0 | (x1 << 4));
  }
}

inline void quantize_block(const float* x, BlockQ5_0& y) noexcept {
  const float max = detail::signed_absmax(x, kQK5_0);
  const float d = max / -16.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = fp32_to_fp16(d);
  std::uint32_t qh = 0;
  for (int j = 0; j < kQK5_0 / 2; ++j) {
    const std::uint8_t x0 = detail::truncate_code(x[j] * id, 16.5f, 31);
    const std::uint8_t x1 = detail::truncate_code(x[j + kQK5_0 / 2] * id, 16.5f, 31);
    y.qs[j] = static_cast<std::uint8_t>((x0 & 0x0F) | ((x1 & 0x0F) << 4));
    qh |= static_cast<std::uint32_t>(x0 >> 4) << j;
    qh |= static_cast<std::uint32_t>(x1 >> 4) << (j + kQK5_0 / 2);
  }
  for (int k = 0; k < 4; ++k)
    y.qh[k] = static_cast<std::uint8_t>(qh >> (8 * k));
}

inline void quantize_block(const float* x, BlockQ5_1& y) noexcept {
  const detail::MinMax mm = detail::min_max(x, kQK5_1);
  const float d = (mm.max - mm.min) / 31.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = fp32_to_fp16(d);
  y.m = fp32_to_fp16(mm.min);
  std::uint32_t qh = 0;
  for (int j = 0; j < kQK5_1 / 2; ++j) {
    const std::uint8_t x0 = detail::truncate_code((x[j] - mm.min) * id, 0.5f, 31);
    const std::uint8_t x1 = detail::truncate_code((x[j + kQK5_1 / 2] - mm.min) * id, 0.5f, 31);
    y.qs[j] = static_cast<std::uint8_t>((x0 & 0x0F) | ((x1 & 0x0F) << 4));
    qh |= static_cast<std::uint32_t>(x0 >> 4) << j;
    qh |= static_cast<std::uint32_t>(x1 >> 4) << (j + kQK5_1 / 2);
  }
  for (int k = 0; k < 4; ++k)
    y.qh[k] = static_cast<std::uint8_t>(qh >> (8 * k));
}

// Encodes n_elements / block_size consecutive blocks from x.
template <typename Block>
inline void quantize_row(const float* x, Block* y, std::size_t n_elements) noexcept {
  constexpr std::size_t kBlock = BlockTraits<Block>::kElements;
  for (std::size_t i = 0; i < n_elements / kBlock; ++i)
    quantize_block(x + i * kBlock, y[i]);
}

// ggml-style names for the reference row quantizers.
inline void quantize_row_q8_0_ref(const float* x, BlockQ8_0* y, std::size_t n) {
  quantize_row(x, y, n);
}
inline void quantize_row_q4_0_ref(const float* x, BlockQ4_0* y, std::size_t n) {
  quantize_row(x, y, n);
}
inline void quantize_row_q4_1_ref(const float* x, BlockQ4_1* y, std::size_t n) {
  quantize_row(x, y, n);
}
inline void quantize_row_q5_0_ref(const float* x, BlockQ5_0* y, std::size_t n) {
  quantize_row(x, y, n);
}
inline void quantize_row_q5_1_ref(const float* x, BlockQ5_1* y, std::size_t n) {
  quantize_row(x, y, n);
}

}  // namespace eredu::encoding
