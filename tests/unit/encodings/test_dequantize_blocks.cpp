// Block decoders against independent references:
// * hand-built blocks whose decoded values were worked out by hand from the format definitions;
// * random blocks compared with element-wise decoders written in this file, which locate each
//   element's bits by direct index arithmetic on the raw bytes (no block structs; the packed
//   6-bit scales of Q3_K and Q4_K/Q5_K are unpacked with 32-bit word masks, as ggml's SIMD paths
//   do, instead of per-index byte selection as the library does).

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/encoding/dequantize_block.hpp"
#include "eredu/core/dtype.hpp"

namespace {

using eredu::DType;
namespace enc = eredu::encoding;

constexpr std::array<int, 16> kCodebook = {-127, -104, -83, -65, -49, -35, -22, -10,
                                           1,    13,   25,  38,  53,  69,  89,  113};

std::vector<float> decode(DType dtype, const std::vector<std::uint8_t>& raw) {
  const eredu::DTypeInfo& info = eredu::dtype_info(dtype);
  std::vector<float> out(raw.size() / info.block_bytes * info.block_elements);
  const auto result = enc::dequantize(dtype, std::as_bytes(std::span(raw)), out);
  EXPECT_TRUE(result.has_value()) << result.error().what();
  return out;
}

void put_u16(std::vector<std::uint8_t>& raw, std::size_t at, std::uint16_t v) {
  raw[at] = static_cast<std::uint8_t>(v & 0xFF);
  raw[at + 1] = static_cast<std::uint8_t>(v >> 8);
}

void expect_bits_equal(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
        << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
}

// ---------------------------------------------------------------- hand-computed blocks

TEST(DequantizeKnownBlock, Q4_0NibblesAreCodesMinusEightTimesScale) {
  std::vector<std::uint8_t> raw(18);
  put_u16(raw, 0, 0x3C00);  // d = 1
  for (int j = 0; j < 16; ++j)
    raw[2 + j] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = static_cast<float>(j - 8);
    want[16 + j] = static_cast<float>(7 - j);
  }
  want[8] = 0.0f;   // (8 - 8) * 1 = +0
  want[23] = 0.0f;  // (15 - 7) - 8 = 0
  expect_bits_equal(decode(DType::kQ4_0, raw), want);
}

TEST(DequantizeKnownBlock, Q4_0ZeroCodeWithNegativeScaleIsNegativeZero) {
  std::vector<std::uint8_t> raw(18, 0x88);  // every code 8: value (8 - 8) * d
  put_u16(raw, 0, 0xBC00);                  // d = -1
  const std::vector<float> got = decode(DType::kQ4_0, raw);
  for (float v : got)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(v), 0x80000000u);
}

TEST(DequantizeKnownBlock, Q4_1IsScaleTimesCodePlusMinimum) {
  std::vector<std::uint8_t> raw(20);
  put_u16(raw, 0, 0x3800);  // d = 0.5
  put_u16(raw, 2, 0xBC00);  // m = -1
  for (int j = 0; j < 16; ++j)
    raw[4 + j] = static_cast<std::uint8_t>(j | (j << 4));
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j)
    want[j] = want[16 + j] = 0.5f * static_cast<float>(j) - 1.0f;
  expect_bits_equal(decode(DType::kQ4_1, raw), want);
}

TEST(DequantizeKnownBlock, Q5_0FifthBitComesFromQhLittleEndianBitIndex) {
  std::vector<std::uint8_t> raw(22, 0);
  put_u16(raw, 0, 0x4000);  // d = 2
  raw[2] = 0xFF;            // qh = 0x0000FFFF: elements 0..15 have the fifth bit
  raw[3] = 0xFF;
  // Elements 0..15: code 16 -> 0 * 2 = +0. Elements 16..31: code 0 -> -16 * 2 = -32.
  std::vector<float> want(32, 0.0f);
  for (int j = 16; j < 32; ++j)
    want[j] = -32.0f;
  expect_bits_equal(decode(DType::kQ5_0, raw), want);
}

