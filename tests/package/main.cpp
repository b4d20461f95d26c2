// Uses eredu through its installed package only: headers from the install prefix, the compiled
// eredu::core library (MappedFile, logging) and the umbrella target's backend definitions. Each
// check compares with a value worked out by hand from the format definitions, not by eredu.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/log.hpp"
#include "eredu/core/result.hpp"

namespace {

int failures = 0;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

eredu::Result<std::uint64_t> q8_0_bytes_plus_header(std::vector<std::uint64_t> shape) {
  EREDU_TRY(const std::uint64_t bytes, eredu::checked_byte_size(eredu::DType::kQ8_0, shape));
  return bytes + 24;
}

}  // namespace

int main() {
  // Q8_0 blocks hold 32 elements in 34 bytes (an f16 scale + 32 int8): [4, 64] is 8 blocks.
  const auto q8 = q8_0_bytes_plus_header({4, 64});
  check(q8.has_value() && q8.value() == 8 * 34 + 24, "Q8_0 [4, 64] is 272 bytes");

  // 63 is not a whole number of 32-element blocks: a typed error, propagated by EREDU_TRY.
  const auto ragged = q8_0_bytes_plus_header({2, 63});
  check(!ragged.has_value() && ragged.error().code() == eredu::ErrorCode::kInvalidModel,
        "a ragged Q8_0 row is kInvalidModel");

  // ggml type id 12 is Q4_K; SafeTensors spells bfloat16 "BF16".
  const auto q4k = eredu::dtype_from_ggml_type(12);
  check(q4k.has_value() && *q4k == eredu::DType::kQ4_K, "ggml type 12 is Q4_K");
  check(eredu::dtype_from_safetensors("BF16").has_value(), "SafeTensors BF16 is known");
  check(!eredu::dtype_from_ggml_type(4).has_value(), "ggml type 4 (removed Q4_2) is unknown");

  // Compiled code from the installed static library (and its private spdlog dependency).
  eredu::log::set_level(eredu::log::Level::kError);
  const std::byte bytes[] = {std::byte{'G'}, std::byte{'G'}, std::byte{'U'}, std::byte{'F'}};
  const auto file = eredu::checkpoint::MappedFile::from_bytes(bytes, "in-memory");
  check(file->size() == 4, "MappedFile::from_bytes keeps 4 bytes");
  const auto past_end = file->slice(2, 3);
  check(!past_end.has_value(), "a slice past the end is an error");
  if (!past_end.has_value()) {
    check(past_end.error().what().find("in-memory") != std::string::npos,
          "the slice error names the file");
  }

#if !defined(EREDU_HAVE_CPU_BACKEND)
  check(false, "eredu::eredu carries EREDU_HAVE_CPU_BACKEND when the cpu component is installed");
#endif

  if (failures != 0) return 1;
  std::printf("consumer: eredu package works\n");
  return 0;
}
