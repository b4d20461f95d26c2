#pragma once
// Helpers for the SafeTensors tests: building files from bytes our writer (or a raw header)
// produces, parsing them in memory, temporary directories, and error assertions.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/checkpoint/safetensors.hpp"
#include "eredu/checkpoint/safetensors_writer.hpp"

namespace eredu::checkpoint::testing {

inline std::vector<std::byte> to_bytes(std::string_view text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

template <typename T>
std::vector<std::byte> bytes_of(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::size_t at = 0;
  for (const T& v : values) {
    std::memcpy(out.data() + at, &v, sizeof(T));
    at += sizeof(T);
  }
  return out;
}

inline Result<SafetensorsFile> parse_bytes(const std::vector<std::byte>& bytes,
                                           const SafetensorsLimits& limits = {}) {
  return parse_safetensors(MappedFile::from_bytes(bytes, "test.safetensors"), limits);
}

// A file with the given header text (declared length = its size) and `payload_size` zero bytes.
inline Result<SafetensorsFile> parse_header(std::string_view header, std::size_t payload_size = 0,
                                            const SafetensorsLimits& limits = {}) {
  const std::vector<std::byte> payload(payload_size, std::byte{0});
  return parse_bytes(raw_safetensors_bytes(header, payload), limits);
}

// Asserts `result` failed with `code` and a message containing `needle`.
template <typename T>
::testing::AssertionResult FailsWith(const Result<T>& result, ErrorCode code,
                                     std::string_view needle = {}) {
  if (result.has_value()) return ::testing::AssertionFailure() << "expected an error, got a value";
  const Error& error = result.error();
  if (error.code() != code) {
    return ::testing::AssertionFailure()
           << "expected code '" << to_string(code) << "', got: " << error.what();
  }
  if (!needle.empty() && error.message().find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks '" << needle << "': " << error.what();
  }
  return ::testing::AssertionSuccess() << error.what();
}

// A fresh empty directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("eredu-safetensors-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter.fetch_add(1)));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::filesystem::path& path, std::string_view text) {
  ASSERT_TRUE(write_safetensors_bytes(path, to_bytes(text)).has_value()) << path;
}

// A small valid model: "a" F32 [2] = {1, 2}; "b" I16 [3] = {-1, 0, 7}.
inline SafetensorsWriter two_tensor_writer() {
  SafetensorsWriter writer;
  EXPECT_TRUE(writer.add("a", DType::kF32, {2}, bytes_of<float>({1.0F, 2.0F})).has_value());
  EXPECT_TRUE(writer.add("b", DType::kI16, {3}, bytes_of<std::int16_t>({-1, 0, 7})).has_value());
  return writer;
}

}  // namespace eredu::checkpoint::testing
