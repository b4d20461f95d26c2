// Reference quantizers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, plus F16/BF16 narrowing):
// * blocks whose encoded bytes were worked out by hand from ggml's reference algorithms,
//   including its rounding rules (Q8_0 rounds half away from zero; the 4/5-bit formats truncate
//   x / d + 8.5, + 16.5 or + 0.5) and its all-zero block (Q4_0/Q5_0 store d = -0.0);
// * round trips on ggml test-quantize-fns' synthetic data 0.1 + 2 cos(i + offset) under its error
//   metric and threshold, and a per-element error bound of half a quantization step;
// * re-encoding the quant-zoo references (the exact decoded values of llama-quantize's output)
//   reproduces llama-quantize's bytes.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/core/dtype.hpp"
#include "shared_data.hpp"

namespace {

namespace fs = std::filesystem;
using eredu::DType;
namespace enc = eredu::encoding;

std::vector<std::uint8_t> encode(DType dtype, const std::vector<float>& x) {
  const auto size = enc::encoded_size(dtype, x.size());
  EXPECT_TRUE(size.has_value());
  std::vector<std::uint8_t> out(size.value_or(0));
  const auto result = enc::quantize(dtype, x, std::as_writable_bytes(std::span(out)));
  EXPECT_TRUE(result.has_value()) << result.error().what();
  return out;
}

std::vector<float> decode(DType dtype, const std::vector<std::uint8_t>& raw) {
  const eredu::DTypeInfo& info = eredu::dtype_info(dtype);
  std::vector<float> out(raw.size() / info.block_bytes * info.block_elements);
  const auto result = enc::dequantize(dtype, std::as_bytes(std::span(raw)), out);
  EXPECT_TRUE(result.has_value()) << result.error().what();
  return out;
}

std::vector<std::uint8_t> bytes(std::initializer_list<int> prefix, std::size_t total, int fill) {
  std::vector<std::uint8_t> out(total, static_cast<std::uint8_t>(fill));
  std::size_t i = 0;
  for (int v : prefix)
    out[i++] = static_cast<std::uint8_t>(v);
  return out;
}

// ---------------------------------------------------------------- hand-computed blocks

TEST(QuantizeKnownBlock, AllZeroBlocksEncodeAsGgmlDoes) {
  const std::vector<float> zeros(32, 0.0f);
  // Q4_0 / Q5_0: d = max / -8 = 0 / -8 = -0.0 (F16 0x8000); every code is the zero point.
  EXPECT_EQ(encode(DType::kQ4_0, zeros), bytes({0x00, 0x80}, 18, 0x88));
  EXPECT_EQ(encode(DType::kQ5_0, zeros),
            bytes({0x00, 0x80, 0xFF, 0xFF, 0xFF, 0xFF}, 22, 0x00));  // code 16: qh bit set
  EXPECT_EQ(encode(DType::kQ8_0, zeros), bytes({}, 34, 0x00));
  EXPECT_EQ(encode(DType::kQ4_1, zeros), bytes({}, 20, 0x00));
  EXPECT_EQ(encode(DType::kQ5_1, zeros), bytes({}, 24, 0x00));
}

TEST(QuantizeKnownBlock, Q4_0SinglePositiveMaximumGivesNegativeScale) {
  std::vector<float> x(32, 0.0f);
  x[5] = 8.0f;  // d = 8 / -8 = -1; x[5] / d + 8.5 = 0.5 -> code 0; zeros -> code 8
  std::vector<std::uint8_t> want = bytes({0x00, 0xBC}, 18, 0x88);
  want[2 + 5] = 0x80;
  EXPECT_EQ(encode(DType::kQ4_0, x), want);
}

TEST(QuantizeKnownBlock, Q4_0TruncatesAfterAddingEightAndAHalf) {
  std::vector<float> x(32, 0.0f);
  x[20] = -8.0f;  // d = 1: element 20 is the high nibble of byte 4, code trunc(0.5) = 0
  x[1] = 0.49f;   // trunc(8.99) = 8
  x[2] = 0.5f;    // trunc(9.0) = 9
  x[3] = -0.5f;   // trunc(8.0) = 8
  x[6] = -0.51f;  // trunc(7.99) = 7
  x[7] = 7.9f;    // trunc(16.4) = 16, clamped to 15
  std::vector<std::uint8_t> want = bytes({0x00, 0x3C}, 18, 0x88);
  want[2 + 4] = 0x08;
  want[2 + 2] = 0x89;
  want[2 + 6] = 0x87;
  want[2 + 7] = 0x8F;
  EXPECT_EQ(encode(DType::kQ4_0, x), want);
}

TEST(QuantizeKnownBlock, Q8_0RoundsHalfAwayFromZero) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // d = 1
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 0.5f;
  x[4] = -127.0f;
  std::vector<std::uint8_t> want = bytes({0x00, 0x3C, 127, 3, 0xFD, 1, 0x81}, 34, 0x00);
  EXPECT_EQ(encode(DType::kQ8_0, x), want);
}

