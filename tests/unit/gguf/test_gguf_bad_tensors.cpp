// reliability.md §(b.1) G25–G42: alignment and tensor infos.

#include <chrono>

#include "gguf_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::parse_bytes;
using testing::pattern_bytes;
using testing::valid_image;
using testing::valid_writer;

// A file whose only metadata is `general.alignment` = `value`, plus one F32 tensor of 8 bytes.
GgufImage alignment_image(GgufValue value, std::uint64_t padding = 32) {
  GgufWriter w(GgufWriterOptions{3, padding});
  w.add_metadata("general.alignment", std::move(value));
  w.add_raw_tensor({"t", 0, {2}, pattern_bytes(8), 0});
  auto image = w.build();
  EXPECT_TRUE(image.has_value());
  return std::move(image).value();
}

// A file with a single raw tensor info (and `data` as its data).
GgufImage single_tensor(GgufWriterTensor tensor) {
  GgufWriter w;
  w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_raw_tensor(std::move(tensor));
  auto image = w.build();
  EXPECT_TRUE(image.has_value());
  return std::move(image).value();
}

TEST(GgufBadInput, G25_AlignmentOfTheWrongTypeIsRejected) {
  const GgufValue wrong[] = {GgufValue("32"), GgufValue(32.0f),
                             GgufValue(GgufArray::of(std::vector<std::uint32_t>{32})),
                             GgufValue(std::int32_t{32}), GgufValue(std::uint16_t{32})};
  for (const GgufValue& value : wrong) {
    const std::string type(to_string(value.type()));
    SCOPED_TRACE(type);
    const GgufImage image = alignment_image(value);
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                      "general.alignment has type " + type + ", expected u32");
    EXPECT_EQ(result.error().subject(), "general.alignment");
    EXPECT_EQ(result.error().offset(), image.layout.metadata[0].value_offset);
  }
  // u64 is accepted as well as u32.
  const auto u64 = parse_bytes(alignment_image(GgufValue(std::uint64_t{64}), 64).bytes);
  ASSERT_TRUE(u64.has_value()) << u64.error().what();
  EXPECT_EQ(u64->header().alignment, 64u);
}

TEST(GgufBadInput, G26_AlignmentZeroOrNotAPowerOfTwoIsRejected) {
  for (std::uint32_t alignment : {0u, 13u, 48u}) {
    SCOPED_TRACE(alignment);
    const GgufImage image = alignment_image(GgufValue(alignment));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(
        result, ErrorCode::kInvalidModel,
        "general.alignment " + std::to_string(alignment) + " is not a non-zero power of two");
    EXPECT_EQ(result.error().offset(), image.layout.metadata[0].value_offset);
  }
}

TEST(GgufBadInput, G27_AlignmentNotAMultipleOfEightIsAcceptedWithAWarning) {
  for (std::uint32_t alignment : {1u, 2u, 4u}) {
    SCOPED_TRACE(alignment);
    GgufWriter w = valid_writer();
    w.set_alignment(alignment);
    auto image = w.build();
    ASSERT_TRUE(image.has_value());
    testing::LogCapture log;
    const auto file = parse_bytes(image->bytes);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    EXPECT_TRUE(log.contains("is not a multiple of 8"));
    EXPECT_EQ(file->header().alignment, alignment);
    // The data section starts at the first multiple of the alignment after the infos.
    const std::uint64_t end = image->layout.infos_end;
    EXPECT_EQ(file->header().data_section_offset, (end + alignment - 1) / alignment * alignment);
    EXPECT_EQ(file->find_tensor("b.weight")->data_offset, image->layout.tensors[1].data_offset);
  }
}

TEST(GgufBadInput, G28_HugeAlignmentIsRejectedAboveTheCap) {
  const GgufValue huge[] = {GgufValue(std::uint32_t{1u << 31}),
                            GgufValue(std::uint64_t{1ull << 63})};
  for (const GgufValue& value : huge) {
    const GgufImage image = alignment_image(value);
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kLimitExceeded, "exceeds the limit of 1048576");
    EXPECT_EQ(result.error().offset(), image.layout.metadata[0].value_offset);
  }
}

