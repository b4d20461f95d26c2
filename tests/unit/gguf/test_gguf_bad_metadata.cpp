// reliability.md §(b.1) G11–G24: metadata keys and values.

#include "gguf_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::parse_bytes;

// A file with one tensor-free metadata block: `general.architecture`, then the entry under test,
// then `general.name` (so that something follows the mutated field).
GgufImage image_with(std::string key, GgufValue value) {
  GgufWriter w;
  w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata(std::move(key), std::move(value));
  w.add_metadata("general.name", GgufValue("after"));
  auto image = w.build();
  EXPECT_TRUE(image.has_value());
  return std::move(image).value();
}

TEST(GgufBadInput, G11_KeyLengthBeyondTheFileIsRejectedBeforeAllocating) {
  for (std::uint64_t length : {1ull << 40, 60000ull}) {
    SCOPED_TRACE(length);
    GgufImage image = image_with("test.key", GgufValue(std::uint8_t{1}));
    const GgufKvLayout& kv = image.layout.metadata[1];
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, kv.offset, length));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                      "metadata key length " + std::to_string(length));
    EXPECT_EQ(result.error().offset(), kv.offset);
    EXPECT_EQ(result.error().subject(), "metadata entry 1");
  }
}

TEST(GgufBadInput, G12_EmptyKeyIsRejected) {
  GgufImage image = image_with("", GgufValue(std::uint8_t{1}));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "metadata key length 0 is outside 1..65535");
  EXPECT_EQ(result.error().offset(), image.layout.metadata[1].offset);
}

TEST(GgufBadInput, G13_KeyLongerThan65535BytesIsRejected) {
  GgufImage image = image_with(std::string(65536, 'k'), GgufValue(std::uint8_t{1}));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "metadata key length 65536");
  EXPECT_EQ(result.error().offset(), image.layout.metadata[1].offset);
  // The spec maximum itself is fine.
  EXPECT_TRUE(parse_bytes(image_with(std::string(65535, 'k'), GgufValue(std::uint8_t{1})).bytes)
                  .has_value());
}

TEST(GgufBadInput, G14_KeyWithNonAsciiOrControlBytesIsRejectedAndStrictModeChecksItsForm) {
  for (const std::string& key :
       {std::string("bad\xff.key"), std::string("nul\0key", 7), std::string("tab\tkey")}) {
    GgufImage image = image_with(key, GgufValue(std::uint8_t{1}));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "keys must be printable ASCII");
    EXPECT_EQ(result.error().offset(), image.layout.metadata[1].key_offset);
    // The subject is printable: the offending byte is escaped.
    EXPECT_NE(result.error().subject().find("\\x"), std::string::npos);
  }
  GgufLimits strict;
  strict.strict_keys = true;
  for (const char* key : {"General.Name", "general..name", ".general", "general.", "a-b"}) {
    SCOPED_TRACE(key);
    GgufImage image = image_with(key, GgufValue(std::uint8_t{1}));
    EXPECT_TRUE(parse_bytes(image.bytes).has_value()) << "lenient mode accepts " << key;
    const auto result = parse_bytes(image.bytes, strict);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "lower_snake_case");
    EXPECT_EQ(result.error().subject(), key);
  }
  EXPECT_TRUE(
      parse_bytes(image_with("llama.rope.freq_base", GgufValue(1.0f)).bytes, strict).has_value());
}

TEST(GgufBadInput, G15_DuplicateKeyIsRejectedNamingTheKey) {
  GgufImage image = image_with("general.architecture", GgufValue("mamba"));
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "duplicate metadata key");
  EXPECT_EQ(result.error().subject(), "general.architecture");
  EXPECT_EQ(result.error().offset(), image.layout.metadata[1].key_offset);
}

