// reliability.md §(b.2): every SafeTensors reader case has its own test. Files are built from our
// writer's output (mutated) or from raw header text; each must end in a typed error naming what
// and where, never a crash or an allocation sized by the input.
//
// S21 (many entries) is in test_safetensors_scale.cpp; S26 (sharded index) in
// test_safetensors_model.cpp. S27 (dtype/shape disagreeing with config.json, absurd config values)
// concerns the model configuration layer, not the container reader, and is not tested here.

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "safetensors_test_util.hpp"

namespace eredu::checkpoint {
namespace {

using testing::FailsWith;
using testing::parse_bytes;
using testing::parse_header;
using testing::to_bytes;

// One tensor entry of a hand-written header.
std::string entry(std::string_view name, std::string_view dtype, std::string_view shape,
                  std::uint64_t begin, std::uint64_t end) {
  return "\"" + std::string(name) + "\":{\"dtype\":\"" + std::string(dtype) +
         "\",\"shape\":" + std::string(shape) + ",\"data_offsets\":[" + std::to_string(begin) +
         "," + std::to_string(end) + "]}";
}

std::vector<std::byte> length_prefix(std::uint64_t n) {
  std::vector<std::byte> out(8);
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = std::byte((n >> (8 * i)) & 0xFF);
  return out;
}

TEST(SafetensorsBadInput, S01_FileShorterThanEightBytesIsRejected) {
  for (std::size_t size = 0; size < 8; ++size) {
    const std::vector<std::byte> bytes(size, std::byte{0x01});
    const auto result = parse_bytes(bytes);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "8-byte header length")) << size;
    EXPECT_EQ(result.error().path(), "test.safetensors");
  }
}

TEST(SafetensorsBadInput, S02_HeaderLengthBeyondFileIsRejectedBeforeAllocating) {
  // N one byte longer than the rest of the file.
  auto bytes = raw_safetensors_bytes("{}  ", {}, 5);
  EXPECT_TRUE(FailsWith(parse_bytes(bytes), ErrorCode::kInvalidModel, "past the end of the file"));
  // N just under the limit with a 16-byte file: must fail on the size check, not allocate 100 MB.
  bytes = raw_safetensors_bytes("{}      ", {}, 99'999'999);
  const auto result = parse_bytes(bytes);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "past the end of the file"));
  EXPECT_EQ(result.error().offset(), 0U);

  // The header-only reader checks N against the file size before reading N bytes.
  testing::TempDir dir;
  ASSERT_TRUE(write_safetensors_bytes(dir.path() / "x.safetensors", bytes).has_value());
  EXPECT_TRUE(FailsWith(read_safetensors_header(dir.path() / "x.safetensors"),
                        ErrorCode::kInvalidModel, "past the end of the file"));
}

TEST(SafetensorsBadInput, S03_HeaderLengthAboveLimitIsRejected) {
  const auto bytes = raw_safetensors_bytes("{}      ", {}, 100'000'001);
  EXPECT_TRUE(FailsWith(parse_bytes(bytes), ErrorCode::kLimitExceeded, "100000000"));
  // The limit is configurable.
  SafetensorsLimits limits;
  limits.max_header_bytes = 4;
  EXPECT_TRUE(FailsWith(parse_header("{}      ", 0, limits), ErrorCode::kLimitExceeded));
}

TEST(SafetensorsBadInput, S04_ZeroHeaderLengthIsRejected) {
  const auto bytes = raw_safetensors_bytes("", {}, 0);
  EXPECT_TRUE(FailsWith(parse_bytes(bytes), ErrorCode::kInvalidModel, "header length is 0"));
}

TEST(SafetensorsBadInput, S04_HeaderLengthPlusEightOverflowIsRejected) {
  SafetensorsLimits limits;
  limits.max_header_bytes = std::numeric_limits<std::uint64_t>::max();
  const auto bytes = raw_safetensors_bytes("{}", {}, std::numeric_limits<std::uint64_t>::max() - 3);
  EXPECT_TRUE(FailsWith(parse_bytes(bytes, limits), ErrorCode::kOverflow, "overflows"));
}

