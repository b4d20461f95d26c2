// The dequantization kernel on a real GPU: every quant-zoo reference tensor, copied to the device
// and decoded there, must come back as exactly the bytes of its VARIANT.TENSOR.f32 file. Without
// a CUDA device the tests skip, naming why ("no CUDA device: ..."); the argument checks that
// return before any launch run everywhere.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <cuda_runtime_api.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "dequantize.hpp"
#include "device_memory.hpp"
#include "eredu/backends/cuda/device.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "zoo_tensors.hpp"

namespace {

using eredu::testing::DeviceBytes;
using eredu::testing::ZooVariant;

TEST(CudaDequantizeKernel, RejectsAPartialBlockAndAnEncodingWithoutDecoderBeforeLaunching) {
  auto partial =
      eredu::cuda::launch_dequantize(eredu::DType::kQ4_K, nullptr, nullptr, 100, nullptr);
  ASSERT_FALSE(partial.has_value());
  EXPECT_EQ(partial.error().code(), eredu::ErrorCode::kInvalidArgument);
  auto unsupported =
      eredu::cuda::launch_dequantize(eredu::DType::kIQ2_XXS, nullptr, nullptr, 256, nullptr);
  ASSERT_FALSE(unsupported.has_value());
  EXPECT_EQ(unsupported.error().code(), eredu::ErrorCode::kUnsupported);
}

class CudaDequantizeKernelOnZoo : public ::testing::TestWithParam<ZooVariant> {};

TEST_P(CudaDequantizeKernelOnZoo, ReferenceTensorsDecodeToTheReferenceBytesOnTheDevice) {
  EREDU_REQUIRE_CUDA_DEVICE();
  const ZooVariant variant = GetParam();
  const auto gguf_path = eredu::testing::zoo_gguf(variant);
  EREDU_REQUIRE_SHARED_PATH(gguf_path);
  auto file = eredu::checkpoint::GgufFile::open(gguf_path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  for (const char* name : eredu::testing::kZooReferenceTensors) {
    SCOPED_TRACE(std::string(variant.name) + " " + name);
    const auto reference_path = eredu::testing::zoo_reference(variant, name);
    EREDU_REQUIRE_SHARED_PATH(reference_path);
    const eredu::checkpoint::GgufTensorInfo* info = file->find_tensor(name);
    ASSERT_NE(info, nullptr);
    auto bytes = file->tensor_bytes(*info);
    ASSERT_TRUE(bytes.has_value()) << bytes.error().what();

    DeviceBytes blocks(bytes->size());
    DeviceBytes out(info->element_count * sizeof(float));
    ASSERT_NE(blocks.ptr, nullptr);
    ASSERT_NE(out.ptr, nullptr);
    ASSERT_EQ(cudaMemcpy(blocks.ptr, bytes->data(), bytes->size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    auto launched =
        eredu::cuda::launch_dequantize(info->dtype, static_cast<const std::uint8_t*>(blocks.ptr),
                                       static_cast<float*>(out.ptr), info->element_count, nullptr);
    ASSERT_TRUE(launched.has_value()) << launched.error().what();
    std::vector<float> decoded(info->element_count);
    ASSERT_EQ(
        cudaMemcpy(decoded.data(), out.ptr, decoded.size() * sizeof(float), cudaMemcpyDeviceToHost),
        cudaSuccess);

    std::ifstream in(reference_path, std::ios::binary);
    std::vector<float> reference(info->element_count);
    in.read(reinterpret_cast<char*>(reference.data()),
            static_cast<std::streamsize>(reference.size() * sizeof(float)));
    ASSERT_TRUE(in) << "short reference " << reference_path;
    EXPECT_EQ(std::memcmp(decoded.data(), reference.data(), reference.size() * sizeof(float)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, CudaDequantizeKernelOnZoo,
                         ::testing::ValuesIn(eredu::testing::kZooVariants),
                         [](const ::testing::TestParamInfo<ZooVariant>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