TEST(QuantizeKnownBlock, Q8_0SingleMaximumUsesAmaxOver127) {
  std::vector<float> x(32, 0.0f);
  x[5] = 8.0f;  // d = 8/127 = 0.0629921...: F16 2^-4 * (1 + 8/1024) = 0x2C08
  std::vector<std::uint8_t> want = bytes({0x08, 0x2C}, 34, 0x00);
  want[2 + 5] = 127;
  EXPECT_EQ(encode(DType::kQ8_0, x), want);
}

TEST(QuantizeKnownBlock, Q5_0SingleNegativeMaximumClearsOneHighBit) {
  std::vector<float> x(32, 0.0f);
  x[0] = -16.0f;  // d = 1; element 0 -> code 0; zeros -> code 16 (nibble 0, high bit 1)
  EXPECT_EQ(encode(DType::kQ5_0, x), bytes({0x00, 0x3C, 0xFE, 0xFF, 0xFF, 0xFF}, 22, 0x00));
}

TEST(QuantizeKnownBlock, Q4_1AndQ5_1UseMinimumAndRange) {
  std::vector<float> ramp16(32);
  for (int j = 0; j < 32; ++j)
    ramp16[j] = static_cast<float>(j % 16);  // min 0, max 15: d = 1
  std::vector<std::uint8_t> want41 = bytes({0x00, 0x3C, 0x00, 0x00}, 20, 0);
  for (int j = 0; j < 16; ++j)
    want41[4 + j] = static_cast<std::uint8_t>(j | (j << 4));
  EXPECT_EQ(encode(DType::kQ4_1, ramp16), want41);

  std::vector<float> ramp32(32);
  for (int j = 0; j < 32; ++j)
    ramp32[j] = static_cast<float>(j) - 4.0f;  // min -4, d = 1
  std::vector<std::uint8_t> want51 = bytes({0x00, 0x3C, 0x00, 0xC4, 0x00, 0x00, 0xFF, 0xFF}, 24, 0);
  for (int j = 0; j < 16; ++j)
    want51[8 + j] = static_cast<std::uint8_t>(j | (j << 4));
  EXPECT_EQ(encode(DType::kQ5_1, ramp32), want51);
}

// ---------------------------------------------------------------- synthetic round trips

struct RoundTripCase {
  const char* name;
  DType dtype;
  int max_code;  // largest code magnitude the scale multiplies
  bool affine;   // stores a minimum m
};
void PrintTo(const RoundTripCase& c, std::ostream* os) {
  *os << c.name;
}

class QuantizeRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

std::vector<float> synthetic(std::size_t n, float offset) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(0.1 + 2 * std::cos(static_cast<float>(i) + offset));
  }
  return x;
}

TEST_P(QuantizeRoundTrip, ErrorIsWithinGgmlThresholdAndHalfAStepPerElement) {
  const RoundTripCase& c = GetParam();
  const std::size_t n = 32 * 128;  // ggml test-quantize-fns' test size
  for (const float offset : {0.0f, 0.37f, 100.0f}) {
    const std::vector<float> x = synthetic(n, offset);
    const std::vector<std::uint8_t> raw = encode(c.dtype, x);
    const std::vector<float> y = decode(c.dtype, raw);
    ASSERT_EQ(y.size(), n);
    // ggml's metric: sqrt(sum of squared errors) / n, threshold MAX_QUANTIZATION_TOTAL_ERROR.
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      sum += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    EXPECT_LT(std::sqrt(sum) / n, 0.002) << "offset " << offset;
    // Per element: half a step of the stored scale, plus what rounding d (and m) to F16 costs.
    const std::size_t block_bytes = eredu::dtype_info(c.dtype).block_bytes;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* block = raw.data() + (i / 32) * block_bytes;
      const double d =
          std::fabs(enc::fp16_to_fp32(static_cast<std::uint16_t>(block[0] | block[1] << 8)));
      const double m =
          c.affine
              ? std::fabs(enc::fp16_to_fp32(static_cast<std::uint16_t>(block[2] | block[3] << 8)))
              : 0.0;
      const double bound = 0.5 * d + (c.max_code * d + m) * 0x1p-11 * 1.01 + 1e-7;
      ASSERT_LE(std::fabs(double(x[i]) - y[i]), bound) << "element " << i << " offset " << offset;
    }
  }
}

TEST_P(QuantizeRoundTrip, ReencodingDecodedValuesReproducesTheBytes) {
  const RoundTripCase& c = GetParam();
  const std::vector<float> x = synthetic(32 * 64, 1.5f);
  const std::vector<std::uint8_t> once = encode(c.dtype, x);
  EXPECT_EQ(encode(c.dtype, decode(c.dtype, once)), once);
}