TEST(GgufBadInput, G29_BadTensorNamesAreRejectedAndSixtyFourBytesIsAllowed) {
  {
    const GgufImage image = single_tensor({"", 0, {2}, pattern_bytes(8), {}});
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "tensor name length 0 is outside 1..64");
    EXPECT_EQ(result.error().offset(), image.layout.tensors[0].offset);
  }
  {
    const GgufImage image = single_tensor({std::string(65, 'n'), 0, {2}, pattern_bytes(8), {}});
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "tensor name length 65 is outside 1..64");
    EXPECT_EQ(result.error().offset(), image.layout.tensors[0].offset);
  }
  {
    const std::string name(64, 'n');
    const auto file = parse_bytes(single_tensor({name, 0, {2}, pattern_bytes(8), {}}).bytes);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    EXPECT_NE(file->find_tensor(name), nullptr);
  }
  for (const std::string& name :
       {std::string("nul\0x", 5), std::string("line\nbreak"), std::string("del\x7f")}) {
    const GgufImage image = single_tensor({name, 0, {2}, pattern_bytes(8), {}});
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "tensor name contains control byte");
    EXPECT_EQ(result.error().offset(), image.layout.tensors[0].name_offset);
  }
  {
    GgufWriter w;
    w.add_raw_tensor({"same", 0, {2}, pattern_bytes(8), {}});
    w.add_raw_tensor({"same", 0, {2}, pattern_bytes(8), {}});
    const GgufImage image = w.build().value();
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "duplicate tensor name");
    EXPECT_EQ(result.error().subject(), "same");
    EXPECT_EQ(result.error().offset(), image.layout.tensors[1].name_offset);
  }
}

TEST(GgufBadInput, G30_RankAboveFourIsRejectedBeforeReadingTheDims) {
  for (std::uint32_t rank : {5u, 0xFFFFFFFFu, 0u}) {
    SCOPED_TRACE(rank);
    GgufImage image = valid_image();
    const GgufTensorLayout& t = image.layout.tensors[0];
    ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, t.rank_offset, rank));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                      "tensor rank " + std::to_string(rank) + " is outside 1..4");
    EXPECT_EQ(result.error().subject(), "a.weight");
    EXPECT_EQ(result.error().offset(), t.rank_offset);
  }
}

TEST(GgufLimitsTest, RankLimitCanBeRaisedToEightButNoFurther) {
  GgufWriter w;
  w.add_raw_tensor({"r5", 0, {1, 1, 1, 1, 2}, pattern_bytes(8), {}});
  const GgufImage image = w.build().value();
  GgufLimits eight;
  eight.max_rank = 8;
  const auto file = parse_bytes(image.bytes, eight);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_EQ(file->find_tensor("r5")->shape, (std::vector<std::uint64_t>{2, 1, 1, 1, 1}));
  GgufLimits huge;
  huge.max_rank = 1000;
  GgufImage nine = image;
  ASSERT_TRUE(overwrite_le<std::uint32_t>(nine.bytes, image.layout.tensors[0].rank_offset, 9));
  EXPECT_GGUF_ERROR(parse_bytes(nine.bytes, huge), ErrorCode::kInvalidModel,
                    "tensor rank 9 is outside 1..8");
}

TEST(GgufBadInput, G31_NegativeDimensionIsRejected) {
  GgufImage image = valid_image();
  const GgufTensorLayout& t = image.layout.tensors[0];
  ASSERT_TRUE(overwrite_le<std::int64_t>(image.bytes, t.dims_offset + 8, -1));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "dimension ne[1] is negative (-1)");
  EXPECT_EQ(result.error().subject(), "a.weight");
  EXPECT_EQ(result.error().offset(), t.dims_offset + 8);
}

