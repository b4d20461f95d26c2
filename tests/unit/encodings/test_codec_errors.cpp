// The checked byte API rejects what it cannot do safely: lengths that are not whole blocks or do
// not match, encodings it has no code for, non-finite input to a block quantizer, and sizes that
// overflow. Errors carry the right code and a message with the numbers, and leave the output
// untouched.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "eredu/checkpoint/encoding/encoding.hpp"
#include "eredu/core/dtype.hpp"

namespace {

using eredu::DType;
using eredu::ErrorCode;
namespace enc = eredu::encoding;

const std::vector<DType> kExpectedDecodable = {
    DType::kF32,  DType::kF16,  DType::kQ4_0,   DType::kQ4_1,   DType::kQ5_0,
    DType::kQ5_1, DType::kQ8_0, DType::kQ2_K,   DType::kQ3_K,   DType::kQ4_K,
    DType::kQ5_K, DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS, DType::kBF16};
const std::vector<DType> kExpectedEncodable = {
    DType::kF32,  DType::kF16,  DType::kQ4_0, DType::kQ4_1,   DType::kQ5_0,
    DType::kQ5_1, DType::kQ8_0, DType::kQ2_K, DType::kQ3_K,   DType::kQ4_K,
    DType::kQ5_K, DType::kQ6_K, DType::kBF16, DType::kIQ4_NL, DType::kIQ4_XS};

bool contains(const std::vector<DType>& list, DType d) {
  return std::find(list.begin(), list.end(), d) != list.end();
}

TEST(CodecCapabilities, ExactlyTheFifteenDecodableAndFifteenEncodableDtypes) {
  for (const eredu::DTypeInfo& info : eredu::all_dtypes()) {
    EXPECT_EQ(enc::can_dequantize(info.dtype), contains(kExpectedDecodable, info.dtype))
        << info.name;
    EXPECT_EQ(enc::can_quantize(info.dtype), contains(kExpectedEncodable, info.dtype)) << info.name;
  }
  const auto decodable = enc::dequantizable_dtypes();
  EXPECT_EQ(std::vector<DType>(decodable.begin(), decodable.end()), kExpectedDecodable);
  const auto encodable = enc::quantizable_dtypes();
  EXPECT_EQ(std::vector<DType>(encodable.begin(), encodable.end()), kExpectedEncodable);
}

TEST(CodecErrors, EveryDtypeWithoutDecoderOrEncoderIsUnsupported) {
  for (const eredu::DTypeInfo& info : eredu::all_dtypes()) {
    std::vector<std::byte> src(info.block_bytes);
    std::vector<float> values(info.block_elements);
    if (!enc::can_dequantize(info.dtype)) {
      const auto r = enc::dequantize(info.dtype, src, values);
      ASSERT_FALSE(r.has_value()) << info.name;
      EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported) << info.name;
      EXPECT_NE(r.error().message().find(std::string(info.name)), std::string::npos);
    }
    if (!enc::can_quantize(info.dtype)) {
      const auto r = enc::quantize(info.dtype, values, src);
      ASSERT_FALSE(r.has_value()) << info.name;
      EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported) << info.name;
    }
  }
}

TEST(CodecErrors, DequantizeRejectsElementCountThatIsNotWholeBlocks) {
  std::vector<std::byte> src(36);
  std::vector<float> dst(33, 7.0f);
  const auto r = enc::dequantize(DType::kQ4_0, src, dst);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("33"), std::string::npos) << r.error().what();
  EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](float v) { return v == 7.0f; }));
}

TEST(CodecErrors, DequantizeRejectsSourceShorterOrLongerThanTheBlocks) {
  for (const std::size_t src_bytes :
       {std::size_t{0}, std::size_t{35}, std::size_t{37}, std::size_t{210}}) {
    std::vector<std::byte> src(src_bytes);
    std::vector<float> dst(64, 7.0f);  // two Q4_0 blocks: 36 bytes
    const auto r = enc::dequantize(DType::kQ4_0, src, dst);
    ASSERT_FALSE(r.has_value()) << src_bytes;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    const std::string msg = r.error().message();
    EXPECT_NE(msg.find("36"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(src_bytes)), std::string::npos) << msg;
    EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](float v) { return v == 7.0f; }));
  }
  // K-quants: one Q6_K super-block is 210 bytes for 256 values; a 32-value request is not whole.
  std::vector<std::byte> src(210);
  std::vector<float> dst(32);
  EXPECT_FALSE(enc::dequantize(DType::kQ6_K, src, dst).has_value());
}

