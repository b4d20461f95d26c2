// The q8_1 integer block dots (dot/) of every weight format, on the CPU, with block_dot_check.hpp:
// on random rows (random codes, scales and high bits, random F16 scales of several magnitudes
// including F16 subnormals) and on every row of every quant-zoo tensor, each against a quantized
// random activation: the dp4a sums equal plain integer loops exactly, and the float result equals
// the float64 sum of decoded weight x dequantized activation within the derived bound.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "block_dot_check.hpp"
#include "eredu/backends/cuda/dot/all_dots.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/dtype.hpp"
#include "zoo_tensors.hpp"

namespace {

namespace dot = eredu::cuda::dot;
using eredu::DType;

// A quantized activation row of n floats (normal values with a few outliers).
std::vector<dot::BlockQ8_1> random_activation(std::int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x)
    v = normal(rng);
  for (int k = 0; k < 4; ++k)
    x[rng() % x.size()] *= 30.0F;
  std::vector<dot::BlockQ8_1> act(x.size() / dot::kQK8_1);
  dot::quantize_row_q8_1(x.data(), act.data(), n);
  return act;
}

// Checks every row of `rows` x `n_blocks` blocks; returns how many rows were checked, stops at the
// first failure (reported through gtest) and records the largest error / bound ratio.
template <typename T>
int check_rows(const std::uint8_t* data, std::int64_t rows, std::int64_t n_blocks,
               std::mt19937& rng, double& worst_ratio) {
  const std::int64_t n = n_blocks * T::Format::kBlockElements;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::vector<dot::BlockQ8_1> act = random_activation(n, rng);
    const eredu::testing::RowDotCheck check = eredu::testing::check_row_dot<T>(
        data + r * n_blocks * T::Format::kBlockBytes, n_blocks, act.data());
    if (!check.failure.empty()) {
      ADD_FAILURE() << "row " << r << ": " << check.failure;
      return static_cast<int>(r);
    }
    if (check.bound > 0) worst_ratio = std::max(worst_ratio, check.error / check.bound);
  }
  return static_cast<int>(rows);
}

// Calls f.template operator()<Traits>() for the traits of `dtype`; false when there are none.
template <typename F>
bool with_dot_traits(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kQ8_0:
      return f.template operator()<dot::DotQ8_0>(), true;
    case DType::kQ4_0:
      return f.template operator()<dot::DotQ4_0>(), true;
    case DType::kQ4_1:
      return f.template operator()<dot::DotQ4_1>(), true;
    case DType::kQ5_0:
      return f.template operator()<dot::DotQ5_0>(), true;
    case DType::kQ5_1:
      return f.template operator()<dot::DotQ5_1>(), true;
    case DType::kQ2_K:
      return f.template operator()<dot::DotQ2_K>(), true;
    case DType::kQ3_K:
      return f.template operator()<dot::DotQ3_K>(), true;
    case DType::kQ4_K:
      return f.template operator()<dot::DotQ4_K>(), true;
    case DType::kQ5_K:
      return f.template operator()<dot::DotQ5_K>(), true;
    case DType::kQ6_K:
      return f.template operator()<dot::DotQ6_K>(), true;
    case DType::kIQ4_NL:
      return f.template operator()<dot::DotIQ4_NL>(), true;
    case DType::kIQ4_XS:
      return f.template operator()<dot::DotIQ4_XS>(), true;
    default:
      return false;
  }
}

// A format and the byte offsets of its F16 scale fields (random bytes there would give Inf/NaN).
struct RandomCase {
  const char* name;
  DType dtype;
  int f16_fields[2];  // -1: none
};

constexpr RandomCase kRandomCases[] = {
    {"Q8_0", DType::kQ8_0, {0, -1}},     {"Q4_0", DType::kQ4_0, {0, -1}},
    {"Q4_1", DType::kQ4_1, {0, 2}},      {"Q5_0", DType::kQ5_0, {0, -1}},
    {"Q5_1", DType::kQ5_1, {0, 2}},      {"Q2_K", DType::kQ2_K, {80, 82}},
    {"Q3_K", DType::kQ3_K, {108, -1}},   {"Q4_K", DType::kQ4_K, {0, 2}},
    {"Q5_K", DType::kQ5_K, {0, 2}},      {"Q6_K", DType::kQ6_K, {208, -1}},
    {"IQ4_NL", DType::kIQ4_NL, {0, -1}}, {"IQ4_XS", DType::kIQ4_XS, {0, -1}}};

// Names the case in test output (instead of gtest's byte dump of the struct).
void PrintTo(const RandomCase& c, std::ostream* os) {
  *os << c.name;
}