TEST(GgufBadInput, G32_ZeroDimensionMakesAnEmptyTensorWithoutDividing) {
  GgufWriter w;
  w.add_raw_tensor({"empty", 0, {4, 0}, {}, {}});
  w.add_raw_tensor({"empty_q", 2, {0, 3}, {}, {}});  // Q4_0, ne[0] = 0
  w.add_raw_tensor({"huge_but_empty", 0, {1ull << 62, 1ull << 62, 0}, {}, {}});
  w.add_raw_tensor({"after", 0, {2}, pattern_bytes(8), {}});
  const auto file = parse_bytes(w.build().value().bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  for (const char* name : {"empty", "empty_q", "huge_but_empty"}) {
    const GgufTensorInfo* info = file->find_tensor(name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->element_count, 0u) << name;
    EXPECT_EQ(info->byte_size, 0u) << name;
    EXPECT_TRUE(file->tensor_bytes(*info).value().empty());
  }
  EXPECT_EQ(file->find_tensor("empty")->shape, (std::vector<std::uint64_t>{0, 4}));
  EXPECT_EQ(file->find_tensor("after")->byte_size, 8u);
}

TEST(GgufBadInput, G33_ElementCountOrByteSizeOverflowIsRejected) {
  {
    // 2^32 * 2^32 = 2^64 elements: beyond int64.
    const GgufImage image = single_tensor({"wide", 0, {1ull << 32, 1ull << 32}, {}, {}});
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kOverflow, "element count of the dimensions overflows");
    EXPECT_EQ(result.error().subject(), "wide");
    EXPECT_EQ(result.error().offset(), image.layout.tensors[0].dims_offset);
  }
  {
    // 2^62 F64 elements fit in int64, but 2^65 bytes do not fit in 64 bits.
    const GgufImage image = single_tensor({"fat", 28, {1ull << 62}, {}, {}});
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kOverflow, "byte size of the tensor overflows");
    EXPECT_EQ(result.error().subject(), "fat");
  }
}

TEST(GgufBadInput, G34_RemovedOrUnknownTypeIdIsRejectedNamingTheId) {
  const struct {
    std::uint32_t id;
    const char* says;
  } cases[] = {{4, "ggml type id 4 was removed"},
               {5, "ggml type id 5 was removed"},
               {31, "ggml type id 31 was removed"},
               {32, "ggml type id 32 was removed"},
               {33, "ggml type id 33 was removed"},
               {36, "ggml type id 36 was removed"},
               {37, "ggml type id 37 was removed"},
               {38, "ggml type id 38 was removed"},
               {40, "ggml type id 40 is unknown"},
               {0xFFFFFFFFu, "ggml type id -1 is unknown"},
               {0x7FFFFFFFu, "ggml type id 2147483647 is unknown"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    GgufImage image = valid_image();
    const GgufTensorLayout& t = image.layout.tensors[2];
    ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, t.type_offset, c.id));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kUnsupported, c.says);
    EXPECT_EQ(result.error().subject(), "c.bias");
    EXPECT_EQ(result.error().offset(), t.type_offset);
  }
}

TEST(GgufBadInput, G35_FirstDimensionNotAWholeNumberOfBlocksIsRejected) {
  const GgufImage image = single_tensor({"q", 2, {33, 1}, pattern_bytes(18), {}});
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                    "ne[0] = 33 is not a multiple of the Q4_0 block size 32");
  EXPECT_EQ(result.error().subject(), "q");
  EXPECT_EQ(result.error().offset(), image.layout.tensors[0].dims_offset);
}

TEST(GgufBadInput, G36_OffsetNotAMultipleOfTheAlignmentIsRejected) {
  GgufImage image = valid_image();
  const GgufTensorLayout& t = image.layout.tensors[1];
  ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, t.offset_offset, 40));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                    "tensor offset 40 is not a multiple of the alignment 32");
  EXPECT_EQ(result.error().subject(), "b.weight");
  EXPECT_EQ(result.error().offset(), t.offset_offset);
}

TEST(GgufBadInput, G37_DataStartPlusOffsetOverflowIsRejected) {
  GgufImage image = valid_image();
  const GgufTensorLayout& t = image.layout.tensors[0];
  const std::uint64_t offset = UINT64_MAX - 31;  // a multiple of 32
  ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, t.offset_offset, offset));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kOverflow, "overflows 64 bits");
  EXPECT_EQ(result.error().subject(), "a.weight");
  EXPECT_EQ(result.error().offset(), t.offset_offset);
}