TEST(DequantizeKnownBlock, Q5_1HighBitsAddSixteen) {
  std::vector<std::uint8_t> raw(24, 0);
  put_u16(raw, 0, 0x3C00);  // d = 1
  put_u16(raw, 2, 0x4200);  // m = 3
  raw[7] = 0x80;            // qh bit 31: element 31
  for (int j = 0; j < 16; ++j)
    raw[8 + j] = static_cast<std::uint8_t>(j << 4);
  std::vector<float> want(32, 3.0f);
  for (int j = 0; j < 16; ++j)
    want[16 + j] = static_cast<float>(j) + 3.0f;
  want[31] = 15.0f + 16.0f + 3.0f;
  expect_bits_equal(decode(DType::kQ5_1, raw), want);
}

TEST(DequantizeKnownBlock, Q8_0IsSignedByteTimesScale) {
  std::vector<std::uint8_t> raw(34);
  put_u16(raw, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 32; ++j)
    raw[2 + j] = static_cast<std::uint8_t>(j - 16);
  std::vector<float> want(32);
  for (int j = 0; j < 32; ++j)
    want[j] = 0.5f * static_cast<float>(j - 16);
  expect_bits_equal(decode(DType::kQ8_0, raw), want);
}

TEST(DequantizeKnownBlock, Q2_KSubBlockScalesAndMinimumsApplyPerSixteen) {
  std::vector<std::uint8_t> raw(84, 0);
  for (int s = 0; s < 16; ++s)
    raw[s] = static_cast<std::uint8_t>(s | ((15 - s) << 4));
  for (int i = 0; i < 64; ++i)
    raw[16 + i] = 0xE4;      // codes 0,1,2,3 at shifts 0,2,4,6
  put_u16(raw, 80, 0x3C00);  // d = 1
  put_u16(raw, 82, 0x3800);  // dmin = 0.5
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) {
    const int s = i / 16;
    const int code = (i % 128) / 32;  // the shift group of element i
    want[i] = static_cast<float>(s * code) - 0.5f * static_cast<float>(15 - s);
  }
  expect_bits_equal(decode(DType::kQ2_K, raw), want);
}

TEST(DequantizeKnownBlock, Q3_KHighBitClearedSubtractsFour) {
  std::vector<std::uint8_t> raw(110, 0);
  for (int i = 0; i < 16; ++i)
    raw[i] = 0xFF;  // hmask of elements l = 0..15: all set
  for (int i = 0; i < 64; ++i)
    raw[32 + i] = 0xE4;
  for (int i = 0; i < 8; ++i)
    raw[96 + i] = 0x11;  // every scale code = 1 | (2 << 4) = 33
  for (int i = 8; i < 12; ++i)
    raw[96 + i] = 0xAA;       // -> scale 33 - 32 = 1
  put_u16(raw, 108, 0x4000);  // d = 2
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) {
    const int low = (i % 128) / 32;
    const bool high = i % 32 < 16;  // hmask bytes 0..15 are set, 16..31 clear
    want[i] = 2.0f * static_cast<float>(low - (high ? 0 : 4));
  }
  want[0] = want[128] = 0.0f;  // (2 * 1) * 0 = +0
  expect_bits_equal(decode(DType::kQ3_K, raw), want);
}

TEST(DequantizeKnownBlock, Q6_KZeroScaleTimesNegativeCodeIsNegativeZero) {
  std::vector<std::uint8_t> raw(210, 0);  // all codes 0 -> q - 32 = -32
  for (int s = 0; s < 16; ++s)
    raw[192 + s] = static_cast<std::uint8_t>(s - 8);
  put_u16(raw, 208, 0x3C00);  // d = 1
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i)
    want[i] = static_cast<float>(i / 16 - 8) * -32.0f;
  for (int i = 128; i < 144; ++i)
    want[i] = -0.0f;  // (1 * 0) * -32 = -0 in sub-block 8
  expect_bits_equal(decode(DType::kQ6_K, raw), want);
}

TEST(DequantizeKnownBlock, IQ4_NLIndexesTheNonLinearCodebook) {
  std::vector<std::uint8_t> raw(18);
  put_u16(raw, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; ++j)
    raw[2 + j] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = 0.5f * static_cast<float>(kCodebook[j]);
    want[16 + j] = 0.5f * static_cast<float>(kCodebook[15 - j]);
  }
  expect_bits_equal(decode(DType::kIQ4_NL, raw), want);
}

