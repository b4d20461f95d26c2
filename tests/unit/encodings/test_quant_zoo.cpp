// Reproduces the quant-zoo references (../shared/testdata/quant-zoo): for each of the 14 GGUF
// variants and its three reference tensors, the raw tensor bytes (read at the manifest's
// data_offset, no GGUF parser involved) must decode to exactly the float32 values gguf-py's
// independent numpy decoders produced. The comparison is bitwise after mapping -0.0 to +0.0, and
// additionally bitwise including the sign of zero, since eredu's decoders group their operations
// as ggml does (the README's cross-check 1 says ggml's C decoders match the references bit for
// bit); the number of -0.0 values must equal the manifest's n_negative_zero.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/core/dtype.hpp"
#include "shared_data.hpp"

namespace {

namespace fs = std::filesystem;
using eredu::DType;

fs::path zoo_dir() {
  return eredu::testing::testdata_dir() / "quant-zoo";
}

// Reads `length` bytes at `offset` of `path`; empty on failure (the test then reports it).
std::vector<std::byte> read_bytes(const fs::path& path, std::uint64_t offset,
                                  std::uint64_t length) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes(length);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length));
  if (!in || static_cast<std::uint64_t>(in.gcount()) != length) return {};
  return bytes;
}

std::vector<std::uint32_t> read_f32_bits(const fs::path& path, std::uint64_t n_elements) {
  const std::vector<std::byte> bytes = read_bytes(path, 0, n_elements * 4);
  std::vector<std::uint32_t> bits(bytes.size() / 4);
  if (!bits.empty()) std::memcpy(bits.data(), bytes.data(), bytes.size());
  return bits;
}

std::uint32_t without_zero_sign(std::uint32_t bits) {
  return bits == 0x80000000u ? 0u : bits;
}

struct VariantCase {
  const char* variant;
  DType dtype;
};

void PrintTo(const VariantCase& c, std::ostream* os) {
  *os << c.variant;
}

class QuantZooVariant : public ::testing::TestWithParam<VariantCase> {};

TEST_P(QuantZooVariant, DecodesEveryReferenceTensorBitExactlyIncludingZeroSigns) {
  const fs::path manifest_path = zoo_dir() / "manifest.json";
  EREDU_REQUIRE_SHARED_PATH(manifest_path);
  std::ifstream manifest_stream(manifest_path);
  const nlohmann::json manifest = nlohmann::json::parse(manifest_stream);

  const VariantCase param = GetParam();
  const nlohmann::json* variant = nullptr;
  for (const nlohmann::json& v : manifest.at("variants")) {
    if (v.at("variant").get<std::string>() == param.variant) variant = &v;
  }
  ASSERT_NE(variant, nullptr) << "variant " << param.variant << " is not in the manifest";
  const fs::path gguf = zoo_dir() / variant->at("file").get<std::string>();
  EREDU_REQUIRE_SHARED_PATH(gguf);

  ASSERT_EQ(variant->at("tensors").size(), 3u);
  for (const nlohmann::json& tensor : variant->at("tensors")) {
    const std::string name = tensor.at("name").get<std::string>();
    SCOPED_TRACE(std::string(param.variant) + " " + name);
    const auto type_id = tensor.at("ggml_type_id").get<std::uint32_t>();
    ASSERT_EQ(eredu::dtype_from_ggml_type(type_id), param.dtype);
    const auto n_elements = tensor.at("n_elements").get<std::uint64_t>();
    const auto n_bytes = tensor.at("n_bytes").get<std::uint64_t>();
    const auto offset = tensor.at("data_offset").get<std::uint64_t>();

    const std::vector<std::byte> raw = read_bytes(gguf, offset, n_bytes);
    ASSERT_EQ(raw.size(), n_bytes) << "could not read the tensor bytes of " << gguf;
    const std::vector<std::uint32_t> expected =
        read_f32_bits(zoo_dir() / tensor.at("reference").get<std::string>(), n_elements);
    ASSERT_EQ(expected.size(), n_elements) << "reference file is short";

    std::vector<float> decoded(n_elements);
    const eredu::Result<void> result = eredu::encoding::dequantize(param.dtype, raw, decoded);
    ASSERT_TRUE(result.has_value()) << result.error().what();

    std::uint64_t value_mismatches = 0;
    std::uint64_t zero_sign_mismatches = 0;
    std::uint64_t negative_zeros = 0;
    std::uint64_t first_mismatch = n_elements;
    for (std::uint64_t i = 0; i < n_elements; ++i) {
      const auto got = std::bit_cast<std::uint32_t>(decoded[i]);
      if (got == 0x80000000u) ++negative_zeros;
      if (without_zero_sign(got) != without_zero_sign(expected[i])) {
        if (value_mismatches++ == 0) first_mismatch = i;
      } else if (got != expected[i]) {
        ++zero_sign_mismatches;
      }
    }
    EXPECT_EQ(value_mismatches, 0u)
        << "first at element " << first_mismatch << ": got " << decoded[first_mismatch]
        << ", expected " << std::bit_cast<float>(expected[first_mismatch]);
    EXPECT_EQ(zero_sign_mismatches, 0u) << "zeros whose sign differs from the reference";
    EXPECT_EQ(negative_zeros, tensor.at("n_negative_zero").get<std::uint64_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllVariants, QuantZooVariant,
    ::testing::Values(VariantCase{"Q8_0", DType::kQ8_0}, VariantCase{"Q4_0", DType::kQ4_0},
                      VariantCase{"Q4_1", DType::kQ4_1}, VariantCase{"Q5_0", DType::kQ5_0},
                      VariantCase{"Q5_1", DType::kQ5_1}, VariantCase{"Q2_K", DType::kQ2_K},
                      VariantCase{"Q3_K_M", DType::kQ3_K}, VariantCase{"Q4_K_M", DType::kQ4_K},
                      VariantCase{"Q5_K_M", DType::kQ5_K}, VariantCase{"Q6_K", DType::kQ6_K},
                      VariantCase{"IQ4_NL", DType::kIQ4_NL}, VariantCase{"IQ4_XS", DType::kIQ4_XS},
                      VariantCase{"F16", DType::kF16}, VariantCase{"BF16", DType::kBF16}),
    [](const ::testing::TestParamInfo<VariantCase>& param_info) {
      return std::string(param_info.param.variant);
    });

}  // namespace