TEST(SafetensorsBadInput, S05_HeaderNotStartingWithBraceIsRejected) {
  for (std::string_view header : {" {}     ", "[]      ", "\n{}     ", "\"x\"    "}) {
    const auto result = parse_header(header);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "must start with '{'")) << header;
    EXPECT_EQ(result.error().offset(), 8U);
  }
}

TEST(SafetensorsBadInput, S06_InvalidUtf8HeaderIsRejected) {
  // A bare continuation byte, an overlong '/', a UTF-16 surrogate, a code point above U+10FFFF
  // and a truncated sequence, each inside a tensor name at header position 2.
  for (std::string_view bad :
       {"\x80", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"}) {
    const std::string header = "{\"" + std::string(bad) + "\":{}}";
    const auto result = parse_header(header);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "UTF-8"));
    EXPECT_EQ(result.error().offset(), 8U + 2U);
  }
  // Valid multi-byte UTF-8 names are fine.
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("\xC3\xA9t\xC3\xA9_\xF0\x9F\x98\x80", DType::kU8, {1},
                         testing::bytes_of<std::uint8_t>({7})));
  const auto bytes = writer.serialize();
  ASSERT_TRUE(bytes.has_value());
  const auto file = parse_bytes(*bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_NE(file->find("\xC3\xA9t\xC3\xA9_\xF0\x9F\x98\x80"), nullptr);
}

TEST(SafetensorsBadInput, S07_TruncatedJsonIsRejectedWithItsPosition) {
  const std::string header = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1]";
  const auto result = parse_header(header);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "malformed"));
  ASSERT_TRUE(result.error().offset().has_value());
  EXPECT_GE(*result.error().offset(), 8U);
  EXPECT_LE(*result.error().offset(), 8U + header.size());
}

TEST(SafetensorsBadInput, S07_InvalidJsonIsRejectedWithItsPosition) {
  //                          0123456789
  const std::string header = "{\"a\" 1}";
  const auto result = parse_header(header);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "malformed"));
  EXPECT_EQ(result.error().offset(), 8U + 5U);  // the '1' where ':' belongs
}

TEST(SafetensorsBadInput, S07_TrailingBytesOtherThanSpacesAreRejected) {
  using namespace std::string_view_literals;
  for (std::string_view header : {"{}\n"sv, "{}  x"sv, "{} \t"sv, "{}\0"sv, "{}{}"sv}) {
    const auto result = parse_header(header);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "only spaces (0x20) may pad it"))
        << header;
    EXPECT_EQ(result.error().offset(), 8U + header.find_first_not_of(' ', 2));
  }
}

TEST(SafetensorsBadInput, S07_TrailingSpacesAreAccepted) {
  const auto result = parse_header("{" + entry("a", "U8", "[2]", 0, 2) + "}      ", 2);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(result->tensors().size(), 1U);
}

TEST(SafetensorsBadInput, S08_MillionDeepNestingHitsTheDepthLimitWithoutRecursion) {
  std::string header = "{\"a\":";
  header.append(1'000'000, '[');
  header.append(1'000'000, ']');
  header += "}";
  const auto result = parse_header(header);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kLimitExceeded, "nests deeper than 64"));
  // The first bracket past the limit: '{' is depth 1, so the 64th '[' (header position 5 + 63).
  EXPECT_EQ(result.error().offset(), 8U + 5U + 63U);
  // Even when unknown fields are skipped, deep values are refused by the pre-scan.
  SafetensorsLimits lenient;
  lenient.unknown_fields = UnknownFieldPolicy::kIgnore;
  std::string nested = "{\"a\":{\"x\":";
  nested.append(100'000, '{');
  EXPECT_TRUE(FailsWith(parse_header(nested, 0, lenient), ErrorCode::kLimitExceeded));
}

TEST(SafetensorsBadInput, S09_DuplicateTensorNamesAreRejected) {
  const std::string header =
      "{" + entry("w", "U8", "[2]", 0, 2) + "," + entry("w", "U8", "[2]", 2, 4) + "}";
  const auto result = parse_header(header, 4);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kDuplicate, "duplicate tensor name"));
  EXPECT_EQ(result.error().subject(), "w");
  // The offset points at the second key (its closing quote).
  EXPECT_EQ(result.error().offset(), 8U + header.rfind("\"w\"") + 2);
}

