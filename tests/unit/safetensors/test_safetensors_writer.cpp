// The deterministic writer and reader round trips. Expected bytes are written out by hand from the
// format description, not taken from the code under test.

#include <string>

#include "safetensors_test_util.hpp"

namespace eredu::checkpoint {
namespace {

using testing::bytes_of;
using testing::FailsWith;
using testing::parse_bytes;
using testing::to_bytes;

TEST(SafetensorsWriter, OutputMatchesTheFormatByteForByte) {
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("a", DType::kF32, {1}, bytes_of<float>({1.0F})));
  const auto bytes = writer.serialize();
  ASSERT_TRUE(bytes.has_value());
  // 54 bytes of JSON, padded with 2 spaces so that 8 + 56 is a multiple of 8.
  const std::string json = R"({"a":{"data_offsets":[0,4],"dtype":"F32","shape":[1]}})";
  ASSERT_EQ(json.size(), 54U);
  std::vector<std::byte> expected = {std::byte{56}, std::byte{0}, std::byte{0}, std::byte{0},
                                     std::byte{0},  std::byte{0}, std::byte{0}, std::byte{0}};
  const auto text = to_bytes(json + "  ");
  expected.insert(expected.end(), text.begin(), text.end());
  for (std::byte b : {std::byte{0x00}, std::byte{0x00}, std::byte{0x80}, std::byte{0x3F}}) {
    expected.push_back(b);  // 1.0f little-endian
  }
  EXPECT_EQ(*bytes, expected);
}

TEST(SafetensorsWriter, IdenticalInputGivesIdenticalBytesWhateverTheInsertionOrder) {
  SafetensorsWriter first;
  ASSERT_TRUE(first.add("z", DType::kU8, {2}, bytes_of<std::uint8_t>({1, 2})));
  ASSERT_TRUE(first.add("m", DType::kF16, {1}, bytes_of<std::uint16_t>({0x3C00})));
  first.set_metadata("k2", "v2");
  first.set_metadata("k1", "v1");
  SafetensorsWriter second;
  second.set_metadata("k1", "v1");
  second.set_metadata("k2", "v2");
  ASSERT_TRUE(second.add("m", DType::kF16, {1}, bytes_of<std::uint16_t>({0x3C00})));
  ASSERT_TRUE(second.add("z", DType::kU8, {2}, bytes_of<std::uint8_t>({1, 2})));
  const auto a = first.serialize();
  const auto b = second.serialize();
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*first.header_json(),
            R"({"__metadata__":{"k1":"v1","k2":"v2"},"m":{"data_offsets":[0,2],"dtype":"F16",)"
            R"("shape":[1]},"z":{"data_offsets":[2,4],"dtype":"U8","shape":[2]}} )");
  EXPECT_EQ((8 + first.header_json()->size()) % 8, 0U);
}

TEST(SafetensorsWriter, RejectsSizeMismatchDuplicateNamesAndDtypesSafetensorsCannotStore) {
  SafetensorsWriter writer;
  EXPECT_TRUE(FailsWith(writer.add("a", DType::kF32, {2}, bytes_of<float>({1.0F})),
                        ErrorCode::kInvalidArgument, "need 8"));
  ASSERT_TRUE(writer.add("a", DType::kF32, {1}, bytes_of<float>({1.0F})));
  EXPECT_TRUE(
      FailsWith(writer.add("a", DType::kF32, {1}, bytes_of<float>({1.0F})), ErrorCode::kDuplicate));
  EXPECT_TRUE(FailsWith(writer.add("q", DType::kQ4_0, {32}, std::vector<std::byte>(18)),
                        ErrorCode::kInvalidArgument, "cannot be stored in SafeTensors"));
  EXPECT_TRUE(FailsWith(writer.add("__metadata__", DType::kU8, {1}, bytes_of<std::uint8_t>({1})),
                        ErrorCode::kInvalidArgument));
  SafetensorsWriter bad_utf8;
  ASSERT_TRUE(bad_utf8.add("\xFF", DType::kU8, {1}, bytes_of<std::uint8_t>({1})));
  EXPECT_TRUE(FailsWith(bad_utf8.serialize(), ErrorCode::kInvalidArgument));
}

