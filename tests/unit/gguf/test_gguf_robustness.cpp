// Arbitrary bytes never crash the reader: every truncation of a valid file is an error at or
// before the cut, and every single-byte corruption either parses or fails cleanly (run under
// ASan/UBSan in CI to catch out-of-bounds reads). Also: no allocation sized by untrusted counts.

#include <chrono>

#include "gguf_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::parse_bytes;

// A richer fixture than valid_image: arrays of every kind and a nested array.
GgufImage rich_image() {
  GgufWriter w = testing::valid_writer();
  w.add_metadata("t.scores", GgufValue(GgufArray::of(std::vector<float>{0.f, -1.f, 2.f})));
  w.add_metadata("t.flags", GgufValue(GgufArray::of(std::vector<bool>{true, false})));
  w.add_metadata(
      "t.nested",
      GgufValue(GgufArray::of_arrays(
          {GgufArray::of_strings({"x", "yz"}), GgufArray::of(std::vector<std::uint64_t>{1, 2})})));
  w.add_metadata("t.f64", GgufValue(2.0));
  auto image = w.build();
  EXPECT_TRUE(image.has_value());
  return std::move(image).value();
}

TEST(GgufRobustness, EveryTruncationOfAValidFileIsAnErrorNeverACrash) {
  const GgufImage image = rich_image();
  // The last tensor's data ends before the final padding; cuts inside that padding are valid.
  const GgufTensorLayout& last = image.layout.tensors.back();
  const std::uint64_t needed = last.data_offset + last.data_size;
  for (std::size_t n = 0; n < image.bytes.size(); ++n) {
    std::vector<std::byte> cut(image.bytes.begin(), image.bytes.begin() + n);
    const auto result = parse_bytes(cut);
    if (n >= needed) {
      EXPECT_TRUE(result.has_value()) << n << ": " << result.error().what();
      continue;
    }
    ASSERT_FALSE(result.has_value()) << "a " << n << "-byte prefix parsed";
    EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel) << result.error().what();
    ASSERT_TRUE(result.error().offset().has_value()) << result.error().what();
    EXPECT_LE(*result.error().offset(), n) << result.error().what();
  }
}

TEST(GgufRobustness, EverySingleByteCorruptionParsesOrFailsCleanly) {
  const GgufImage image = rich_image();
  const testing::LogCapture quiet;  // mutated alignments and sizes log warnings
  int failures = 0;
  for (std::size_t i = 0; i < image.layout.data_section_offset; ++i) {
    for (unsigned char value : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
      std::vector<std::byte> mutated = image.bytes;
      mutated[i] = static_cast<std::byte>(value);
      const auto result = parse_bytes(mutated);
      if (!result.has_value()) {
        ++failures;
        EXPECT_FALSE(result.error().message().empty());
        EXPECT_NE(result.error().code(), ErrorCode::kInternal) << result.error().what();
      } else {
        // Whatever parsed must still describe ranges inside the buffer.
        for (const GgufTensorInfo& t : result->tensors()) {
          EXPECT_LE(t.data_offset + t.byte_size, mutated.size());
        }
      }
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(GgufRobustness, HugeDeclaredCountsInASixtyFourByteFileAreRejectedQuickly) {
  // n_tensors = 2^40 and n_kv = 2^40 with every limit lifted: only the file-size bound stands
  // between the reader and a multi-terabyte reservation.
  GgufLimits lifted;
  lifted.max_tensors = UINT64_MAX;
  lifted.max_metadata_entries = UINT64_MAX;
  lifted.max_array_elements = UINT64_MAX;
  lifted.max_metadata_bytes = UINT64_MAX;
  std::vector<std::byte> bytes(64, std::byte{0});
  std::memcpy(bytes.data(), "GGUF", 4);
  ASSERT_TRUE(overwrite_le<std::uint32_t>(bytes, 4, 3));
  ASSERT_TRUE(overwrite_le<std::uint64_t>(bytes, 8, 1ull << 40));
  ASSERT_TRUE(overwrite_le<std::uint64_t>(bytes, 16, 1ull << 40));
  const auto start = std::chrono::steady_clock::now();
  const auto result = parse_bytes(bytes, lifted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(result.error().offset(), 8u);

  // A metadata count that fits the file but entries that do not: every entry is read, none is
  // reserved beyond what the file can hold, and the first short entry fails.
  ASSERT_TRUE(overwrite_le<std::uint64_t>(bytes, 8, 0));
  ASSERT_TRUE(overwrite_le<std::uint64_t>(bytes, 16, 2));
  const auto short_entries = parse_bytes(bytes, lifted);
  ASSERT_FALSE(short_entries.has_value());
  EXPECT_EQ(short_entries.error().offset(), 24u);  // key length 0 of the first entry
}

TEST(GgufRobustness, ParseFromAMappedFileAndFromBytesAgree) {
  const GgufImage image = rich_image();
  const std::filesystem::path dir = testing::temp_dir("agree");
  ASSERT_TRUE(write_bytes_to_file(dir / "r.gguf", image.bytes).has_value());
  auto mapped = GgufFile::open(dir / "r.gguf");
  auto memory = parse_bytes(image.bytes);
  ASSERT_TRUE(mapped.has_value() && memory.has_value());
  ASSERT_EQ(mapped->metadata().size(), memory->metadata().size());
  for (std::size_t i = 0; i < mapped->metadata().size(); ++i) {
    EXPECT_EQ(mapped->metadata()[i].value, memory->metadata()[i].value);
  }
  EXPECT_EQ(mapped->contents().path(), (dir / "r.gguf").string());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eredu::checkpoint
