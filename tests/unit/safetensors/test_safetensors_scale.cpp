// S21: a header with hundreds of thousands of entries parses in bounded time (an O(n log n) sort
// and hashed duplicate checks; a quadratic scan over 2 x 10^5 entries would take minutes).

#include <chrono>

#include "safetensors_test_util.hpp"

namespace eredu::checkpoint {
namespace {

using testing::FailsWith;

constexpr std::size_t kEntries = 200'000;

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

TEST(SafetensorsScale, S21_TwoHundredThousandEntriesParseInBoundedTime) {
  const std::string header = reversed_header(kEntries, false);
  const std::vector<std::byte> payload(kEntries, std::byte{0x11});
  const auto bytes = raw_safetensors_bytes(header, payload);
  const auto start = std::chrono::steady_clock::now();
  const auto file = testing::parse_bytes(bytes);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(file.has_value()) << file.error().what();
  ASSERT_EQ(file->tensors().size(), kEntries);
  // File order: the last header entry holds offset 0.
  EXPECT_EQ(file->tensors().front().name, "t" + std::to_string(kEntries - 1));
  EXPECT_EQ(file->find("t0")->offset, 8 + header.size() + kEntries - 1);
  // Generous for sanitizer builds on a loaded machine; typical is well under a second.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count(), 20);
}

TEST(SafetensorsScale, S21_DuplicateAtTheEndOfALargeHeaderIsFoundQuickly) {
  const std::string header = reversed_header(kEntries, true);
  const std::vector<std::byte> payload(kEntries, std::byte{0x11});
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