class CudaBlockDotRandom : public ::testing::TestWithParam<RandomCase> {};

TEST_P(CudaBlockDotRandom, IntegerSumsExactAndFloatMatchesFloat64Reference) {
  const RandomCase c = GetParam();
  const auto& info = eredu::dtype_info(c.dtype);
  const std::int64_t n_blocks = 2048 / static_cast<std::int64_t>(info.block_elements);
  const std::int64_t rows = 200;
  std::mt19937 rng(static_cast<std::uint32_t>(c.dtype) + 99u);
  std::vector<std::uint8_t> data(static_cast<std::size_t>(rows * n_blocks) * info.block_bytes);
  for (auto& byte : data)
    byte = static_cast<std::uint8_t>(rng());
  // Scales from F16 subnormals (as the quant-zoo Q6_K / IQ4_XS files have) to 0.5, either sign.
  const float magnitudes[] = {3e-6F, 1e-4F, 0.01F, 0.5F};
  for (std::size_t b = 0; b < data.size() / info.block_bytes; ++b) {
    for (int offset : c.f16_fields) {
      if (offset < 0) continue;
      const float v = magnitudes[rng() % 4] * (0.25F + static_cast<float>(rng() % 1000) / 1000.0F) *
                      (rng() % 2 == 0 ? 1.0F : -1.0F);
      const std::uint16_t h = eredu::encoding::fp32_to_fp16(v);
      std::memcpy(&data[b * info.block_bytes + static_cast<std::size_t>(offset)], &h, 2);
    }
  }
  double worst = 0.0;
  int checked = 0;
  ASSERT_TRUE(with_dot_traits(c.dtype, [&]<typename T>() {
    checked = check_rows<T>(data.data(), rows, n_blocks, rng, worst);
  }));
  EXPECT_EQ(checked, rows);
  std::printf("  %s random: %d rows, largest error / bound %.3g\n", c.name, checked, worst);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, CudaBlockDotRandom, ::testing::ValuesIn(kRandomCases),
                         [](const ::testing::TestParamInfo<RandomCase>& p) {
                           return std::string(p.param.name);
                         });

class CudaBlockDotOnZoo : public ::testing::TestWithParam<eredu::testing::ZooVariant> {};

TEST_P(CudaBlockDotOnZoo, EveryRowOfEveryTensor) {
  const eredu::testing::ZooVariant variant = GetParam();
  const auto gguf_path = eredu::testing::zoo_gguf(variant);
  EREDU_REQUIRE_SHARED_PATH(gguf_path);
  auto file = eredu::checkpoint::GgufFile::open(gguf_path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  std::mt19937 rng(static_cast<std::uint32_t>(variant.dtype) + 7u);
  int tensors = 0;
  std::int64_t rows_checked = 0;
  double worst = 0.0;
  for (const eredu::checkpoint::GgufTensorInfo& info : file->tensors()) {
    if (info.dtype != variant.dtype) continue;
    SCOPED_TRACE(std::string(variant.name) + " " + info.name);
    auto bytes = file->tensor_bytes(info);
    ASSERT_TRUE(bytes.has_value()) << bytes.error().what();
    const auto& dinfo = eredu::dtype_info(info.dtype);
    const auto n_blocks = static_cast<std::int64_t>(info.ne[0] / dinfo.block_elements);
    const auto rows = static_cast<std::int64_t>(info.element_count / info.ne[0]);
    ASSERT_EQ(static_cast<std::uint64_t>(rows * n_blocks) * dinfo.block_bytes, bytes->size());
    int checked = 0;
    ASSERT_TRUE(with_dot_traits(info.dtype, [&]<typename T>() {
      checked = check_rows<T>(reinterpret_cast<const std::uint8_t*>(bytes->data()), rows, n_blocks,
                              rng, worst);
    }));
    ASSERT_EQ(checked, rows);
    rows_checked += checked;
    ++tensors;
  }
  EXPECT_EQ(tensors, 16);
  std::printf("  %s quant-zoo: %d tensors, %lld rows, largest error / bound %.3g\n", variant.name,
              tensors, static_cast<long long>(rows_checked), worst);
}

// The quantized variants (F16 / BF16 weights have no integer block dot).
std::vector<eredu::testing::ZooVariant> quantized_zoo_variants() {
  std::vector<eredu::testing::ZooVariant> out;
  for (const auto& v : eredu::testing::kZooVariants) {
    if (v.dtype != DType::kF16 && v.dtype != DType::kBF16) out.push_back(v);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(QuantizedVariants, CudaBlockDotOnZoo,
                         ::testing::ValuesIn(quantized_zoo_variants()),
                         [](const ::testing::TestParamInfo<eredu::testing::ZooVariant>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
