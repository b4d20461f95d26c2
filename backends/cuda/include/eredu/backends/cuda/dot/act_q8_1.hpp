#pragma once
// Activations quantized for the integer block dots: ggml's block_q8_1 layout (36 bytes: the F16
// scale d, the F16 value d * sum(qs), then 32 int8 codes), the activation format of ggml-CUDA's
// matrix-vector kernels (mmvq) for every weight format, K-quants included (their 256-element
// super-blocks meet eight of these blocks). One format for all weights means one quantization
// pass per activation row whatever the mix of weight encodings in a model.
//
// The codes and scales are those of the CPU backend's activation quantizer (quantize_act_q8 in
// backends/cpu, and reference::quantize_row_q8_0 for d and qs), so a GPU matvec sees the same
// integers as the CPU one:
//   d = max|x| / 127, q = round-half-even(x * (127 / max|x|)), d and d * sum(q) rounded to F16.
// ggml's C reference rounds half away from zero (roundf of x * (1 / d)) and ggml-CUDA computes
// roundf(x / d) with the unrounded sum of x; the three agree except on exact ties and near-ties.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"

namespace eredu::cuda::dot {

inline constexpr int kQK8_1 = 32;

// Aligned to 4 so that a kernel reads the codes as four 32-bit words (the dp4a operands).
struct alignas(4) BlockQ8_1 {
  std::uint16_t d;  // F16 scale
  std::uint16_t s;  // F16 d * sum(qs), with the unrounded d
  std::int8_t qs[kQK8_1];
};
static_assert(sizeof(BlockQ8_1) == 36, "ggml's block_q8_1 is 36 bytes");

// Codes 4k .. 4k + 3 as one dp4a operand (byte 0 = code 4k).
EREDU_HD inline int act_codes4(const BlockQ8_1& a, int k) {
#if defined(__CUDA_ARCH__)
  return reinterpret_cast<const int*>(a.qs)[k];
#else
  int v;
  std::memcpy(&v, a.qs + 4 * k, sizeof v);
  return v;
#endif
}

EREDU_HD inline float act_scale(const BlockQ8_1& a) {
  return decode::f16_to_f32(a.d);
}
EREDU_HD inline float act_scaled_sum(const BlockQ8_1& a) {
  return decode::f16_to_f32(a.s);
}

// x rounded to the nearest integer, ties to even (the CPU backend's _mm256_round_ps / nearbyint).
EREDU_HD inline int round_half_even(float x) {
#if defined(__CUDA_ARCH__)
  return __float2int_rn(x);
#else
  return static_cast<int>(std::nearbyint(x));
#endif
}

// Quantizes the 32 floats at x into y. Sequential over the block: a kernel that gives one element
// to each lane replaces the max and sum loops with warp reductions (both are exact, so the
// result is the same).
EREDU_HD inline void quantize_block_q8_1(const float* x, BlockQ8_1& y) {
  float max_abs = 0.0F;
  for (int i = 0; i < kQK8_1; ++i)
    max_abs = fmaxf(max_abs, fabsf(x[i]));
  const float d = max_abs / 127.0F;
  const float id = max_abs != 0.0F ? 127.0F / max_abs : 0.0F;
  int sum = 0;
  for (int i = 0; i < kQK8_1; ++i) {
    const int q = round_half_even(x[i] * id);
    y.qs[i] = static_cast<std::int8_t>(q);
    sum += q;
  }
  y.d = decode::f32_to_f16(d);
  y.s = decode::f32_to_f16(d * static_cast<float>(sum));
}

// n (a multiple of 32) floats into n / 32 blocks.
EREDU_HD inline void quantize_row_q8_1(const float* x, BlockQ8_1* y, std::int64_t n) {
  for (std::int64_t b = 0; b < n / kQK8_1; ++b)
    quantize_block_q8_1(x + kQK8_1 * b, y[b]);
}

}  // namespace eredu::cuda::dot
