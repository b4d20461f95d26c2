// K-quant reference quantizers (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, quantize_k_block.hpp).
//
// They do not reproduce llama-quantize's bytes, so the reference is the decoder: rows are encoded
// with encoding::quantize() and decoded with encoding::dequantize(), whose K-quant decoders are
// verified bit-exact against llama.cpp's own output (test_dequantize_blocks.cpp,
// test_quant_zoo.cpp). A packing mistake (a swapped nibble, a misplaced high bit or scale) shows up
// as a decoded value far from its input, so the per-element error bound below checks the layout as
// well as the approximation. The bound is one quantization step of the super-block's widest grid,
// derived from the format's bit width:
//   affine (Q2_K, Q4_K, Q5_K)  value = scale * q - min, q in [0, 2^b - 1], with min >= 0, so the
//                              grid spans [min(x, 0), max(x, 0)]: step = that span / (2^b - 1)
//   symmetric (Q3_K, Q6_K)     value = scale * q, q in [-2^(b-1), 2^(b-1) - 1]:
//                              step = max |x| / 2^(b-1)
// and the RMS error of a super-block must stay under half of that step.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "codec_round_trip.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/core/dtype.hpp"

namespace {

using eredu::DType;
namespace enc = eredu::encoding;

constexpr std::size_t kSuper = 256;

struct KFormat {
  DType dtype;
  int bits;
  bool affine;
};
const std::vector<KFormat> kFormats = {{DType::kQ2_K, 2, true},
                                       {DType::kQ3_K, 3, false},
                                       {DType::kQ4_K, 4, true},
                                       {DType::kQ5_K, 5, true},
                                       {DType::kQ6_K, 6, false}};

using eredu::testing::codec::decode;
using eredu::testing::codec::encode;

double grid_step(const KFormat& f, const float* x) {
  float lo = 0.0f, hi = 0.0f, amax = 0.0f;
  for (std::size_t i = 0; i < kSuper; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    amax = std::max(amax, std::fabs(x[i]));
  }
  if (f.affine) return (static_cast<double>(hi) - lo) / ((1 << f.bits) - 1);
  return static_cast<double>(amax) / (1 << (f.bits - 1));
}

// Rows of 4 super-blocks in the shapes that stress a block quantizer.
struct NamedRow {
  std::string name;
  std::vector<float> values;
};
std::vector<NamedRow> test_rows() {
  std::vector<NamedRow> rows;
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t n = 4 * kSuper;
  for (float scale : {1e-3f, 0.02f, 1.0f, 100.0f}) {
    std::vector<float> v(n);
    for (float& e : v)
      e = scale * normal(rng);
    rows.push_back({"normal*" + std::to_string(scale), v});
    for (float& e : v)
      e = -std::fabs(e);
    rows.push_back({"negative-only*" + std::to_string(scale), v});
    for (float& e : v)
      e = -e;
    rows.push_back({"positive-only*" + std::to_string(scale), v});
  }
  rows.push_back({"all-zero", std::vector<float>(n, 0.0f)});
  rows.push_back({"constant 0.5", std::vector<float>(n, 0.5f)});
  rows.push_back({"constant -0.75", std::vector<float>(n, -0.75f)});
  std::vector<float> outlier(n);
  for (float& e : outlier)
    e = 0.02f * normal(rng);
  outlier[37] = 3.0f;    // one large positive element in the first super-block
  outlier[300] = -2.5f;  // and a negative one in the second
  rows.push_back({"one outlier", outlier});
  std::vector<float> mixed(n);  // sub-blocks of very different ranges within one super-block
  for (std::size_t i = 0; i < n; ++i)
    mixed[i] = normal(rng) * ((i / 16) % 3 == 0 ? 1.0f : 0.01f);
  rows.push_back({"mixed sub-block ranges", mixed});
  std::vector<float> uniform(n);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& e : uniform)
    e = u(rng);
  rows.push_back({"uniform", uniform});
  return rows;
}

TEST(KQuantQuantize, RoundTripErrorIsWithinOneGridStepAndRmsWithinHalfAStep) {
  const auto rows = test_rows();
  for (const KFormat& f : kFormats) {
    for (const NamedRow& row : rows) {
      SCOPED_TRACE(std::string(eredu::to_string(f.dtype)) + " " + row.name);
      const auto y = decode(f.dtype, encode(f.dtype, row.values, 0), row.values.size());
      for (std::size_t b = 0; b < row.values.size() / kSuper; ++b) {
        const float* x = row.values.data() + b * kSuper;
        const double step = grid_step(f, x);
        double sse = 0;
        double worst = 0;
        for (std::size_t i = 0; i < kSuper; ++i) {
          const double err = std::fabs(static_cast<double>(y[b * kSuper + i]) - x[i]);
          sse += err * err;
          worst = std::max(worst, err);
        }
        const double rms = std::sqrt(sse / kSuper);
        // 1.01: the F16 super-block scales are rounded to 11 significant bits.
        EXPECT_LE(worst, step * 1.01) << "super-block " << b;
        EXPECT_LE(rms, step * 0.5) << "super-block " << b;
      }
    }
  }
}

