#pragma once
// Fixtures for the GGUF tests: a small valid file built by the writer, helpers to parse bytes and
// to check that an error names the right code, subject and offset.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/core/log.hpp"

namespace eredu::checkpoint::testing {

inline std::vector<std::byte> to_bytes(std::string_view text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

// `count` bytes whose values are a simple function of their index (independent of the reader).
inline std::vector<std::byte> pattern_bytes(std::size_t count, unsigned seed = 1) {
  std::vector<std::byte> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = static_cast<std::byte>((i * 31 + seed * 7) & 0xFF);
  }
  return out;
}

// A writer holding a small valid model: a few metadata entries and three tensors
//   "a.weight" F32 shape [2, 4] (32 bytes), "b.weight" Q8_0 shape [2, 32] (68 bytes),
//   "c.bias" F16 shape [3] (6 bytes).
inline GgufWriter valid_writer() {
  GgufWriter w;
  w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata("general.name", GgufValue("fixture"));
  w.add_metadata("llama.block_count", GgufValue(std::uint32_t{2}));
  w.add_metadata("tokenizer.ggml.tokens",
                 GgufValue(GgufArray::of_strings({"<unk>", "<s>", "</s>", "a"})));
  const std::vector<std::uint64_t> a_shape{2, 4}, b_shape{2, 32}, c_shape{3};
  EXPECT_TRUE(w.add_tensor("a.weight", DType::kF32, a_shape, pattern_bytes(32, 1)).has_value());
  EXPECT_TRUE(w.add_tensor("b.weight", DType::kQ8_0, b_shape, pattern_bytes(68, 2)).has_value());
  EXPECT_TRUE(w.add_tensor("c.bias", DType::kF16, c_shape, pattern_bytes(6, 3)).has_value());
  return w;
}

inline GgufImage valid_image() {
  auto image = valid_writer().build();
  EXPECT_TRUE(image.has_value());
  return std::move(image).value();
}

inline Result<GgufFile> parse_bytes(const std::vector<std::byte>& bytes,
                                    const GgufLimits& limits = {}) {
  return parse_gguf(MappedFile::from_bytes(bytes, "fixture.gguf"), limits);
}

inline std::filesystem::path temp_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("eredu-gguf-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Captures the library's log messages while alive (restores the default sink afterwards).
class LogCapture {
 public:
  LogCapture() {
    log::set_sink([this](log::Level, std::string_view message) { lines_.emplace_back(message); });
  }
  ~LogCapture() { log::set_sink({}); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  [[nodiscard]] bool contains(std::string_view needle) const {
    for (const std::string& line : lines_) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::vector<std::string> lines_;
};

}  // namespace eredu::checkpoint::testing

// Expects `result` to be an error with `code` whose what() contains `needle`.
#define EXPECT_GGUF_ERROR(result, code_, needle)                                          \
  do {                                                                                    \
    const auto& eredu_r_ = (result);                                                      \
    ASSERT_FALSE(eredu_r_.has_value()) << "expected an error containing: " << needle;     \
    EXPECT_EQ(eredu_r_.error().code(), code_) << eredu_r_.error().what();                 \
    EXPECT_NE(eredu_r_.error().what().find(needle), std::string::npos)                    \
        << "message: " << eredu_r_.error().what() << "\nexpected to contain: " << needle; \
    EXPECT_EQ(eredu_r_.error().path(), "fixture.gguf") << eredu_r_.error().what();        \
  } while (false)