TEST(SafetensorsBadInput, S09_DuplicateMetadataKeysAndFieldsAreRejected) {
  EXPECT_TRUE(FailsWith(parse_header(R"({"__metadata__":{"k":"1","k":"2"}})"),
                        ErrorCode::kDuplicate, "'k' appears more than once"));
  EXPECT_TRUE(FailsWith(parse_header(R"({"__metadata__":{},"__metadata__":{}})"),
                        ErrorCode::kDuplicate, "__metadata__ appears more than once"));
  EXPECT_TRUE(FailsWith(
      parse_header(R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1),
      ErrorCode::kDuplicate, "'dtype' appears more than once"));
}

TEST(SafetensorsBadInput, S10_MetadataMustBeAStringToStringObject) {
  const char* cases[] = {
      R"({"__metadata__":{"k":1}})",     R"({"__metadata__":{"k":{"x":"y"}}})",
      R"({"__metadata__":{"k":["v"]}})", R"({"__metadata__":{"k":null}})",
      R"({"__metadata__":["k","v"]})",   R"({"__metadata__":"k"})",
  };
  for (const char* header : cases) {
    const auto result = parse_header(header);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "__metadata__")) << header;
    EXPECT_EQ(result.error().subject(), "__metadata__") << header;
  }
  const auto good = parse_header(R"({"__metadata__":{"format":"pt","b":""}})");
  ASSERT_TRUE(good.has_value()) << good.error().what();
  const std::map<std::string, std::string> expected{{"b", ""}, {"format", "pt"}};
  EXPECT_EQ(good->metadata(), expected);
}

TEST(SafetensorsBadInput, S11_EntryMissingARequiredFieldIsRejected) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"t":{"shape":[1],"data_offsets":[0,1]}})", "'dtype'"},
      {R"({"t":{"dtype":"U8","data_offsets":[0,1]}})", "'shape'"},
      {R"({"t":{"dtype":"U8","shape":[1]}})", "'data_offsets'"},
      {R"({"t":{}})", "'dtype'"},
  };
  for (const auto& [header, field] : cases) {
    const auto result = parse_header(header, 1);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, field)) << header;
    EXPECT_EQ(result.error().subject(), "t");
  }
  EXPECT_TRUE(
      FailsWith(parse_header(R"({"t":[1]})", 1), ErrorCode::kInvalidModel, "must be an object"));
}

TEST(SafetensorsBadInput, S11_UnknownEntryFieldIsRejectedByDefault) {
  const auto result = parse_header(
      R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"byte_order":"big"}})", 1);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "unknown field 'byte_order'"));
  EXPECT_EQ(result.error().subject(), "t");
}

TEST(SafetensorsBadInput, S11_UnknownEntryFieldIsSkippedUnderTheIgnorePolicy) {
  SafetensorsLimits limits;
  limits.unknown_fields = UnknownFieldPolicy::kIgnore;
  const auto result = parse_header(
      R"({"t":{"x":{"y":[1,{"z":null}],"w":-2.5},"dtype":"U8","shape":[1],"q":true,"data_offsets":[0,1]}})",
      1, limits);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  ASSERT_EQ(result->tensors().size(), 1U);
  EXPECT_EQ(result->tensors()[0].shape, std::vector<std::uint64_t>{1});
}

TEST(SafetensorsBadInput, S12_UnknownDtypeIsUnsupportedNamingDtypeAndTensor) {
  for (std::string_view dtype : {"F128", "Q4", "f32", ""}) {
    const auto result = parse_header("{" + entry("layer.w", dtype, "[1]", 0, 1) + "}", 1);
    EXPECT_TRUE(
        FailsWith(result, ErrorCode::kUnsupported, "unknown dtype '" + std::string(dtype) + "'"));
    EXPECT_EQ(result.error().subject(), "layer.w");
  }
}