TEST(CodecErrors, QuantizeRejectsWrongDestinationSize) {
  std::vector<float> src(32, 1.0f);
  std::vector<std::byte> dst(33, std::byte{0x5A});
  const auto r = enc::quantize(DType::kQ8_0, src, dst);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(
      std::all_of(dst.begin(), dst.end(), [](std::byte b) { return b == std::byte{0x5A}; }));
  std::vector<float> partial(31, 1.0f);
  std::vector<std::byte> dst18(18);
  EXPECT_FALSE(enc::quantize(DType::kQ4_0, partial, dst18).has_value());
}

TEST(CodecErrors, BlockQuantizersRejectNonFiniteInputNamingTheElement) {
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity()}) {
    for (const DType dtype :
         {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1}) {
      std::vector<float> src(64, 0.5f);
      src[40] = bad;
      std::vector<std::byte> dst(enc::encoded_size(dtype, 64).value(), std::byte{0x5A});
      const auto r = enc::quantize(dtype, src, dst);
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(r.error().message().find("element 40"), std::string::npos) << r.error().what();
      EXPECT_TRUE(
          std::all_of(dst.begin(), dst.end(), [](std::byte b) { return b == std::byte{0x5A}; }));
    }
  }
  // F16 and BF16 represent non-finite values, so those encode.
  std::vector<float> src = {std::numeric_limits<float>::infinity()};
  std::vector<std::byte> dst(2);
  EXPECT_TRUE(enc::quantize(DType::kF16, src, dst).has_value());
  EXPECT_TRUE(enc::quantize(DType::kBF16, src, dst).has_value());
}

TEST(CodecErrors, EncodedSizeReportsPartialBlocksAndOverflow) {
  EXPECT_EQ(enc::encoded_size(DType::kQ4_K, 512).value(), 288u);
  EXPECT_EQ(enc::encoded_size(DType::kF32, 3).value(), 12u);
  const auto partial = enc::encoded_size(DType::kQ4_K, 300);
  ASSERT_FALSE(partial.has_value());
  EXPECT_EQ(partial.error().code(), ErrorCode::kInvalidArgument);
  const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max() / 32 * 32;
  const auto overflow = enc::encoded_size(DType::kQ8_0, huge);  // 34 bytes per 32 values
  ASSERT_FALSE(overflow.has_value());
  EXPECT_EQ(overflow.error().code(), ErrorCode::kOverflow);
  EXPECT_FALSE(
      enc::encoded_size(DType::kF32, std::numeric_limits<std::uint64_t>::max() / 2).has_value());
}

TEST(CodecErrors, EmptyBuffersAreValidForEveryEncoding) {
  for (const DType dtype : kExpectedDecodable) {
    EXPECT_TRUE(enc::dequantize(dtype, {}, {}).has_value()) << eredu::to_string(dtype);
  }
  for (const DType dtype : kExpectedEncodable) {
    EXPECT_TRUE(enc::quantize(dtype, {}, {}).has_value()) << eredu::to_string(dtype);
  }
}

TEST(CodecErrors, DecodesFromUnalignedSourceBytes) {
  // GGUF payloads need not be aligned for the block structs' fields: decode from offset 1.
  std::vector<std::byte> storage(1 + 34);
  storage[1] = std::byte{0x00};
  storage[2] = std::byte{0x40};  // d = 2
  storage[3] = std::byte{0xFF};  // q0 = -1
  std::vector<float> dst(32);
  ASSERT_TRUE(enc::dequantize(DType::kQ8_0, std::span(storage).subspan(1), dst).has_value());
  EXPECT_EQ(dst[0], -2.0f);
  EXPECT_EQ(dst[1], 0.0f);
}

}  // namespace