TEST(GgufBadInput, G16_UnknownValueTypeIsRejected) {
  for (std::uint32_t type : {13u, 0xFFFFFFFFu, 0x7FFFFFFFu}) {
    SCOPED_TRACE(type);
    GgufImage image = image_with("test.key", GgufValue(std::uint8_t{1}));
    const GgufKvLayout& kv = image.layout.metadata[1];
    ASSERT_TRUE(overwrite_le<std::uint32_t>(image.bytes, kv.type_offset, type));
    const auto result = parse_bytes(image.bytes);
    EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel,
                      "value type id " + std::to_string(type) + " is not a GGUF value type");
    EXPECT_EQ(result.error().subject(), "test.key");
    EXPECT_EQ(result.error().offset(), kv.type_offset);
  }
}

// An array nested `depth` levels deep (depth 1: a plain array of one u8).
GgufArray nested(std::uint32_t depth) {
  GgufArray a = GgufArray::of(std::vector<std::uint8_t>{7});
  for (std::uint32_t i = 1; i < depth; ++i)
    a = GgufArray::of_arrays({a});
  return a;
}

TEST(GgufBadInput, G17_NestedArraysAreReadUpToTheDepthLimitAndRejectedBeyondIt) {
  GgufLimits limits;
  limits.max_nesting_depth = 4;
  const auto within = parse_bytes(image_with("test.nested", GgufValue(nested(4))).bytes, limits);
  ASSERT_TRUE(within.has_value()) << within.error().what();
  const GgufArray* a = within->contents().get_array("test.nested").value();
  for (int level = 1; level < 4; ++level) {
    ASSERT_EQ(a->element_type(), GgufValueType::kArray);
    ASSERT_EQ(a->size(), 1u);
    a = &a->arrays()[0];
  }
  EXPECT_EQ(a->at<std::uint8_t>(0), std::uint8_t{7});

  GgufImage image = image_with("test.nested", GgufValue(nested(5)));
  const auto result = parse_bytes(image.bytes, limits);
  EXPECT_GGUF_ERROR(result, ErrorCode::kLimitExceeded, "nested deeper than 4 levels");
  EXPECT_EQ(result.error().subject(), "test.nested");
  // The innermost array header that is one level too deep: 4 levels of (type u32, count u64).
  EXPECT_EQ(result.error().offset(), image.layout.metadata[1].value_offset + 4 * 12);
}

TEST(GgufBadInput, G18_ArrayCountTimesElementSizeBeyondTheFileIsRejectedBeforeResize) {
  GgufLimits unlimited;
  unlimited.max_array_elements = UINT64_MAX;
  GgufImage image =
      image_with("test.array", GgufValue(GgufArray::of(std::vector<std::uint64_t>{1, 2})));
  const std::uint64_t count_at = image.layout.metadata[1].value_offset + 4;
  for (std::uint64_t count : {1ull << 61, 1ull << 40, 1000ull}) {
    SCOPED_TRACE(count);
    ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, count_at, count));
    const auto bounded = parse_bytes(image.bytes, unlimited);
    EXPECT_GGUF_ERROR(bounded, ErrorCode::kInvalidModel, "needs at least 8 bytes each");
    EXPECT_EQ(bounded.error().offset(), count_at);
    EXPECT_EQ(bounded.error().subject(), "test.array");
  }
  ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, count_at, 1ull << 61));
  const auto limited = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(limited, ErrorCode::kLimitExceeded, "exceeds the limit of 16000000");
  EXPECT_EQ(limited.error().offset(), count_at);
}

TEST(GgufBadInput, G19_HugeStringArrayInATinyFileIsRejectedBeforeAllocating) {
  GgufLimits unlimited;
  unlimited.max_array_elements = UINT64_MAX;
  GgufImage image = image_with("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings({"a"})));
  const std::uint64_t count_at = image.layout.metadata[1].value_offset + 4;
  ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, count_at, 1ull << 29));
  ASSERT_LT(image.bytes.size(), 200u);
  const auto bounded = parse_bytes(image.bytes, unlimited);
  EXPECT_GGUF_ERROR(bounded, ErrorCode::kInvalidModel,
                    "array of 536870912 string elements needs at least 8 bytes each");
  EXPECT_EQ(bounded.error().offset(), count_at);
  const auto limited = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(limited, ErrorCode::kLimitExceeded, "array of 536870912 elements");
}