TEST(SafetensorsBadInput, S12_ValidButUnsupportedDtypeIsUnsupported) {
  const std::tuple<const char*, const char*, std::uint64_t> cases[] = {
      {"F8_E8M0", "[4]", 4}, {"C64", "[2]", 16}, {"F4", "[4]", 2}, {"F6_E2M3", "[4]", 3}};
  for (const auto& [dtype, shape, bytes] : cases) {
    const auto result = parse_header("{" + entry("t", dtype, shape, 0, bytes) + "}", bytes);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kUnsupported,
                          "dtype " + std::string(dtype) + " is a valid SafeTensors dtype"));
    EXPECT_EQ(result.error().subject(), "t");
  }
}

TEST(SafetensorsBadInput, S13_ShapeElementsMustBeUnsignedIntegers) {
  const std::pair<const char*, const char*> cases[] = {
      {"[-1]", "negative"},      {"[1.5]", "fractional"},
      {"[1e3]", "fractional"},   {"[18446744073709551616]", "above 2^64-1"},
      {"[\"2\"]", "string"},     {"[null]", "null"},
      {"[true]", "boolean"},     {"[[1]]", "array"},
      {"2", "unsigned integer"},
  };
  for (const auto& [shape, why] : cases) {
    const auto result = parse_header("{" + entry("t", "U8", shape, 0, 1) + "}", 1);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, why)) << shape;
    EXPECT_EQ(result.error().subject(), "t");
    EXPECT_TRUE(result.error().offset().has_value());
  }
  // The largest unsigned value is a valid element (it then fails the size check, not parsing).
  EXPECT_TRUE(
      FailsWith(parse_header("{" + entry("t", "U8", "[18446744073709551615]", 0, 1) + "}", 1),
                ErrorCode::kInvalidModel, "data_offsets span 1 bytes"));
}

TEST(SafetensorsBadInput, S14_ElementCountOrByteSizeOverflowIsRejected) {
  // 2^32 * 2^32 elements overflows 64 bits.
  auto result = parse_header("{" + entry("t", "U8", "[4294967296,4294967296]", 0, 1) + "}", 1);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kOverflow, "element count"));
  EXPECT_EQ(result.error().subject(), "t");
  // 2^62 F32 elements fit, their byte size (2^64) does not.
  result = parse_header("{" + entry("t", "F32", "[4611686018427387904]", 0, 4) + "}", 4);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kOverflow, "byte size"));
  // Rank is bounded too.
  result =
      parse_header("{" + entry("t", "U8", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", 0, 1) + "}", 1);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kLimitExceeded, "rank"));
}

TEST(SafetensorsBadInput, S15_DataOffsetsMustBeTwoUnsignedIntegersWithBeginNotAfterEnd) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", "exactly two"},
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", "exactly two"},
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[]}})", "exactly two"},
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}})", "negative"},
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,"1"]}})", "string"},
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1.0]}})", "fractional"},
      {R"({"t":{"dtype":"U8","shape":[1],"data_offsets":{"b":0}}})", "array of two"},
      {R"({"t":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}})", "is after end"},
  };
  for (const auto& [header, why] : cases) {
    const auto result = parse_header(header, 1);
    EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, why)) << header;
    EXPECT_EQ(result.error().subject(), "t");
  }
}

TEST(SafetensorsBadInput, S16_OffsetSpanMustEqualDtypeTimesShape) {
  // F32 [2, 3] needs 24 bytes; the entry claims 20.
  const auto result = parse_header("{" + entry("w", "F32", "[2,3]", 0, 20) + "}", 20);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "span 20 bytes but dtype F32"));
  EXPECT_EQ(result.error().subject(), "w");
}

TEST(SafetensorsBadInput, S17_OffsetsBeyondTheDataBufferAreRejected) {
  const std::string header =
      "{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("b", "U8", "[4]", 4, 8) + "}";
  const auto result = parse_header(header, 6);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "past the end of the data buffer"));
  EXPECT_EQ(result.error().subject(), "b");
  EXPECT_EQ(result.error().offset(), 8U + header.size() + 4U);
}

