// reliability.md §(b.1) G01–G10: the GGUF header. Each case builds a file with the writer, mutates
// it, and checks the error code, the message and the offset of the offending field.

#include <sys/types.h>

#include <chrono>
#include <fstream>

#include "gguf_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::parse_bytes;
using testing::valid_image;

TEST(GgufBadInput, G01_EmptyFileIsRejectedAsTruncatedHeader) {
  const auto result = parse_bytes({});
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "truncated header (need 24 bytes, have 0)");
  EXPECT_EQ(result.error().offset(), 0u);
}

TEST(GgufBadInput, G02_FileCutInsideTheHeaderIsRejectedAtTheFieldBeingRead) {
  const GgufImage image = valid_image();
  for (std::size_t n = 1; n < 24; ++n) {
    SCOPED_TRACE("prefix of " + std::to_string(n) + " bytes");
    std::vector<std::byte> cut(image.bytes.begin(), image.bytes.begin() + n);
    const auto result = parse_bytes(cut);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "have " + std::to_string(n) + ")");
    // The offset is where the field that was cut begins: magic 0, version 4, counts 8 and 16.
    const std::uint64_t field = n < 4 ? 0 : n < 8 ? 4 : n < 16 ? 8 : 16;
    EXPECT_EQ(result.error().offset(), field);
    const char* name = n < 4    ? "magic"
                       : n < 8  ? "version"
                       : n < 16 ? "tensor count"
                                : "metadata count";
    EXPECT_NE(result.error().message().find(name), std::string::npos) << result.error().what();
  }
}

TEST(GgufBadInput, G03_BadMagicIsRejectedShowingTheBytesAndAHint) {
  const struct {
    std::array<unsigned char, 4> magic;
    const char* shown;
  } cases[] = {
      {{'G', 'G', 'M', 'L'}, "'GGML' (47 47 4d 4c)"},
      {{'G', 'G', 'J', 'T'}, "'GGJT' (47 47 4a 54)"},
      {{'g', 'g', 'j', 't'}, "'ggjt' (67 67 6a 74)"},
      {{0x00, 0xFF, 0x10, 0x80}, "(00 ff 10 80)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.shown);
    GgufImage image = valid_image();
    std::memcpy(image.bytes.data(), c.magic.data(), 4);
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, c.shown);
    EXPECT_NE(result.error().message().find("pre-GGUF"), std::string::npos);
    EXPECT_EQ(result.error().offset(), 0u);
  }
  // The byte-reversed magic of a big-endian writer is reported as such.
  GgufImage image = valid_image();
  std::memcpy(image.bytes.data(), "FUGG", 4);
  EXPECT_GGUF_ERROR(parse_bytes(image.bytes), ErrorCode::kUnsupported, "big-endian");
}

TEST(GgufBadInput, G04_VersionZeroIsRejected) {
  GgufImage image = valid_image();
  ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, GgufLayout::kVersionOffset, 0));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "version 0");
  EXPECT_EQ(result.error().offset(), 4u);
}

TEST(GgufBadInput, G05_VersionOneIsUnsupported) {
  GgufImage image = valid_image();
  ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, GgufLayout::kVersionOffset, 1));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kUnsupported, "GGUF v1");
  EXPECT_EQ(result.error().offset(), 4u);
}

TEST(GgufBadInput, G06_FutureVersionsAreUnsupported) {
  for (std::uint32_t version : {4u, 0xFFFFFFFFu}) {
    GgufImage image = valid_image();
    ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, GgufLayout::kVersionOffset, version));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kUnsupported,
                      "GGUF v" + std::to_string(version) + " is newer than supported");
    EXPECT_EQ(result.error().offset(), 4u);
  }
}

TEST(GgufBadInput, G07_ByteSwappedVersionIsRejectedAsBigEndianWithoutParsingFurther) {
  GgufImage image = valid_image();
  ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, GgufLayout::kVersionOffset, 0x03000000u));
  // Garbage after the version must not matter: nothing past it is read.
  ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, GgufLayout::kTensorCountOffset, ~0ull));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kUnsupported, "big-endian GGUF is not supported");
  EXPECT_EQ(result.error().offset(), 4u);
}

