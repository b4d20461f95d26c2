#pragma once
// Internals shared by the SafeTensors reader files (private to src/): cheap linear checks run over
// untrusted JSON text before nlohmann sees it, the header fingerprint and the length prefix check.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace eredu::checkpoint::detail {

// The offset of the first byte that does not belong to well-formed UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF are ill-formed), or nullopt when `text` is valid.
[[nodiscard]] std::optional<std::size_t> find_invalid_utf8(std::string_view text) noexcept;

// What the structural pre-scan learned about a JSON text that starts with '{' or '['.
struct JsonScan {
  enum class Outcome : std::uint8_t {
    kComplete,      // the first value closes at `value_end`
    kTooDeep,       // nesting exceeded the limit at `position`
    kUnterminated,  // the text ends inside the first value (or inside a string)
  };
  Outcome outcome = Outcome::kUnterminated;
  std::size_t value_end = 0;  // one past the bracket closing the first value (kComplete)
  std::size_t position = 0;   // the bracket that went too deep (kTooDeep)
};

// Tracks bracket depth outside strings (honouring backslash escapes) without recursion, stopping
// at the bracket that closes the first value or at the first bracket deeper than `max_depth`.
// It does not validate JSON: nlohmann parses [0, value_end) afterwards, strictly. Because the
// scan stops at the limit, nlohmann never sees input nested deeper than `max_depth`.
[[nodiscard]] JsonScan scan_json_structure(std::string_view text, std::uint32_t max_depth) noexcept;

// The offset of the first byte in `text` at or after `from` that is not a space (0x20), or
// nullopt when there is none.
[[nodiscard]] std::optional<std::size_t> find_non_space(std::string_view text,
                                                        std::size_t from) noexcept;

}  // namespace eredu::checkpoint::detail

#include <span>

#include "eredu/checkpoint/safetensors.hpp"

namespace eredu::checkpoint::detail {

// FNV-1a (64-bit) of `bytes`: a cheap fingerprint of a header, to notice a file that changed
// between parsing its header and mapping it.
[[nodiscard]] std::uint64_t fnv1a64(std::span<const std::byte> bytes) noexcept;

// Decodes the 8-byte little-endian header length N from `prefix` (at least its first 8 bytes, or
// the whole file when shorter) and checks it (S01–S04): the file holds 8 bytes, N != 0, N is
// within the limit, 8 + N does not overflow and fits in `file_size`.
[[nodiscard]] Result<std::uint64_t> checked_safetensors_header_length(
    std::span<const std::byte> prefix, std::uint64_t file_size, std::string_view path,
    const SafetensorsLimits& limits);

// Reads the whole regular file at `path` into memory (SafetensorsOpenMode::kReadIntoMemory).
// MappedFile::from_bytes copies, so the file is briefly held twice.
[[nodiscard]] Result<std::shared_ptr<const MappedFile>> read_file_into_memory(
    const std::filesystem::path& path);

}  // namespace eredu::checkpoint::detail