TEST(GgufBadInput, G38_TensorDataPastEndOfFileIsRejectedAtOpen) {
  GgufImage image = valid_image();
  const GgufTensorLayout& c = image.layout.tensors[2];
  image.bytes.resize(c.data_offset + 3);  // a truncated download: c.bias has 6 bytes
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                    "tensor data ends at " + std::to_string(c.data_offset + 6) + " > file size " +
                        std::to_string(c.data_offset + 3) + " — file truncated or corrupted");
  EXPECT_EQ(result.error().subject(), "c.bias");
  EXPECT_EQ(result.error().offset(), c.offset_offset);
}

TEST(GgufBadInput, G39_OverlappingRangesAreRejectedAndOutOfOrderOnesAccepted) {
  {
    GgufImage image = valid_image();
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, image.layout.tensors[1].offset_offset, 0));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "overlaps tensor 'a.weight'");
    EXPECT_EQ(result.error().subject(), "b.weight");
  }
  {
    // Declared offsets in reverse file order: c at 0, b at 32, a at 128 (sizes 6, 68, 32).
    GgufWriter w;
    w.add_raw_tensor({"a", 0, {8}, {}, 128});
    w.add_raw_tensor({"b", 8, {32, 2}, {}, 32});
    w.add_raw_tensor({"c", 1, {3}, {}, 0});
    GgufImage image = w.build().value();
    image.bytes.resize(image.layout.data_section_offset + 160);
    const auto file = parse_bytes(image.bytes);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    const std::uint64_t base = image.layout.data_section_offset;
    EXPECT_EQ(file->find_tensor("a")->data_offset, base + 128);
    EXPECT_EQ(file->find_tensor("b")->data_offset, base + 32);
    EXPECT_EQ(file->find_tensor("c")->data_offset, base);
  }
}

TEST(GgufBadInput, G40_NonZeroPaddingIsIgnored) {
  GgufImage image = valid_image();
  for (std::uint64_t i = image.layout.infos_end; i < image.layout.data_section_offset; ++i) {
    image.bytes[i] = std::byte{0xAA};
  }
  const GgufTensorLayout& a = image.layout.tensors[0];
  for (std::uint64_t i = a.data_offset + a.data_size; i < image.layout.tensors[1].data_offset;
       ++i) {
    image.bytes[i] = std::byte{0x55};
  }
  testing::LogCapture log;
  const auto file = parse_bytes(image.bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_FALSE(log.contains("trailing"));
  const auto bytes = file->tensor_bytes("a.weight").value();
  const auto expected = pattern_bytes(32, 1);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end()));
}

TEST(GgufBadInput, G41_TinyFileDeclaringATebibyteTensorIsRejectedBeforeAnyAllocation) {
  const GgufImage image = single_tensor({"tib", 0, {1ull << 38}, {}, 0});  // 2^40 bytes of F32
  ASSERT_LT(image.bytes.size(), 200u);
  const auto start = std::chrono::steady_clock::now();
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(
      result, ErrorCode::kInvalidModel,
      "tensor data ends at " + std::to_string(image.layout.data_section_offset + (1ull << 40)));
  EXPECT_EQ(result.error().subject(), "tib");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(GgufBadInput, G42_TrailingBytesAfterTheLastTensorAreAcceptedAndNotTensors) {
  GgufImage image = valid_image();
  const std::size_t original = image.bytes.size();
  image.bytes.resize(original + 1000, std::byte{0x7E});
  testing::LogCapture log;
  const auto file = parse_bytes(image.bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_TRUE(log.contains("1026 trailing bytes"));  // 26 bytes of c.bias padding + 1000
  EXPECT_EQ(file->tensors().size(), 3u);
  EXPECT_EQ(file->header().file_size, original + 1000);
}

}  // namespace
}  // namespace eredu::checkpoint