TEST(GgufBadInput, G08_TensorCountLargerThanFileCanHoldIsRejectedBeforeAllocation) {
  GgufLimits unlimited;
  unlimited.max_tensors = UINT64_MAX;
  for (std::uint64_t count : {~0ull, 1ull << 40, 1ull << 63}) {
    SCOPED_TRACE(count);
    // A 64-byte file: the header and 40 bytes of nothing.
    GgufImage image = valid_image();
    image.bytes.resize(64);
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, GgufLayout::kTensorCountOffset, count));
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, GgufLayout::kMetadataCountOffset, 0));
    const auto start = std::chrono::steady_clock::now();
    const auto limited = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(limited, ErrorCode::kLimitExceeded, "exceeds the limit of 1000000");
    EXPECT_EQ(limited.error().offset(), 8u);
    // Without the count limit the bound by the file size still rejects it.
    const auto bounded = parse_bytes(image.bytes, unlimited);
    EXPECT_GGUF_ERROR(bounded, ErrorCode::kInvalidModel,
                      "each tensor info needs at least 33 bytes");
    EXPECT_EQ(bounded.error().offset(), 8u);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
}

TEST(GgufBadInput, G09_MetadataCountLargerThanFileCanHoldIsRejectedBeforeAllocation) {
  GgufLimits unlimited;
  unlimited.max_metadata_entries = UINT64_MAX;
  for (std::uint64_t count : {~0ull, 1ull << 40, 1ull << 63}) {
    SCOPED_TRACE(count);
    GgufImage image = valid_image();
    image.bytes.resize(64);
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, GgufLayout::kTensorCountOffset, 0));
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, GgufLayout::kMetadataCountOffset, count));
    const auto limited = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(limited, ErrorCode::kLimitExceeded, "metadata count");
    EXPECT_EQ(limited.error().offset(), 16u);
    const auto bounded = parse_bytes(image.bytes, unlimited);
    EXPECT_GGUF_ERROR(bounded, ErrorCode::kInvalidModel, "each entry needs at least 14 bytes");
    EXPECT_EQ(bounded.error().offset(), 16u);
  }
}

TEST(GgufBadInput, G10_FileLargerThan4GiBKeepsSixtyFourBitOffsets) {
  // A sparse file: a 4.5 GiB tensor followed by a small one whose data lies past 2^32.
  const std::uint64_t big_bytes = 4608ull << 20;  // 4.5 GiB of F32
  GgufWriter w;
  w.add_raw_tensor({"big", 0, {big_bytes / 4}, {}, 0});
  w.add_raw_tensor({"after", 0, {8}, {}, big_bytes});
  auto image = w.build();
  ASSERT_TRUE(image.has_value());
  const std::uint64_t data_start = image->layout.data_section_offset;
  const std::filesystem::path dir = testing::temp_dir("g10");
  const std::filesystem::path path = dir / "big.gguf";
  ASSERT_TRUE(write_bytes_to_file(path, image->bytes).has_value());
  std::error_code ec;
  std::filesystem::resize_file(path, data_start + big_bytes + 32, ec);
  if (ec) GTEST_SKIP() << "cannot create a sparse 4.5 GiB file here: " << ec.message();
  const std::vector<std::byte> tail = testing::pattern_bytes(32, 9);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(data_start + big_bytes));
    f.write(reinterpret_cast<const char*>(tail.data()), 32);
    ASSERT_TRUE(f.good());
  }
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const GgufTensorInfo* after = file->find_tensor("after");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->data_offset, data_start + big_bytes);
  EXPECT_GT(after->data_offset, 1ull << 32);
  EXPECT_EQ(file->find_tensor("big")->byte_size, big_bytes);
  auto bytes = file->tensor_bytes(*after);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), tail.begin(), tail.end()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eredu::checkpoint
