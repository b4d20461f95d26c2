// The integer and conversion primitives of the CUDA block dots, on the CPU: the host emulation of
// dp4a against a plain loop of byte products (extremes included), sub_bytes against per-byte
// subtraction for every code range it is used on, and the device-callable F32 -> F16 rounding
// against the core's encoding::fp32_to_fp16 (every F16 value, every midpoint between neighbours
// and random F32 bit patterns, NaN included).
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <bit>
#include <cstdint>
#include <random>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/dot/dp4a.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

namespace dot = eredu::cuda::dot;

int plain_dp4a(int a, int b, int c) {
  std::int64_t sum = c;
  for (int k = 0; k < 4; ++k) {
    sum += static_cast<std::int8_t>(static_cast<std::uint32_t>(a) >> (8 * k)) *
           static_cast<std::int8_t>(static_cast<std::uint32_t>(b) >> (8 * k));
  }
  return static_cast<int>(sum);
}

TEST(CudaDotPrimitives, Dp4aIsTheSumOfSignedByteProducts) {
  EXPECT_EQ(dot::dp4a(0x01020304, 0x01010101, 10), 10 + 1 + 2 + 3 + 4);
  EXPECT_EQ(dot::dp4a(static_cast<int>(0x80808080u), static_cast<int>(0x80808080u), 0),
            4 * 128 * 128);
  EXPECT_EQ(dot::dp4a(static_cast<int>(0x7F7F7F7Fu), static_cast<int>(0x80808080u), -1),
            -1 - 4 * 127 * 128);
  EXPECT_EQ(dot::dp4a(static_cast<int>(0xFFFFFFFFu), 0x01010101, 0), -4);
  std::mt19937 rng(7);
  for (int n = 0; n < 200000; ++n) {
    const int a = static_cast<int>(rng());
    const int b = static_cast<int>(rng());
    const int c = static_cast<int>(rng() % 2000001) - 1000000;
    ASSERT_EQ(dot::dp4a(a, b, c), plain_dp4a(a, b, c)) << a << " " << b << " " << c;
  }
}

TEST(CudaDotPrimitives, SubBytesSubtractsTheBiasFromEachCode) {
  // (bias, largest code): Q3_K 3-bit codes, Q4_0 nibbles, Q5_0 5-bit and Q6_K 6-bit codes.
  const int cases[][2] = {{4, 7}, {8, 15}, {16, 31}, {32, 63}};
  std::mt19937 rng(11);
  for (const auto& c : cases) {
    const int bias = c[0];
    for (int n = 0; n < 20000; ++n) {
      std::uint32_t v = 0;
      int want[4];
      for (int k = 0; k < 4; ++k) {
        // The extremes of the range first, then random codes.
        const int q = n < 2 ? (n == 0 ? 0 : c[1]) : static_cast<int>(rng() % (c[1] + 1));
        v |= static_cast<std::uint32_t>(q) << (8 * k);
        want[k] = q - bias;
      }
      const auto got = static_cast<std::uint32_t>(dot::sub_bytes(v, bias));
      for (int k = 0; k < 4; ++k)
        ASSERT_EQ(static_cast<std::int8_t>(got >> (8 * k)), want[k]) << "bias " << bias;
    }
  }
}

TEST(CudaDotPrimitives, F32ToF16RoundsLikeTheCore) {
  namespace enc = eredu::encoding;
  // Every F16 value, and the F32 midpoint between it and its upper neighbour (a tie).
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float value = eredu::cuda::decode::f16_to_f32(static_cast<std::uint16_t>(h));
    ASSERT_EQ(eredu::cuda::decode::f32_to_f16(value), enc::fp32_to_fp16(value)) << h;
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t exponent = (bits >> 23) & 0xFFu;
    if (exponent >= 0xFFu || (h & 0x7FFFu) >= 0x7BFFu) continue;  // NaN / Inf / max: no neighbour
    const float next = eredu::cuda::decode::f16_to_f32(static_cast<std::uint16_t>(h + 1));
    const float mid = value + (next - value) / 2.0F;  // exact: one more bit than F16 holds
    ASSERT_EQ(eredu::cuda::decode::f32_to_f16(mid), enc::fp32_to_fp16(mid)) << "mid " << h;
  }
  std::mt19937 rng(3);
  for (int n = 0; n < 2000000; ++n) {
    const float value = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    ASSERT_EQ(eredu::cuda::decode::f32_to_f16(value), enc::fp32_to_fp16(value))
        << std::bit_cast<std::uint32_t>(value);
  }
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