TEST(SafetensorsBadInput, S17_HoleBetweenTensorsIsRejected) {
  const std::string header =
      "{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("b", "U8", "[4]", 6, 10) + "}";
  const auto result = parse_header(header, 10);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "hole of 2 unindexed bytes"));
  EXPECT_EQ(result.error().subject(), "b");
  // A hole at the very start, before the first tensor, too.
  EXPECT_TRUE(FailsWith(parse_header("{" + entry("a", "U8", "[4]", 1, 5) + "}", 5),
                        ErrorCode::kInvalidModel, "hole of 1"));
}

TEST(SafetensorsBadInput, S17_TrailingUnindexedBytesAreRejected) {
  // The polyglot-file guard: the buffer must be covered exactly.
  auto bytes = testing::two_tensor_writer().serialize();
  ASSERT_TRUE(bytes.has_value());
  const std::size_t clean_size = bytes->size();
  bytes->push_back(std::byte{0x50});
  const auto result = parse_bytes(*bytes);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "unindexed trailing data"));
  EXPECT_EQ(result.error().offset(), clean_size);
  // A header with no tensors must have no data at all.
  EXPECT_TRUE(FailsWith(parse_header("{}", 3), ErrorCode::kInvalidModel, "cover 0 of the 3"));
}

TEST(SafetensorsBadInput, S17_TruncatedFileIsRejected) {
  auto bytes = testing::two_tensor_writer().serialize();
  ASSERT_TRUE(bytes.has_value());
  bytes->pop_back();
  EXPECT_TRUE(
      FailsWith(parse_bytes(*bytes), ErrorCode::kInvalidModel, "past the end of the data buffer"));
}

TEST(SafetensorsBadInput, S18_OverlappingTensorsAreRejected) {
  const std::string header =
      "{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("b", "U8", "[4]", 2, 6) + "}";
  const auto result = parse_header(header, 6);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "overlap tensor 'a'"));
  EXPECT_EQ(result.error().subject(), "b");
  // Many tensors declared over the same bytes (the reference's DoS case).
  std::string same = "{";
  for (int i = 0; i < 100; ++i)
    same += (i ? "," : "") + entry("t" + std::to_string(i), "U8", "[4]", 0, 4);
  same += "}";
  EXPECT_TRUE(FailsWith(parse_header(same, 4), ErrorCode::kInvalidModel, "overlap"));
}

TEST(SafetensorsBadInput, S19_ZeroSizeTensorAtAnotherTensorsOffsetIsAcceptedAndEmpty) {
  // "z" (I32 [0, 3]) sits at offset 4, the start of "b", as the Python reference writer places it.
  const std::string header = "{" + entry("a", "U8", "[4]", 0, 4) + "," +
                             entry("b", "U8", "[2]", 4, 6) + "," +
                             entry("z", "I32", "[0,3]", 4, 4) + "}";
  const auto result = parse_header(header, 6);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  const SafetensorsTensor* z = result->find("z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->byte_size, 0U);
  EXPECT_EQ(z->element_count(), 0U);
  EXPECT_EQ(z->offset, 8U + header.size() + 4U);
  const auto bytes = result->tensor_bytes(*z);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_TRUE(bytes->empty());
  // File order: a, then z (zero-size sorts first at a shared offset), then b.
  ASSERT_EQ(result->tensors().size(), 3U);
  EXPECT_EQ(result->tensors()[1].name, "z");
}

TEST(SafetensorsBadInput, S19_ZeroSizeTensorIsRejectedUnderTheStrictPolicy) {
  SafetensorsLimits strict;
  strict.zero_size_tensors = ZeroSizeTensorPolicy::kReject;
  const std::string header =
      "{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("z", "F16", "[0]", 4, 4) + "}";
  ASSERT_TRUE(parse_header(header, 4).has_value());
  const auto result = parse_header(header, 4, strict);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "zero-size"));
  EXPECT_EQ(result.error().subject(), "z");
}