TEST(KQuantQuantize, AllZeroRowsDecodeToExactZerosAndConstantRowsNearlyExactly) {
  for (const KFormat& f : kFormats) {
    SCOPED_TRACE(std::string(eredu::to_string(f.dtype)));
    const std::vector<float> zeros(kSuper, 0.0f);
    for (float v : decode(f.dtype, encode(f.dtype, zeros, 0xFF), kSuper))
      EXPECT_EQ(v, 0.0f);
    for (float c : {0.5f, -0.75f, 3.0f}) {
      const std::vector<float> constant(kSuper, c);
      // Every element of the block is the same extreme, so it sits on the grid up to the F16
      // rounding of the scales (relative 2^-11 per factor).
      for (float v : decode(f.dtype, encode(f.dtype, constant, 0), kSuper))
        EXPECT_NEAR(v, c, std::fabs(c) * 2e-3) << c;
    }
  }
}

TEST(KQuantQuantize, EveryByteIsWrittenAndTheEncodingIsDeterministic) {
  const auto rows = test_rows();
  for (const KFormat& f : kFormats) {
    SCOPED_TRACE(std::string(eredu::to_string(f.dtype)));
    for (const NamedRow& row : rows) {
      const auto a = encode(f.dtype, row.values, 0x00);
      const auto b = encode(f.dtype, row.values, 0xFF);
      EXPECT_EQ(a, b) << row.name;  // a byte left unwritten would keep its fill
      EXPECT_EQ(a.size(), row.values.size() / kSuper * eredu::dtype_info(f.dtype).block_bytes);
    }
  }
}

TEST(KQuantQuantize, MoreBitsGiveLessErrorOnNormalWeights) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(64 * kSuper);
  for (float& e : x)
    e = normal(rng);
  double previous = INFINITY;
  for (const KFormat& f : kFormats) {  // ordered by bit width
    const auto y = decode(f.dtype, encode(f.dtype, x, 0), x.size());
    double sse = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      sse += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
    const double rms = std::sqrt(sse / static_cast<double>(x.size()));
    std::printf("%s RMS error on N(0, 0.02): %.3g (%.2f%% of sigma)\n",
                std::string(eredu::to_string(f.dtype)).c_str(), rms, 100.0 * rms / 0.02);
    EXPECT_LT(rms, previous) << eredu::to_string(f.dtype);
    // A uniform quantizer with 2^b levels over about +-3 sigma has RMS error near
    // (6 sigma / 2^b) / sqrt(12); allow twice that.
    EXPECT_LT(rms, 2.0 * (6 * 0.02 / (1 << f.bits)) / std::sqrt(12.0)) << eredu::to_string(f.dtype);
    previous = rms;
  }
}

TEST(KQuantQuantize, NonFiniteInputIsRefusedNamingTheElement) {
  for (const KFormat& f : kFormats) {
    std::vector<float> x(kSuper, 0.1f);
    x[200] = NAN;
    std::vector<std::byte> out(eredu::dtype_info(f.dtype).block_bytes);
    const auto r = enc::quantize(f.dtype, x, out);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("200"), std::string::npos) << r.error().what();
  }
}

TEST(KQuantQuantize, HugeAndTinyFiniteValuesEncodeWithoutOverflowingTheF16Scales) {
  for (const KFormat& f : kFormats) {
    SCOPED_TRACE(std::string(eredu::to_string(f.dtype)));
    std::vector<float> x(kSuper);
    for (std::size_t i = 0; i < kSuper; ++i)
      x[i] = (i % 2 ? 1.0f : -1.0f) * 1e30f * static_cast<float>(i + 1) / kSuper;
    for (float v : decode(f.dtype, encode(f.dtype, x, 0), kSuper))
      EXPECT_TRUE(std::isfinite(v));  // clamped to F16 scales, never inf or NaN
    std::vector<float> tiny(kSuper, 1e-30f);
    for (float v : decode(f.dtype, encode(f.dtype, tiny, 0), kSuper))
      EXPECT_NEAR(v, 0.0f, 1e-7f);
  }
}

}  // namespace
