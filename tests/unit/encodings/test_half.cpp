// F16 / BF16 <-> F32 conversions, checked exhaustively over all 65536 bit patterns against an
// independent ldexp-based decoding, and for narrowing against exact midpoints between adjacent
// representable values (ties to even, and one ulp either side of every tie).

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "eredu/checkpoint/encoding/half.hpp"

namespace {

using eredu::encoding::bf16_to_fp32;
using eredu::encoding::fp16_to_fp32;
using eredu::encoding::fp32_to_bf16;
using eredu::encoding::fp32_to_fp16;

// The conversions are usable in constant expressions (later kernels build tables with them).
static_assert(fp16_to_fp32(0x3C00) == 1.0f);
static_assert(fp16_to_fp32(0x0001) == 0x1p-24f);
static_assert(fp32_to_fp16(-2.0f) == 0xC000);
static_assert(bf16_to_fp32(0x3F80) == 1.0f);
static_assert(fp32_to_bf16(1.0f) == 0x3F80);

// binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Finite values only.
double f16_value(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// bfloat16: 1 sign, 8 exponent (bias 127), 7 mantissa bits. Finite values only.
double bf16_value(std::uint16_t b) {
  const int exponent = (b >> 7) & 0xFF;
  const int mantissa = b & 0x7F;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -133) : std::ldexp(128 + mantissa, exponent - 134);
  return (b & 0x8000) != 0 ? -magnitude : magnitude;
}

bool f16_is_nan(std::uint16_t h) {
  return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
}
bool bf16_is_nan(std::uint16_t b) {
  return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0;
}

TEST(HalfConversion, F16ToF32MatchesLdexpDecodingForAll65536Patterns) {
  int subnormals = 0;
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float got = fp16_to_fp32(h);
    const std::uint32_t got_bits = std::bit_cast<std::uint32_t>(got);
    ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << "pattern " << bits;
    if ((h & 0x7C00) == 0x7C00) {
      if ((h & 0x3FF) == 0) {
        ASSERT_TRUE(std::isinf(got)) << "pattern " << bits;
      } else {
        ASSERT_TRUE(std::isnan(got)) << "pattern " << bits;
        // The payload (quiet bit included) is carried over unchanged, as numpy does.
        ASSERT_EQ(got_bits & 0x7FFFFFu, static_cast<std::uint32_t>(h & 0x3FF) << 13);
      }
      continue;
    }
    if ((h & 0x7C00) == 0 && (h & 0x3FF) != 0) ++subnormals;
    ASSERT_EQ(static_cast<double>(got), f16_value(h)) << "pattern " << bits;
  }
  EXPECT_EQ(subnormals, 2 * 1023);
}

TEST(HalfConversion, F32ToF16RoundTripsEveryNonNaNPattern) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    if (f16_is_nan(h)) continue;
    ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(h)), h) << "pattern " << bits;
  }
}

TEST(HalfConversion, F32ToF16RoundsToNearestWithTiesToEvenIncludingSubnormalsAndOverflow) {
  // Every pair of adjacent non-negative F16 values; the pair above the largest finite value uses
  // 2^16, where F16 overflows to Inf (so 65520 and above round to Inf).
  for (std::uint32_t low = 0; low < 0x7C00; ++low) {
    const double a = f16_value(static_cast<std::uint16_t>(low));
    const double b = low + 1 == 0x7C00 ? 65536.0 : f16_value(static_cast<std::uint16_t>(low + 1));
    const auto mid = static_cast<float>((a + b) / 2);  // 12 significant bits: exact
    ASSERT_EQ(static_cast<double>(mid), (a + b) / 2);
    const std::uint16_t even =
        (low & 1) == 0 ? static_cast<std::uint16_t>(low) : static_cast<std::uint16_t>(low + 1);
    for (const float sign : {1.0f, -1.0f}) {
      const std::uint16_t sign_bit = sign < 0 ? 0x8000 : 0;
      ASSERT_EQ(fp32_to_fp16(sign * mid), even | sign_bit) << "tie above pattern " << low;
      ASSERT_EQ(fp32_to_fp16(sign * std::nextafter(mid, 0.0f)), low | sign_bit)
          << "just below the tie above pattern " << low;
      ASSERT_EQ(fp32_to_fp16(sign * std::nextafter(mid, 1e30f)), (low + 1) | sign_bit)
          << "just above the tie above pattern " << low;
    }
  }
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::max()), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
}

TEST(HalfConversion, F32ToF16KeepsNaNAsQuietNaNWithItsSign) {
  for (const std::uint32_t nan_bits : {0x7FC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FA00000u}) {
    const std::uint16_t h = fp32_to_fp16(std::bit_cast<float>(nan_bits));
    EXPECT_TRUE(f16_is_nan(h)) << std::hex << nan_bits;
    EXPECT_NE(h & 0x0200, 0) << "quiet bit, input " << std::hex << nan_bits;
    EXPECT_EQ((h & 0x8000) != 0, (nan_bits & 0x80000000u) != 0);
  }
}

TEST(HalfConversion, BF16ToF32MatchesLdexpDecodingForAll65536Patterns) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const float got = bf16_to_fp32(b);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got), bits << 16) << "pattern " << bits;
    ASSERT_EQ(std::signbit(got), (b & 0x8000) != 0);
    if ((b & 0x7F80) == 0x7F80) {
      ASSERT_EQ(std::isnan(got), (b & 0x7F) != 0) << "pattern " << bits;
      ASSERT_EQ(std::isinf(got), (b & 0x7F) == 0) << "pattern " << bits;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), bf16_value(b)) << "pattern " << bits;
  }
}

TEST(HalfConversion, F32ToBF16RoundTripsAndRoundsToNearestEvenWithoutFlushingSubnormals) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    if (bf16_is_nan(b)) continue;
    ASSERT_EQ(fp32_to_bf16(bf16_to_fp32(b)), b) << "pattern " << bits;
  }
  for (std::uint32_t low = 0; low < 0x7F80; ++low) {
    const double a = bf16_value(static_cast<std::uint16_t>(low));
    const double b =
        low + 1 == 0x7F80 ? std::ldexp(1.0, 128) : bf16_value(static_cast<std::uint16_t>(low + 1));
    const auto mid = static_cast<float>((a + b) / 2);  // 9 significant bits: exact
    ASSERT_EQ(static_cast<double>(mid), (a + b) / 2);
    const std::uint16_t even =
        (low & 1) == 0 ? static_cast<std::uint16_t>(low) : static_cast<std::uint16_t>(low + 1);
    ASSERT_EQ(fp32_to_bf16(mid), even) << "tie above pattern " << low;
    ASSERT_EQ(fp32_to_bf16(-mid), even | 0x8000) << "negative tie above pattern " << low;
    ASSERT_EQ(fp32_to_bf16(std::nextafter(mid, 0.0f)), low) << "below tie above " << low;
    ASSERT_EQ(fp32_to_bf16(std::nextafter(mid, std::numeric_limits<float>::infinity())), low + 1)
        << "above tie " << low;
  }
}

TEST(HalfConversion, F32ToBF16KeepsNaNAsQuietNaNWithItsSign) {
  for (const std::uint32_t nan_bits : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu}) {
    const std::uint16_t b = fp32_to_bf16(std::bit_cast<float>(nan_bits));
    EXPECT_TRUE(bf16_is_nan(b)) << std::hex << nan_bits;
    EXPECT_NE(b & 0x0040, 0) << "quiet bit, input " << std::hex << nan_bits;
    EXPECT_EQ((b & 0x8000) != 0, (nan_bits & 0x80000000u) != 0);
  }
}

}  // namespace
