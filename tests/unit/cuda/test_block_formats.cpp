// The CUDA backend's block formats against eredu's own definitions, on the CPU: block sizes
// against dtype_info, the F16/BF16 conversions against the core's for every 16-bit pattern, the
// IQ4 codebook, and every decoder against the core's scalar decoder on random blocks (which
// reach scale codes, high bits and sign patterns the quant-zoo files may not).
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <bit>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

#include "eredu/backends/cuda/decode/decode_block.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/core/dtype.hpp"
#include "host_decode.hpp"

namespace {

namespace d = eredu::cuda::decode;
using eredu::DType;
using eredu::dtype_info;

template <typename Format>
constexpr bool matches(DType dtype) {
  return Format::kBlockElements == static_cast<int>(dtype_info(dtype).block_elements) &&
         Format::kBlockBytes == static_cast<int>(dtype_info(dtype).block_bytes);
}
static_assert(matches<d::F16>(DType::kF16) && matches<d::BF16>(DType::kBF16));
static_assert(matches<d::Q8_0>(DType::kQ8_0) && matches<d::Q4_0>(DType::kQ4_0) &&
              matches<d::Q4_1>(DType::kQ4_1) && matches<d::Q5_0>(DType::kQ5_0) &&
              matches<d::Q5_1>(DType::kQ5_1));
static_assert(matches<d::Q2_K>(DType::kQ2_K) && matches<d::Q3_K>(DType::kQ3_K) &&
              matches<d::Q4_K>(DType::kQ4_K) && matches<d::Q5_K>(DType::kQ5_K) &&
              matches<d::Q6_K>(DType::kQ6_K));
static_assert(matches<d::IQ4_NL>(DType::kIQ4_NL) && matches<d::IQ4_XS>(DType::kIQ4_XS));

// Equal bits, or both NaN (random scales include NaN patterns; their payload is not the point).
bool same_value(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

TEST(CudaHalf, F16ToF32MatchesTheCoreConversionForEveryBitPattern) {
  int mismatches = 0;
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float want = eredu::encoding::fp16_to_fp32(bits);
    const float got = d::f16_to_f32(bits);
    if (std::bit_cast<std::uint32_t>(got) != std::bit_cast<std::uint32_t>(want)) {
      if (mismatches++ < 5)
        ADD_FAILURE() << "f16 bits " << h << ": got " << got << " want " << want;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(CudaHalf, F16SubnormalsAndSignedZerosAreKept) {
  EXPECT_EQ(d::f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(d::f16_to_f32(0x83FF), -std::ldexp(1023.0f, -24));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(d::f16_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(d::f16_to_f32(0x0000)), 0u);
}

TEST(CudaHalf, Bf16ToF32MatchesTheCoreConversionForEveryBitPattern) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(d::bf16_to_f32(bits)),
              std::bit_cast<std::uint32_t>(eredu::encoding::bf16_to_fp32(bits)))
        << "bf16 bits " << b;
  }
}

TEST(CudaIq4, CodebookIsTheCoreCodebook) {
  for (int q = 0; q < 16; ++q)
    EXPECT_EQ(d::iq4_codebook(q), eredu::encoding::kIQ4NLValues[q]) << "entry " << q;
}

struct RandomCase {
  const char* name;
  DType dtype;
};

void PrintTo(const RandomCase& c, std::ostream* os) {
  *os << c.name;
}

class CudaDecodersOnRandomBlocks : public ::testing::TestWithParam<RandomCase> {};

TEST_P(CudaDecodersOnRandomBlocks, MatchTheCoreDecoderBitForBit) {
  const DType dtype = GetParam().dtype;
  const std::size_t block_bytes = dtype_info(dtype).block_bytes;
  constexpr std::size_t kBlocks = 512;
  std::mt19937 rng(static_cast<std::uint32_t>(dtype) * 7919u + 1u);
  std::vector<std::byte> bytes(kBlocks * block_bytes);
  for (std::byte& b : bytes)
    b = static_cast<std::byte>(rng() & 0xFF);

  std::vector<float> got;
  ASSERT_TRUE(eredu::testing::decode_with_device_decoders(dtype, bytes, got));
  std::vector<float> want(got.size());
  auto core = eredu::encoding::dequantize(dtype, bytes, want);
  ASSERT_TRUE(core.has_value()) << core.error().what();
  int mismatches = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!same_value(got[i], want[i]) && mismatches++ < 5) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", core " << want[i];
    }
  }
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, CudaDecodersOnRandomBlocks,
    ::testing::Values(RandomCase{"F16", DType::kF16}, RandomCase{"BF16", DType::kBF16},
                      RandomCase{"Q8_0", DType::kQ8_0}, RandomCase{"Q4_0", DType::kQ4_0},
                      RandomCase{"Q4_1", DType::kQ4_1}, RandomCase{"Q5_0", DType::kQ5_0},
                      RandomCase{"Q5_1", DType::kQ5_1}, RandomCase{"Q2_K", DType::kQ2_K},
                      RandomCase{"Q3_K", DType::kQ3_K}, RandomCase{"Q4_K", DType::kQ4_K},
                      RandomCase{"Q5_K", DType::kQ5_K}, RandomCase{"Q6_K", DType::kQ6_K},
                      RandomCase{"IQ4_NL", DType::kIQ4_NL}, RandomCase{"IQ4_XS", DType::kIQ4_XS}),
    [](const ::testing::TestParamInfo<RandomCase>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(CudaDecodeHelpers, AGroupOfElementsEqualsTheElementsOneByOne) {
  std::mt19937 rng(42);
  std::uint8_t block[d::Q6_K::kBlockBytes];
  for (std::uint8_t& b : block)
    b = static_cast<std::uint8_t>(rng() & 0xFF);
  block[208] = 0x00;  // a finite scale: d = 2^-14, so every value is comparable with ==
  block[209] = 0x04;
  float group[40];
  d::decode_elements<d::Q6_K>(block, 100, 40, group);
  for (int k = 0; k < 40; ++k) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(group[k]),
              std::bit_cast<std::uint32_t>(d::Q6_K::decode(block, 100 + k)));
  }
  // Two Q8_0 blocks: d = 1.0 with q[0] = 5, then d = 2.0 with q[0] = -3.
  std::uint8_t two_blocks[2 * d::Q8_0::kBlockBytes] = {};
  two_blocks[1] = 0x3C;
  two_blocks[2] = 5;
  two_blocks[d::Q8_0::kBlockBytes + 1] = 0x40;
  two_blocks[d::Q8_0::kBlockBytes + 2] = 0xFD;
  EXPECT_EQ(d::decode_element<d::Q8_0>(two_blocks, 0), 5.0f);
  EXPECT_EQ(d::decode_element<d::Q8_0>(two_blocks, 32), -6.0f);
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