TEST(SafetensorsBadInput, S19_ZeroSizeTensorInsideAnotherTensorIsRejected) {
  const std::string header =
      "{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("z", "U8", "[0]", 2, 2) + "}";
  const auto result = parse_header(header, 4);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "overlap tensor 'a'"));
  EXPECT_EQ(result.error().subject(), "z");
}

TEST(SafetensorsBadInput, S20_SubByteDtypeWithPartialTrailingByteIsMisaligned) {
  // 3 F4 values are 12 bits; 5 F6 values are 30 bits: not whole bytes.
  auto result = parse_header("{" + entry("t", "F4", "[3]", 0, 2) + "}", 2);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "misaligned slice"));
  EXPECT_EQ(result.error().subject(), "t");
  result = parse_header("{" + entry("t", "F6_E3M2", "[5]", 0, 4) + "}", 4);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "misaligned slice"));
  // Overflowing bit counts are caught before the remainder is taken.
  result = parse_header("{" + entry("t", "F4", "[9223372036854775807]", 0, 1) + "}", 1);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kOverflow, "bit size"));
}

TEST(SafetensorsBadInput, S22_UnalignedDataStartIsAcceptedAndReadThroughByteSpans) {
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add_values<double>("d", DType::kF64, {2}, std::vector<double>{0.25, -3.5}));
  SafetensorsWriteOptions unpadded;
  unpadded.header_alignment = 1;
  auto header = writer.header_json(unpadded);
  ASSERT_TRUE(header.has_value());
  // Make sure the unpadded length leaves the data start unaligned.
  if ((8 + header->size()) % 8 == 0) header->push_back(' ');
  const auto payload = testing::bytes_of<double>({0.25, -3.5});
  const auto result = parse_bytes(raw_safetensors_bytes(*header, payload));
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_FALSE(result->header().data_is_8_byte_aligned());
  const auto bytes = result->tensor_bytes("d");
  ASSERT_TRUE(bytes.has_value());
  double values[2];
  std::memcpy(values, bytes->data(), sizeof(values));  // copy, never reinterpret_cast
  EXPECT_EQ(values[0], 0.25);
  EXPECT_EQ(values[1], -3.5);
}

