// S21: a header with 10^5 entries parses in bounded time: an O(n log n) sort and hashed
// duplicate checks (a quadratic scan over 10^5 entries would take minutes).

#include <algorithm>
#include <chrono>

#include "safetensors_test_util.hpp"

namespace eredu::checkpoint {
namespace {

using testing::FailsWith;

// 10^5 entries (6.6 MB of header); fewer under AddressSanitizer, whose slowdown would make the
// test long without proving more (the ratio check below is what shows the growth is linear).
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kEntries = 30'000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kEntries = 30'000;
#else
constexpr std::size_t kEntries = 100'000;
#endif
#else
constexpr std::size_t kEntries = 100'000;
#endif

// Entry i is "t<i>", one U8, stored at offset kEntries - 1 - i: the header order is the reverse
// of the file order, so the reader has to sort.
std::string reversed_header(std::size_t entries, bool duplicate_last) {
  std::string header = "{";
  header.reserve(entries * 56);
  for (std::size_t i = 0; i < entries; ++i) {
    const std::size_t offset = entries - 1 - i;
    const std::size_t id = duplicate_last && i + 1 == entries ? 0 : i;
    if (i != 0) header += ',';
    header += "\"t" + std::to_string(id) + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + 1) + "]}";
  }
  header += "}";
  return header;
}

// Seconds to parse `file`: the best of `repeats` runs.
double seconds_to_parse(const std::shared_ptr<const MappedFile>& file, int repeats) {
  double best = 1e9;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto parsed = parse_safetensors(file);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(parsed.has_value());
    best = std::min(best, elapsed.count());
  }
  return best;
}

std::shared_ptr<const MappedFile> reversed_file(std::size_t entries) {
  const std::vector<std::byte> payload(entries, std::byte{0x11});
  return MappedFile::from_bytes(raw_safetensors_bytes(reversed_header(entries, false), payload),
                                "scale.safetensors");
}

TEST(SafetensorsScale, S21_ManyEntriesParseInFileOrderInTimeLinearInTheirNumber) {
  const auto large = reversed_file(kEntries);
  const auto file = parse_safetensors(large);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  ASSERT_EQ(file->tensors().size(), kEntries);
  // File order: the last header entry holds offset 0, the first the last byte.
  EXPECT_EQ(file->tensors().front().name, "t" + std::to_string(kEntries - 1));
  EXPECT_EQ(file->find("t0")->offset, large->size() - 1);

  // Ten times the entries must cost about ten times the time (n log n: ~12x), far from the 100x
  // of a quadratic scan. A ratio, so that sanitizer builds and loaded machines pass alike; the
  // slack absorbs scheduling noise.
  const double small_seconds = seconds_to_parse(reversed_file(kEntries / 10), 3);
  const double large_seconds = seconds_to_parse(large, 1);
  EXPECT_LT(large_seconds, 40 * small_seconds + 0.5)
      << "small " << small_seconds << " s, large " << large_seconds << " s";
}

TEST(SafetensorsScale, S21_DuplicateAtTheEndOfAManyEntryHeaderIsFound) {
  const std::string header = reversed_header(kEntries / 5, true);
  const std::vector<std::byte> payload(kEntries / 5, std::byte{0x11});
  const auto result = testing::parse_bytes(raw_safetensors_bytes(header, payload));
  EXPECT_TRUE(FailsWith(result, ErrorCode::kDuplicate));
  EXPECT_EQ(result.error().subject(), "t0");
}

TEST(SafetensorsScale, S21_TensorCountLimitIsEnforced) {
  SafetensorsLimits limits;
  limits.max_tensors = 1000;
  const std::string header = reversed_header(1001, false);
  const std::vector<std::byte> payload(1001, std::byte{0});
  const auto result = testing::parse_bytes(raw_safetensors_bytes(header, payload), limits);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kLimitExceeded, "more than 1000 tensors"));
}

}  // namespace
}  // namespace eredu::checkpoint
