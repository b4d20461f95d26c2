// The dot building blocks on a real GPU (src/row_dot.cu): a random activation row quantized on
// the device must equal the host quantizer's blocks byte for byte, and every row of every
// quant-zoo tensor dotted on the device must be within the host test's bound of the float64
// reference (block_dot_check.hpp; the device may contract multiply-adds differently, so the
// floats are not compared bit for bit). Without a CUDA device these skip with
// "no CUDA device: ..."; the argument checks that return before any launch run everywhere.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "block_dot_check.hpp"
#include "device_memory.hpp"
#include "eredu/backends/cuda/device.hpp"
#include "eredu/backends/cuda/dot/all_dots.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "row_dot.hpp"
#include "zoo_tensors.hpp"

namespace {

namespace dot = eredu::cuda::dot;
using eredu::DType;
using eredu::testing::DeviceBytes;
using eredu::testing::ZooVariant;

TEST(CudaRowDotKernel, RejectsBadShapesAndEncodingsBeforeLaunching) {
  auto partial = eredu::cuda::launch_quantize_q8_1(nullptr, nullptr, 40, nullptr);
  ASSERT_FALSE(partial.has_value());
  EXPECT_EQ(partial.error().code(), eredu::ErrorCode::kInvalidArgument);
  auto cols =
      eredu::cuda::launch_row_dots(DType::kQ4_K, nullptr, 1, 128, nullptr, nullptr, nullptr);
  ASSERT_FALSE(cols.has_value());
  EXPECT_EQ(cols.error().code(), eredu::ErrorCode::kInvalidArgument);
  auto f16 = eredu::cuda::launch_row_dots(DType::kF16, nullptr, 1, 32, nullptr, nullptr, nullptr);
  ASSERT_FALSE(f16.has_value());
  EXPECT_EQ(f16.error().code(), eredu::ErrorCode::kUnsupported);
}

// Checks every row of a tensor's device dots against the host check's reference and bound.
template <typename T>
void expect_within_bound(const std::uint8_t* w, std::int64_t rows, std::int64_t n_blocks,
                         const std::vector<dot::BlockQ8_1>& act, const std::vector<float>& got) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto check = eredu::testing::check_row_dot<T>(w + r * n_blocks * T::Format::kBlockBytes,
                                                        n_blocks, act.data());
    ASSERT_EQ(check.failure, "") << "row " << r << " (host)";
    const double error = std::fabs(static_cast<double>(got[r]) - check.reference);
    ASSERT_LE(error, check.bound) << "row " << r << ": device " << got[r] << ", reference "
                                  << check.reference;
  }
}

class CudaRowDotKernelOnZoo : public ::testing::TestWithParam<ZooVariant> {};

TEST_P(CudaRowDotKernelOnZoo, QuantizesLikeTheHostAndDotsWithinTheBound) {
  EREDU_REQUIRE_CUDA_DEVICE();
  const ZooVariant variant = GetParam();
  const auto gguf_path = eredu::testing::zoo_gguf(variant);
  EREDU_REQUIRE_SHARED_PATH(gguf_path);
  auto file = eredu::checkpoint::GgufFile::open(gguf_path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  std::mt19937 rng(static_cast<std::uint32_t>(variant.dtype) + 5u);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  int tensors = 0;
  for (const eredu::checkpoint::GgufTensorInfo& info : file->tensors()) {
    if (info.dtype != variant.dtype) continue;
    SCOPED_TRACE(std::string(variant.name) + " " + info.name);
    auto bytes = file->tensor_bytes(info);
    ASSERT_TRUE(bytes.has_value()) << bytes.error().what();
    const std::uint64_t cols = info.ne[0];
    const std::uint64_t rows = info.element_count / cols;
    std::vector<float> x(cols);
    for (float& v : x)
      v = normal(rng);

    // Quantize on the device and compare with the host, byte for byte.
    DeviceBytes dx(cols * sizeof(float));
    DeviceBytes dact(cols / dot::kQK8_1 * sizeof(dot::BlockQ8_1));
    DeviceBytes dw(bytes->size());
    DeviceBytes dy(rows * sizeof(float));
    ASSERT_TRUE(dx.ptr && dact.ptr && dw.ptr && dy.ptr);
    ASSERT_EQ(cudaMemcpy(dx.ptr, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dw.ptr, bytes->data(), bytes->size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    auto dev_act = static_cast<dot::BlockQ8_1*>(dact.ptr);
    auto quantized = eredu::cuda::launch_quantize_q8_1(static_cast<const float*>(dx.ptr), dev_act,
                                                       cols, nullptr);
    ASSERT_TRUE(quantized.has_value()) << quantized.error().what();
    std::vector<dot::BlockQ8_1> act(cols / dot::kQK8_1);
    std::vector<dot::BlockQ8_1> host_act(act.size());
    ASSERT_EQ(cudaMemcpy(act.data(), dact.ptr, act.size() * sizeof(dot::BlockQ8_1),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    dot::quantize_row_q8_1(x.data(), host_act.data(), static_cast<std::int64_t>(cols));
    ASSERT_EQ(std::memcmp(act.data(), host_act.data(), act.size() * sizeof(dot::BlockQ8_1)), 0);

    auto launched =
        eredu::cuda::launch_row_dots(info.dtype, static_cast<const std::uint8_t*>(dw.ptr), rows,
                                     cols, dev_act, static_cast<float*>(dy.ptr), nullptr);
    ASSERT_TRUE(launched.has_value()) << launched.error().what();
    std::vector<float> got(rows);
    ASSERT_EQ(cudaMemcpy(got.data(), dy.ptr, rows * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    const auto* w = reinterpret_cast<const std::uint8_t*>(bytes->data());
    const auto n_blocks =
        static_cast<std::int64_t>(cols / eredu::dtype_info(info.dtype).block_elements);
    const auto n_rows = static_cast<std::int64_t>(rows);
    switch (info.dtype) {
      case DType::kQ8_0:
        expect_within_bound<dot::DotQ8_0>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ4_0:
        expect_within_bound<dot::DotQ4_0>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ4_1:
        expect_within_bound<dot::DotQ4_1>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ5_0:
        expect_within_bound<dot::DotQ5_0>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ5_1:
        expect_within_bound<dot::DotQ5_1>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ2_K:
        expect_within_bound<dot::DotQ2_K>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ3_K:
        expect_within_bound<dot::DotQ3_K>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ4_K:
        expect_within_bound<dot::DotQ4_K>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ5_K:
        expect_within_bound<dot::DotQ5_K>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kQ6_K:
        expect_within_bound<dot::DotQ6_K>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kIQ4_NL:
        expect_within_bound<dot::DotIQ4_NL>(w, n_rows, n_blocks, act, got);
        break;
      case DType::kIQ4_XS:
        expect_within_bound<dot::DotIQ4_XS>(w, n_rows, n_blocks, act, got);
        break;
      default:
        FAIL() << "no dot traits for " << eredu::to_string(info.dtype);
    }
    ++tensors;
  }
  EXPECT_EQ(tensors, 16);
}

std::vector<ZooVariant> quantized_zoo_variants() {
  std::vector<ZooVariant> out;
  for (const auto& v : eredu::testing::kZooVariants) {
    if (v.dtype != DType::kF16 && v.dtype != DType::kBF16) out.push_back(v);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(QuantizedVariants, CudaRowDotKernelOnZoo,
                         ::testing::ValuesIn(quantized_zoo_variants()),
                         [](const ::testing::TestParamInfo<ZooVariant>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