TEST(SafetensorsBadInput, S23_NanAndInfinityAreAcceptedAndOptionallyReported) {
  SafetensorsWriter writer;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(
      writer.add_values<float>("f32", DType::kF32, {3}, std::vector<float>{1.0F, 2.0F, nan}));
  // F16 +inf is 0x7C00; BF16 -inf is 0xFF80; F8_E4M3 NaN is 0x7F; F8_E5M2 1.0 is 0x3C.
  ASSERT_TRUE(writer.add_values<std::uint16_t>("f16", DType::kF16, {2},
                                               std::vector<std::uint16_t>{0x3C00, 0x7C00}));
  ASSERT_TRUE(writer.add_values<std::uint16_t>("bf16", DType::kBF16, {1},
                                               std::vector<std::uint16_t>{0xFF80}));
  ASSERT_TRUE(writer.add_values<std::uint8_t>("e4m3", DType::kF8_E4M3, {1},
                                              std::vector<std::uint8_t>{0x7F}));
  ASSERT_TRUE(writer.add_values<std::uint8_t>("e5m2", DType::kF8_E5M2, {1},
                                              std::vector<std::uint8_t>{0x3C}));
  ASSERT_TRUE(writer.add_values<std::int32_t>("i32", DType::kI32, {1},
                                              std::vector<std::int32_t>{0x7F800000}));
  const auto bytes = writer.serialize();
  ASSERT_TRUE(bytes.has_value());
  const auto file = parse_bytes(*bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();  // the format allows NaN/Inf

  const SafetensorsTensor& f32 = *file->find("f32");
  const auto check = check_tensor_finite(*file, f32);
  EXPECT_TRUE(FailsWith(check, ErrorCode::kInvalidModel, "element 2 is NaN or infinite"));
  EXPECT_EQ(check.error().subject(), "f32");
  EXPECT_EQ(check.error().offset(), f32.offset + 8U);
  EXPECT_TRUE(FailsWith(check_tensor_finite(*file, *file->find("f16")), ErrorCode::kInvalidModel,
                        "element 1"));
  EXPECT_FALSE(check_tensor_finite(*file, *file->find("bf16")).has_value());
  EXPECT_FALSE(check_tensor_finite(*file, *file->find("e4m3")).has_value());
  EXPECT_TRUE(check_tensor_finite(*file, *file->find("e5m2")).has_value());
  EXPECT_TRUE(check_tensor_finite(*file, *file->find("i32")).has_value());  // not a float
}

TEST(SafetensorsBadInput, S24_TensorNamesAreOpaqueKeys) {
  const std::vector<std::string> names = {"../../etc/passwd",       "/abs/path", "a/b/c",
                                          "ctrl\x01\x1f\x7f",       "%s%n{}{0}", "__meta__",
                                          std::string(100'000, 'x')};
  SafetensorsWriter writer;
  for (std::size_t i = 0; i < names.size(); ++i) {
    ASSERT_TRUE(writer.add_values<std::uint8_t>(
        names[i], DType::kU8, {1}, std::vector<std::uint8_t>{static_cast<std::uint8_t>(i)}));
  }
  const auto bytes = writer.serialize();
  ASSERT_TRUE(bytes.has_value());
  const auto file = parse_bytes(*bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto span = file->tensor_bytes(names[i]);
    ASSERT_TRUE(span.has_value()) << names[i].substr(0, 40);
    ASSERT_EQ(span->size(), 1U);
    EXPECT_EQ(static_cast<std::uint8_t>((*span)[0]), i);
  }
  // A format-string name reaches an error message verbatim.
  const auto result = parse_header("{" + entry("%s%n{}", "Q9", "[1]", 0, 1) + "}", 1);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "%s%n{}");
  // An empty name cannot be addressed and is rejected.
  EXPECT_TRUE(FailsWith(parse_header("{" + entry("", "U8", "[1]", 0, 1) + "}", 1),
                        ErrorCode::kInvalidModel, "empty name"));
}

TEST(SafetensorsBadInput, S25_SizeIsValidatedAtOpenAndReadModeSurvivesTruncation) {
  testing::TempDir dir;
  const auto path = dir.path() / "m.safetensors";
  ASSERT_TRUE(testing::two_tensor_writer().write_file(path).has_value());
  const auto header = read_safetensors_header(path);
  ASSERT_TRUE(header.has_value()) << header.error().what();
  const auto in_memory = open_safetensors(path, {}, SafetensorsOpenMode::kReadIntoMemory);
  ASSERT_TRUE(in_memory.has_value()) << in_memory.error().what();

  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  // Opening the truncated file fails on the size check.
  EXPECT_TRUE(FailsWith(open_safetensors(path), ErrorCode::kInvalidModel,
                        "past the end of the data buffer"));
  // A header parsed before the change does not attach to the changed file.
  auto mapped = MappedFile::open(path);
  ASSERT_TRUE(mapped.has_value());
  EXPECT_TRUE(FailsWith(SafetensorsFile::attach(*header, *mapped), ErrorCode::kInvalidModel,
                        "changed since its header was read"));
  // The in-memory copy is unaffected.
  const auto b = in_memory->tensor_bytes("b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(std::vector<std::byte>(b->begin(), b->end()),
            testing::bytes_of<std::int16_t>({-1, 0, 7}));
}

TEST(SafetensorsBadInput, S28_HostIsLittleEndianAndTheLengthIsDecodedLittleEndian) {
  // The library static_asserts a little-endian host (safetensors.hpp); this is the same check.
  static_assert(std::endian::native == std::endian::little);
  // A header length of 0x0102 (258) must be read as 258, not as 0x0201000000000000.
  std::string header = "{}";
  header.resize(258, ' ');
  auto bytes = length_prefix(0x0102);
  const auto text = to_bytes(header);
  bytes.insert(bytes.end(), text.begin(), text.end());
  const auto result = parse_bytes(bytes);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(result->header().header_length(), 258U);
  EXPECT_EQ(result->header().data_start(), 266U);
}

}  // namespace
}  // namespace eredu::checkpoint