TEST(SafetensorsRoundTrip, EveryDtypeShapeAndMetadataSurvivesWriteAndRead) {
  struct Case {
    std::string name;
    DType dtype;
    std::vector<std::uint64_t> shape;
    std::size_t bytes;  // by hand: elements x element size
  };
  const std::vector<Case> cases = {
      {"bool", DType::kBool, {3}, 3},
      {"u8", DType::kU8, {2, 2}, 4},
      {"i8", DType::kI8, {1}, 1},
      {"u16", DType::kU16, {2}, 4},
      {"i16", DType::kI16, {3}, 6},
      {"f16", DType::kF16, {2, 1}, 4},
      {"bf16", DType::kBF16, {4}, 8},
      {"u32", DType::kU32, {1}, 4},
      {"i32", DType::kI32, {2}, 8},
      {"f32", DType::kF32, {2, 3}, 24},
      {"u64", DType::kU64, {1}, 8},
      {"i64", DType::kI64, {1}, 8},
      {"f64", DType::kF64, {}, 8},
      {"e4m3", DType::kF8_E4M3, {5}, 5},
      {"e5m2", DType::kF8_E5M2, {1, 1, 3}, 3},
      {"empty", DType::kF32, {0, 7}, 0},
  };
  SafetensorsWriter writer;
  std::map<std::string, std::vector<std::byte>> payloads;
  int seed = 1;
  for (const Case& c : cases) {
    std::vector<std::byte> data(c.bytes);
    for (std::byte& b : data)
      b = static_cast<std::byte>(seed++ * 37);
    ASSERT_TRUE(writer.add(c.name, c.dtype, c.shape, data)) << c.name;
    payloads[c.name] = data;
  }
  writer.set_metadata("format", "pt");
  const auto bytes = writer.serialize();
  ASSERT_TRUE(bytes.has_value());
  const auto file = parse_bytes(*bytes);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  EXPECT_EQ(file->metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(file->tensors().size(), cases.size());
  for (const Case& c : cases) {
    const SafetensorsTensor* t = file->find(c.name);
    ASSERT_NE(t, nullptr) << c.name;
    EXPECT_EQ(t->dtype, c.dtype) << c.name;
    EXPECT_EQ(t->shape, c.shape) << c.name;
    EXPECT_EQ(t->byte_size, c.bytes) << c.name;
    const auto span = file->tensor_bytes(*t);
    ASSERT_TRUE(span.has_value());
    EXPECT_EQ(std::vector<std::byte>(span->begin(), span->end()), payloads[c.name]) << c.name;
  }
  // Tensors are listed in file order with strictly increasing, contiguous offsets.
  std::uint64_t cursor = file->header().data_start();
  for (const SafetensorsTensor& t : file->tensors()) {
    EXPECT_EQ(t.offset, cursor) << t.name;
    cursor += t.byte_size;
  }
  EXPECT_EQ(cursor, bytes->size());
}

TEST(SafetensorsRoundTrip, MappedInMemoryAndHeaderOnlyReadsAgree) {
  testing::TempDir dir;
  const auto path = dir.path() / "m.safetensors";
  SafetensorsWriter writer = testing::two_tensor_writer();
  writer.set_metadata("who", "test");
  ASSERT_TRUE(writer.write_file(path));
  const auto mapped = open_safetensors(path);
  const auto loaded = open_safetensors(path, {}, SafetensorsOpenMode::kReadIntoMemory);
  const auto header = read_safetensors_header(path);
  ASSERT_TRUE(mapped.has_value()) << mapped.error().what();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().what();
  ASSERT_TRUE(header.has_value()) << header.error().what();
  EXPECT_EQ(mapped->tensors(), loaded->tensors());
  EXPECT_EQ(mapped->tensors(), header->tensors());
  EXPECT_EQ(header->metadata(), mapped->metadata());
  EXPECT_EQ(header->file_size(), std::filesystem::file_size(path));
  EXPECT_EQ(header->header_hash(), mapped->header().header_hash());
  // A header read alone attaches to a later mapping of the unchanged file.
  const auto reopened = MappedFile::open(path);
  ASSERT_TRUE(reopened.has_value());
  const auto attached = SafetensorsFile::attach(*header, *reopened);
  ASSERT_TRUE(attached.has_value()) << attached.error().what();
  const auto a = attached->tensor_bytes("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(std::vector<std::byte>(a->begin(), a->end()), bytes_of<float>({1.0F, 2.0F}));
  EXPECT_EQ(a->data(), (*reopened)->bytes().data() + attached->find("a")->offset);
}

TEST(SafetensorsRoundTrip, LookupOfAnAbsentTensorIsNotFoundNamingIt) {
  const auto bytes = testing::two_tensor_writer().serialize();
  ASSERT_TRUE(bytes.has_value());
  const auto file = parse_bytes(*bytes);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->find("c"), nullptr);
  const auto missing = file->tensor_bytes("c");
  EXPECT_TRUE(FailsWith(missing, ErrorCode::kNotFound));
  EXPECT_EQ(missing.error().subject(), "c");
  EXPECT_EQ(missing.error().path(), "test.safetensors");
}

TEST(SafetensorsRoundTrip, CopiedHeadersKeepWorkingLookups) {
  const auto bytes = testing::two_tensor_writer().serialize();
  ASSERT_TRUE(bytes.has_value());
  std::optional<SafetensorsHeader> copy;
  {
    const auto file = parse_bytes(*bytes);
    ASSERT_TRUE(file.has_value());
    copy = file->header();  // the original dies at the end of this scope
  }
  ASSERT_NE(copy->find("b"), nullptr);
  EXPECT_EQ(copy->find("b")->shape, std::vector<std::uint64_t>{3});
}

TEST(SafetensorsRoundTrip, OpeningAMissingFileIsNotFoundNamingThePath) {
  const auto result = open_safetensors("/nonexistent/eredu/x.safetensors");
  EXPECT_TRUE(FailsWith(result, ErrorCode::kNotFound));
  EXPECT_EQ(result.error().path(), "/nonexistent/eredu/x.safetensors");
  EXPECT_TRUE(
      FailsWith(read_safetensors_header("/nonexistent/eredu/x.safetensors"), ErrorCode::kNotFound));
}

}  // namespace
}  // namespace eredu::checkpoint
