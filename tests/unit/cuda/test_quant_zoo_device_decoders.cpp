// The CUDA backend's block decoders, run on the CPU, reproduce the quant-zoo fixtures
// (../shared/testdata/quant-zoo) bit for bit: each variant's GGUF file is read with eredu's GGUF
// reader; its three reference tensors must decode to exactly the bytes of VARIANT.TENSOR.f32
// (memcmp of the float32 values, so -0.0 must stay -0.0), and every tensor of the variant's
// encoding must decode to exactly what the core's scalar decoders give (themselves checked
// against the same references in tests/unit/encodings).
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "host_decode.hpp"
#include "zoo_tensors.hpp"

namespace {

using eredu::testing::kZooReferenceTensors;
using eredu::testing::ZooVariant;

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes(std::filesystem::file_size(path));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) bytes.clear();
  return bytes;
}

// Empty when equal byte for byte, else where and how the first element differs.
std::string first_difference(const std::vector<float>& got, const void* expected) {
  if (std::memcmp(got.data(), expected, got.size() * sizeof(float)) == 0) return {};
  const auto* want = static_cast<const std::byte*>(expected);
  for (std::size_t i = 0; i < got.size(); ++i) {
    std::uint32_t w = 0;
    std::memcpy(&w, want + 4 * i, 4);
    const std::uint32_t g = std::bit_cast<std::uint32_t>(got[i]);
    if (g != w) {
      return "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + " (bits " +
             std::to_string(g) + "), expected " + std::to_string(std::bit_cast<float>(w)) +
             " (bits " + std::to_string(w) + ")";
    }
  }
  return "differs";
}

class CudaDecodersOnZoo : public ::testing::TestWithParam<ZooVariant> {};

TEST_P(CudaDecodersOnZoo, ReferenceTensorsDecodeToTheReferenceBytes) {
  const ZooVariant variant = GetParam();
  const auto gguf_path = eredu::testing::zoo_gguf(variant);
  EREDU_REQUIRE_SHARED_PATH(gguf_path);
  auto file = eredu::checkpoint::GgufFile::open(gguf_path);
  ASSERT_TRUE(file.has_value()) << file.error().what();

  for (const char* name : kZooReferenceTensors) {
    SCOPED_TRACE(std::string(variant.name) + " " + name);
    const auto reference_path = eredu::testing::zoo_reference(variant, name);
    EREDU_REQUIRE_SHARED_PATH(reference_path);
    const eredu::checkpoint::GgufTensorInfo* info = file->find_tensor(name);
    ASSERT_NE(info, nullptr);
    ASSERT_EQ(info->dtype, variant.dtype);
    auto bytes = file->tensor_bytes(*info);
    ASSERT_TRUE(bytes.has_value()) << bytes.error().what();

    std::vector<float> decoded;
    ASSERT_TRUE(eredu::testing::decode_with_device_decoders(info->dtype, *bytes, decoded));
    ASSERT_EQ(decoded.size(), info->element_count);
    const std::vector<std::byte> reference = read_file(reference_path);
    ASSERT_EQ(reference.size(), decoded.size() * sizeof(float)) << reference_path;
    EXPECT_EQ(first_difference(decoded, reference.data()), "");
  }
}

TEST_P(CudaDecodersOnZoo, EveryTensorOfTheEncodingDecodesLikeTheCoreDecoders) {
  const ZooVariant variant = GetParam();
  const auto gguf_path = eredu::testing::zoo_gguf(variant);
  EREDU_REQUIRE_SHARED_PATH(gguf_path);
  auto file = eredu::checkpoint::GgufFile::open(gguf_path);
  ASSERT_TRUE(file.has_value()) << file.error().what();

  int compared = 0;
  for (const eredu::checkpoint::GgufTensorInfo& info : file->tensors()) {
    if (info.dtype != variant.dtype) continue;  // the F32 norm vectors
    SCOPED_TRACE(std::string(variant.name) + " " + info.name);
    auto bytes = file->tensor_bytes(info);
    ASSERT_TRUE(bytes.has_value()) << bytes.error().what();
    std::vector<float> decoded;
    ASSERT_TRUE(eredu::testing::decode_with_device_decoders(info.dtype, *bytes, decoded));
    std::vector<float> expected(info.element_count);
    auto core = eredu::encoding::dequantize(info.dtype, *bytes, expected);
    ASSERT_TRUE(core.has_value()) << core.error().what();
    ASSERT_EQ(decoded.size(), expected.size());
    EXPECT_EQ(first_difference(decoded, expected.data()), "");
    ++compared;
  }
  // token_embd, output and the 7 matrices of each of the 2 blocks.
  EXPECT_EQ(compared, 16) << "tensors of type " << eredu::to_string(variant.dtype);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, CudaDecodersOnZoo,
                         ::testing::ValuesIn(eredu::testing::kZooVariants),
                         [](const ::testing::TestParamInfo<ZooVariant>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