INSTANTIATE_TEST_SUITE_P(ReferenceQuantizers, QuantizeRoundTrip,
                         ::testing::Values(RoundTripCase{"Q8_0", DType::kQ8_0, 127, false},
                                           RoundTripCase{"Q4_0", DType::kQ4_0, 8, false},
                                           RoundTripCase{"Q4_1", DType::kQ4_1, 15, true},
                                           RoundTripCase{"Q5_0", DType::kQ5_0, 16, false},
                                           RoundTripCase{"Q5_1", DType::kQ5_1, 31, true}),
                         [](const ::testing::TestParamInfo<RoundTripCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

TEST(QuantizeFloat, F16AndBF16EncodeEachElementRoundedToNearestEven) {
  const std::vector<float> x = {1.0f, -0.0f, 65520.0f, 0x1p-25f, 1.0f + 0x1p-11f, 3.0e-39f};
  const std::vector<std::uint8_t> f16 = encode(DType::kF16, x);
  EXPECT_EQ(f16, (std::vector<std::uint8_t>{0x00, 0x3C, 0x00, 0x80, 0x00, 0x7C, 0x00, 0x00, 0x00,
                                            0x3C, 0x00, 0x00}));
  const std::vector<std::uint8_t> bf16 = encode(DType::kBF16, x);
  // 3.0e-39 is an F32 subnormal (bits 0x0020AAAB): BF16 keeps it as 0x0021, not zero.
  EXPECT_EQ(bf16, (std::vector<std::uint8_t>{0x80, 0x3F, 0x00, 0x80, 0x80, 0x47, 0x00, 0x33, 0x80,
                                             0x3F, 0x21, 0x00}));
}

// ---------------------------------------------------------------- llama-quantize's bytes

struct ZooCase {
  const char* variant;
  DType dtype;
};
void PrintTo(const ZooCase& c, std::ostream* os) {
  *os << c.variant;
}

class QuantizeReproducesLlamaQuantize : public ::testing::TestWithParam<ZooCase> {};

TEST_P(QuantizeReproducesLlamaQuantize, ReencodingZooReferencesGivesTheFileBytes) {
  const fs::path zoo = eredu::testing::testdata_dir() / "quant-zoo";
  EREDU_REQUIRE_SHARED_PATH(zoo / "manifest.json");
  std::ifstream manifest_stream(zoo / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_stream);
  const ZooCase& c = GetParam();
  for (const nlohmann::json& variant : manifest.at("variants")) {
    if (variant.at("variant").get<std::string>() != c.variant) continue;
    const fs::path gguf = zoo / variant.at("file").get<std::string>();
    EREDU_REQUIRE_SHARED_PATH(gguf);
    for (const nlohmann::json& tensor : variant.at("tensors")) {
      SCOPED_TRACE(tensor.at("name").get<std::string>());
      const auto n = tensor.at("n_elements").get<std::size_t>();
      const auto n_bytes = tensor.at("n_bytes").get<std::size_t>();
      std::vector<float> reference(n);
      std::ifstream ref(zoo / tensor.at("reference").get<std::string>(), std::ios::binary);
      ref.read(reinterpret_cast<char*>(reference.data()), static_cast<std::streamsize>(n * 4));
      ASSERT_TRUE(ref) << "reference file is short";
      std::vector<std::uint8_t> file_bytes(n_bytes);
      std::ifstream in(gguf, std::ios::binary);
      in.seekg(tensor.at("data_offset").get<std::streamoff>());
      in.read(reinterpret_cast<char*>(file_bytes.data()), static_cast<std::streamsize>(n_bytes));
      ASSERT_TRUE(in) << "tensor bytes are short";
      const std::vector<std::uint8_t> ours = encode(c.dtype, reference);
      ASSERT_EQ(ours.size(), file_bytes.size());
      std::size_t differing = 0;
      for (std::size_t i = 0; i < ours.size(); ++i)
        differing += ours[i] != file_bytes[i];
      EXPECT_EQ(differing, 0u);
    }
    return;
  }
  FAIL() << "variant " << c.variant << " is not in the manifest";
}

INSTANTIATE_TEST_SUITE_P(
    EncodableVariants, QuantizeReproducesLlamaQuantize,
    ::testing::Values(ZooCase{"Q8_0", DType::kQ8_0}, ZooCase{"Q4_0", DType::kQ4_0},
                      ZooCase{"Q4_1", DType::kQ4_1}, ZooCase{"Q5_0", DType::kQ5_0},
                      ZooCase{"Q5_1", DType::kQ5_1}, ZooCase{"F16", DType::kF16},
                      ZooCase{"BF16", DType::kBF16}),
    [](const ::testing::TestParamInfo<ZooCase>& param_info) {
      return std::string(param_info.param.variant);
    });

}  // namespace