TEST(DequantizeKnownBlock, IQ4_XSSixBitScalesAreOffsetByThirtyTwo) {
  std::vector<std::uint8_t> raw(136, 0);
  put_u16(raw, 0, 0x3C00);  // d = 1
  put_u16(raw, 2, 0xAAAA);  // high scale bits 2 for every sub-block
  for (int i = 0; i < 4; ++i)
    raw[4 + i] = 0x31;  // low nibbles: even sub-blocks 1, odd 3
  for (int i = 0; i < 128; ++i)
    raw[8 + i] = static_cast<std::uint8_t>((i % 16) | 0xF0);
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) {
    const int scale = ((i / 32) % 2 == 0 ? 33 : 35) - 32;  // 1 or 3
    const int index = i % 32 < 16 ? i % 16 : 15;
    want[i] = static_cast<float>(scale) * static_cast<float>(kCodebook[index]);
  }
  expect_bits_equal(decode(DType::kIQ4_XS, raw), want);
}

// ---------------------------------------------------------------- element-wise references

float f16(const std::uint8_t* p) {
  return enc::fp16_to_fp32(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
}
std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
// Nibble of element i (< 32) in 16 bytes: low nibbles hold elements 0..15, high ones 16..31.
int nibble32(const std::uint8_t* qs, int i) {
  return i < 16 ? qs[i] & 0xF : qs[i - 16] >> 4;
}

float ref_q4_0(const std::uint8_t* b, int i) {
  return static_cast<float>(nibble32(b + 2, i) - 8) * f16(b);
}
float ref_q4_1(const std::uint8_t* b, int i) {
  return static_cast<float>(nibble32(b + 4, i)) * f16(b) + f16(b + 2);
}
float ref_q5_0(const std::uint8_t* b, int i) {
  const int code = nibble32(b + 6, i) | static_cast<int>(((le32(b + 2) >> i) & 1) << 4);
  return static_cast<float>(code - 16) * f16(b);
}
float ref_q5_1(const std::uint8_t* b, int i) {
  const int code = nibble32(b + 8, i) | static_cast<int>(((le32(b + 4) >> i) & 1) << 4);
  return static_cast<float>(code) * f16(b) + f16(b + 2);
}
float ref_q8_0(const std::uint8_t* b, int i) {
  return static_cast<float>(static_cast<std::int8_t>(b[2 + i])) * f16(b);
}
float ref_iq4_nl(const std::uint8_t* b, int i) {
  return f16(b) * static_cast<float>(kCodebook[nibble32(b + 2, i)]);
}

// 2-bit code of element i (< 256) in the 64-byte K-quant layout: byte 32 * (i / 128) + i % 32,
// bits 2 * ((i % 128) / 32).
int crumb256(const std::uint8_t* qs, int i) {
  return (qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
}

float ref_q2_k(const std::uint8_t* b, int i) {
  const std::uint8_t sc = b[i / 16];
  const float dl = f16(b + 80) * static_cast<float>(sc & 0xF);
  const float ml = f16(b + 82) * static_cast<float>(sc >> 4);
  return dl * static_cast<float>(crumb256(b + 16, i)) - ml;
}

// Q3_K scale codes via 32-bit word masks (ggml's kmask1/kmask2 formulation).
std::array<int, 16> q3_k_scale_codes(const std::uint8_t* s) {
  std::uint32_t aux[4] = {le32(s), le32(s + 4), le32(s + 8), 0};
  const std::uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & 0x0F0F0F0Fu) | (((tmp >> 4) & 0x03030303u) << 4);
  aux[3] = ((aux[1] >> 4) & 0x0F0F0F0Fu) | (((tmp >> 6) & 0x03030303u) << 4);
  aux[0] = (aux[0] & 0x0F0F0F0Fu) | (((tmp >> 0) & 0x03030303u) << 4);
  aux[1] = (aux[1] & 0x0F0F0F0Fu) | (((tmp >> 2) & 0x03030303u) << 4);
  std::array<int, 16> codes{};
  for (int j = 0; j < 16; ++j)
    codes[j] = static_cast<int>((aux[j / 4] >> (8 * (j % 4))) & 0xFF);
  return codes;
}
float ref_q3_k(const std::uint8_t* b, int i) {
  const std::array<int, 16> codes = q3_k_scale_codes(b + 96);
  const int high = (b[i % 32] >> (i / 32)) & 1;  // hmask byte i % 32, bit i / 32
  const int q = crumb256(b + 32, i) - (high != 0 ? 0 : 4);
  return (f16(b + 108) * static_cast<float>(codes[i / 16] - 32)) * static_cast<float>(q);
}

// Q4_K/Q5_K scales (0..7) and mins (8..15) via word masks (ggml's utmp formulation).
std::array<int, 16> k4_scales_mins(const std::uint8_t* s) {
  std::uint32_t u[4] = {le32(s), le32(s + 4), le32(s + 8), 0};
  u[3] = ((u[2] >> 4) & 0x0F0F0F0Fu) | (((u[1] >> 6) & 0x03030303u) << 4);
  const std::uint32_t mins_low = u[1] & 0x3F3F3F3Fu;
  u[1] = (u[2] & 0x0F0F0F0Fu) | (((u[0] >> 6) & 0x03030303u) << 4);
  u[2] = mins_low;
  u[0] &= 0x3F3F3F3Fu;
  std::array<int, 16> out{};
  for (int j = 0; j < 16; ++j)
    out[j] = static_cast<int>((u[j / 4] >> (8 * (j % 4))) & 0xFF);
  return out;
}
// 4-bit code of element i (< 256): byte 32 * (i / 64) + i % 32, low nibble if i % 64 < 32.
int nibble256(const std::uint8_t* qs, int i) {
  const std::uint8_t byte = qs[32 * (i / 64) + i % 32];
  return i % 64 < 32 ? byte & 0xF : byte >> 4;
}
float ref_q4_k(const std::uint8_t* b, int i) {
  const std::array<int, 16> sm = k4_scales_mins(b + 4);
  const float d = f16(b) * static_cast<float>(sm[i / 32]);
  const float m = f16(b + 2) * static_cast<float>(sm[8 + i / 32]);
  return d * static_cast<float>(nibble256(b + 16, i)) - m;
}
float ref_q5_k(const std::uint8_t* b, int i) {
  const std::array<int, 16> sm = k4_scales_mins(b + 4);
  const float d = f16(b) * static_cast<float>(sm[i / 32]);
  const float m = f16(b + 2) * static_cast<float>(sm[8 + i / 32]);
  const int high = (b[16 + i % 32] >> (i / 32)) & 1;  // qh byte i % 32, bit i / 32
  return d * static_cast<float>(nibble256(b + 48, i) | (high << 4)) - m;
}
float ref_q6_k(const std::uint8_t* b, int i) {
  const int half = i / 128;
  const int quarter = (i % 128) / 32;
  const int l = i % 32;
  const std::uint8_t low_byte = b[64 * half + 32 * (quarter % 2) + l];
  const int low = quarter < 2 ? low_byte & 0xF : low_byte >> 4;
  const int high = (b[128 + 32 * half + l] >> (2 * quarter)) & 3;
  const auto scale = static_cast<std::int8_t>(b[192 + i / 16]);
  return (f16(b + 208) * static_cast<float>(scale)) * static_cast<float>((low | (high << 4)) - 32);
}
float ref_iq4_xs(const std::uint8_t* b, int i) {
  const int sub = i / 32;
  const int low = (b[4 + sub / 2] >> (4 * (sub % 2))) & 0xF;
  const int high = ((b[2] | (b[3] << 8)) >> (2 * sub)) & 3;
  const float dl = f16(b) * static_cast<float>((low | (high << 4)) - 32);
  return dl * static_cast<float>(kCodebook[nibble32(b + 8 + 16 * sub, i % 32)]);
}

struct ElementwiseCase {
  const char* name;
  DType dtype;
  float (*reference)(const std::uint8_t*, int);
  std::vector<int> f16_field_offsets;  // scale fields to fill with finite F16 values
};

void PrintTo(const ElementwiseCase& c, std::ostream* os) {
  *os << c.name;
}

class DequantizeRandomBlocks : public ::testing::TestWithParam<ElementwiseCase> {};

TEST_P(DequantizeRandomBlocks, MatchElementwiseReferenceBitExactly) {
  const ElementwiseCase& c = GetParam();
  const eredu::DTypeInfo& info = eredu::dtype_info(c.dtype);
  constexpr int kBlocks = 300;
  std::mt19937 rng(20261129u + static_cast<unsigned>(c.dtype));
  std::uniform_int_distribution<int> byte(0, 255);
  // Finite F16 scales across normal and subnormal exponents, both signs.
  std::uniform_int_distribution<int> exponent(0, 20);
  std::uniform_int_distribution<int> mantissa(0, 1023);
  std::vector<std::uint8_t> raw(kBlocks * info.block_bytes);
  for (auto& v : raw)
    v = static_cast<std::uint8_t>(byte(rng));
  for (int blk = 0; blk < kBlocks; ++blk) {
    for (int offset : c.f16_field_offsets) {
      const auto h =
          static_cast<std::uint16_t>((byte(rng) & 0x80) << 8 | exponent(rng) << 10 | mantissa(rng));
      put_u16(raw, blk * info.block_bytes + static_cast<std::size_t>(offset), h);
    }
  }
  std::vector<float> want(kBlocks * info.block_elements);
  for (int blk = 0; blk < kBlocks; ++blk) {
    for (std::uint32_t i = 0; i < info.block_elements; ++i) {
      want[blk * info.block_elements + i] =
          c.reference(raw.data() + blk * info.block_bytes, static_cast<int>(i));
    }
  }
  expect_bits_equal(decode(c.dtype, raw), want);
}

INSTANTIATE_TEST_SUITE_P(
    AllBlockEncodings, DequantizeRandomBlocks,
    ::testing::Values(ElementwiseCase{"Q4_0", DType::kQ4_0, ref_q4_0, {0}},
                      ElementwiseCase{"Q4_1", DType::kQ4_1, ref_q4_1, {0, 2}},
                      ElementwiseCase{"Q5_0", DType::kQ5_0, ref_q5_0, {0}},
                      ElementwiseCase{"Q5_1", DType::kQ5_1, ref_q5_1, {0, 2}},
                      ElementwiseCase{"Q8_0", DType::kQ8_0, ref_q8_0, {0}},
                      ElementwiseCase{"Q2_K", DType::kQ2_K, ref_q2_k, {80, 82}},
                      ElementwiseCase{"Q3_K", DType::kQ3_K, ref_q3_k, {108}},
                      ElementwiseCase{"Q4_K", DType::kQ4_K, ref_q4_k, {0, 2}},
                      ElementwiseCase{"Q5_K", DType::kQ5_K, ref_q5_k, {0, 2}},
                      ElementwiseCase{"Q6_K", DType::kQ6_K, ref_q6_k, {208}},
                      ElementwiseCase{"IQ4_NL", DType::kIQ4_NL, ref_iq4_nl, {0}},
                      ElementwiseCase{"IQ4_XS", DType::kIQ4_XS, ref_iq4_xs, {0}}),
    [](const ::testing::TestParamInfo<ElementwiseCase>& param_info) {
      return std::string(param_info.param.name);
    });

// The row functions (ggml-style names, typed block pointers) agree with the checked byte API.
TEST(DequantizeRow, TypedRowFunctionMatchesByteApiForQ6_K) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> raw(4 * sizeof(enc::BlockQ6_K));
  for (auto& v : raw)
    v = static_cast<std::uint8_t>(rng());
  for (int blk = 0; blk < 4; ++blk)
    put_u16(raw, blk * 210 + 208, 0x1234);
  std::vector<enc::BlockQ6_K> blocks(4);
  std::memcpy(blocks.data(), raw.data(), raw.size());
  std::vector<float> via_row(1024);
  enc::dequantize_row_q6_K(blocks.data(), via_row.data(), via_row.size());
  expect_bits_equal(via_row, decode(DType::kQ6_K, raw));
}

// constexpr evaluation: a decoded block is usable at compile time.
constexpr float first_q8_0_value() {
  enc::BlockQ8_0 block{};
  block.d = 0x4000;  // 2
  block.qs[0] = -3;
  float out[32] = {};
  enc::dequantize_block(block, out);
  return out[0];
}
static_assert(first_q8_0_value() == -6.0f);

}  // namespace
