// IQ4_NL and IQ4_XS quantizers (quantize_iq4_block.hpp).
//
// They do not claim llama-quantize's bytes, so the reference is the decoder: values are encoded
// with encoding::quantize() and decoded with encoding::dequantize(), whose IQ4 decoders are
// verified against llama.cpp's own output (test_dequantize_blocks.cpp, test_quant_zoo.cpp).
//   - values that ARE a scale times codebook values (every code present) come back exactly: the
//     scale search, the nibble order and, for IQ4_XS, the 6-bit sub-block scales (low and high
//     bits) all have to be right for that;
//   - on normal weights the error is below Q4_0's (the point of the non-uniform codebook) and
//     within the codebook's widest step per element;
//   - zeros, huge and tiny values give finite, deterministic bytes with every byte written.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "codec_round_trip.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/core/dtype.hpp"

namespace {

using eredu::DType;
namespace enc = eredu::encoding;

using eredu::testing::codec::decode;
using eredu::testing::codec::encode;

// 32 elements d * kIQ4NLValues[q] with every code q present once or twice, in a shuffled order.
std::vector<float> codebook_block(std::mt19937& rng, float d) {
  std::vector<int> codes(32);
  for (int j = 0; j < 32; ++j)
    codes[j] = j % 16;
  std::shuffle(codes.begin(), codes.end(), rng);
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j)
    x[j] = d * static_cast<float>(enc::kIQ4NLValues[codes[j]]);
  return x;
}

float half(float v) {
  return enc::fp16_to_fp32(enc::fp32_to_fp16(v));
}

TEST(Iq4Quantize, IQ4_NLReproducesValuesThatAreAHalfScaleTimesCodebookValues) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  for (int trial = 0; trial < 200; ++trial) {
    const float d = half(scale(rng));
    if (d == 0.0f) continue;
    const std::vector<float> x = codebook_block(rng, d);
    const std::vector<float> y = decode(DType::kIQ4_NL, encode(DType::kIQ4_NL, x, 0), 32);
    for (int j = 0; j < 32; ++j)
      ASSERT_EQ(y[j], x[j]) << "trial " << trial << " element " << j << " d " << d;
  }
}

TEST(Iq4Quantize, IQ4_XSReproducesSubBlockScalesOfEverySixBitValue) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> scale(0.0005f, 0.002f);
  for (int trial = 0; trial < 64; ++trial) {
    const float d = half(scale(rng));
    // Sub-block u has scale l_u in [-32, 31]; one sub-block holds -32 (the largest magnitude,
    // which fixes d) and the others sweep the range, so every high-bit pair and low nibble occurs.
    std::vector<float> x;
    for (int u = 0; u < 8; ++u) {
      const int l = u == trial % 8 ? -32 : -31 + (8 * trial + u) % 63;
      const std::vector<float> b = codebook_block(rng, d * static_cast<float>(l));
      x.insert(x.end(), b.begin(), b.end());
    }
    const std::vector<float> y = decode(DType::kIQ4_XS, encode(DType::kIQ4_XS, x, 0), 256);
    for (int j = 0; j < 256; ++j)
      ASSERT_EQ(y[j], x[j]) << "trial " << trial << " element " << j;
  }
}

double rms_error(DType dtype, const std::vector<float>& x) {
  const std::vector<float> y = decode(dtype, encode(dtype, x, 0), x.size());
  double sse = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    sse += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
  return std::sqrt(sse / static_cast<double>(x.size()));
}

TEST(Iq4Quantize, NormalWeightsLoseLessThanWithQ4_0AndStayWithinTheWidestStep) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(256 * 64);
  for (float& e : x)
    e = normal(rng);
  const double q4_0 = rms_error(DType::kQ4_0, x);
  for (DType dtype : {DType::kIQ4_NL, DType::kIQ4_XS}) {
    const double rms = rms_error(dtype, x);
    std::printf("%s RMS error on N(0, 0.02): %.3g (Q4_0: %.3g)\n",
                std::string(eredu::to_string(dtype)).c_str(), rms, q4_0);
    EXPECT_LT(rms, q4_0) << eredu::to_string(dtype);
    // Per element: within the widest gap of the codebook (-127 .. -104: 23 units) of the block's
    // scale, and the scale is about max |x| / 113 or less: max |x| * 24 / 113 bounds it.
    const std::vector<float> y = decode(dtype, encode(dtype, x, 0), x.size());
    for (std::size_t b = 0; b < x.size(); b += 32) {
      float amax = 0;
      for (std::size_t j = 0; j < 32; ++j)
        amax = std::max(amax, std::fabs(x[b + j]));
      for (std::size_t j = 0; j < 32; ++j)
        ASSERT_LE(std::fabs(y[b + j] - x[b + j]), amax * 24.0f / 113.0f)
            << eredu::to_string(dtype) << " element " << b + j;
    }
  }
}

TEST(Iq4Quantize, ZeroHugeAndTinyBlocksGiveFiniteDeterministicBytes) {
  std::vector<float> x(256, 0.0f);
  for (int j = 32; j < 64; ++j)
    x[j] = (j % 2 ? 1.0f : -1.0f) * 3.0e38f;  // scales clamp to the largest F16
  for (int j = 64; j < 96; ++j)
    x[j] = static_cast<float>(j) * 1e-30f;  // a scale that is zero in F16
  x[100] = 1.0f;
  for (DType dtype : {DType::kIQ4_NL, DType::kIQ4_XS}) {
    SCOPED_TRACE(std::string(eredu::to_string(dtype)));
    const auto a = encode(dtype, x, 0x00);
    EXPECT_EQ(a, encode(dtype, x, 0xFF));  // a byte left unwritten would keep its fill
    const std::vector<float> y = decode(dtype, a, x.size());
    for (int j = 0; j < 32; ++j)
      EXPECT_EQ(y[j], 0.0f) << j;
    for (float v : y)
      EXPECT_TRUE(std::isfinite(v));
    if (dtype == DType::kIQ4_NL) {
      for (int j = 32; j < 64; ++j)  // the largest F16 scale times +-113 / -127
        EXPECT_GT(std::fabs(y[j]), 6.0e6f) << j;
      EXPECT_NEAR(y[100], 1.0f, 1.0f / 113.0f);
    }
  }
}

}  // namespace