TEST(GgufBadInput, G20_StringLengthBeyondTheFileOrTheCapIsRejected) {
  GgufImage image = image_with("general.description", GgufValue("seventeen bytes!!"));
  const GgufKvLayout& kv = image.layout.metadata[1];
  GgufLimits small;
  small.max_string_bytes = 16;
  const auto capped = parse_bytes(image.bytes, small);
  EXPECT_GGUF_ERROR(capped, ErrorCode::kLimitExceeded,
                    "string value length 17 exceeds the limit of 16");
  EXPECT_EQ(capped.error().offset(), kv.value_offset);
  EXPECT_EQ(capped.error().subject(), "general.description");

  ASSERT_TRUE(overwrite_le<std::uint64_t>(image.bytes, kv.value_offset, 1ull << 20));
  const auto past_end = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(past_end, ErrorCode::kInvalidModel, "string value length 1048576 exceeds the");
  EXPECT_EQ(past_end.error().offset(), kv.value_offset);
}

TEST(GgufBadInput, G21_InvalidUtf8StringsAreKeptAsRawBytes) {
  const std::string bytes("\xC3\x28 \xFF\xFE \xE2\x82", 8);
  const auto file = parse_bytes(
      image_with("tokenizer.chat_template", GgufValue(GgufArray::of_strings({bytes}))).bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const GgufArray* array =
      file->contents().get_array("tokenizer.chat_template", GgufValueType::kString).value();
  ASSERT_EQ(array->strings().size(), 1u);
  EXPECT_EQ(array->strings()[0], bytes);
}

TEST(GgufBadInput, G22_BoolByteOtherThanZeroOrOneIsRejected) {
  GgufImage image = image_with("tokenizer.ggml.add_bos_token", GgufValue(true));
  const GgufKvLayout& kv = image.layout.metadata[1];
  image.bytes[kv.value_offset] = std::byte{7};
  const auto result = parse_bytes(image.bytes);
  EXPECT_GGUF_ERROR(result, ErrorCode::kInvalidModel, "bool value is 7 (must be 0 or 1)");
  EXPECT_EQ(result.error().offset(), kv.value_offset);
  EXPECT_EQ(result.error().subject(), "tokenizer.ggml.add_bos_token");

  GgufImage array =
      image_with("test.flags", GgufValue(GgufArray::of(std::vector<bool>{true, false, true})));
  const std::uint64_t second = array.layout.metadata[1].value_offset + 12 + 1;
  array.bytes[second] = std::byte{2};
  const auto array_result = parse_bytes(array.bytes);
  EXPECT_GGUF_ERROR(array_result, ErrorCode::kInvalidModel, "bool array element 1 is 2");
  EXPECT_EQ(array_result.error().offset(), second);
}

TEST(GgufBadInput, G24_TotalMetadataBeyondTheBudgetIsRejected) {
  GgufWriter w;
  for (int i = 0; i < 8; ++i) {
    w.add_metadata("test.blob" + std::to_string(i), GgufValue(std::string(1000, 'x')));
  }
  auto image = w.build();
  ASSERT_TRUE(image.has_value());
  GgufLimits limits;
  limits.max_metadata_bytes = 4096;
  const auto result = parse_bytes(image->bytes, limits);
  EXPECT_GGUF_ERROR(result, ErrorCode::kLimitExceeded, "metadata too large (> 4096 bytes");
  ASSERT_TRUE(result.error().offset().has_value());
  EXPECT_LT(*result.error().offset(), image->bytes.size());
  // The default budget admits it.
  EXPECT_TRUE(parse_bytes(image->bytes).has_value());
}

}  // namespace
}  // namespace eredu::checkpoint
