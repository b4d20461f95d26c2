#include "safetensors_detail.hpp"

namespace eredu::checkpoint::detail {

std::optional<std::size_t> find_invalid_utf8(std::string_view text) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code_point = 0;
    std::uint32_t minimum = 0;
    if ((lead & 0xE0) == 0xC0) {
      length = 2, code_point = lead & 0x1F, minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, code_point = lead & 0x0F, minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, code_point = lead & 0x07, minimum = 0x10000;
    } else {
      return i;  // a continuation byte or 0xF8..0xFF cannot start a sequence
    }
    if (length > size - i) return i;
    for (std::size_t k = 1; k < length; ++k) {
      const unsigned char next = bytes[i + k];
      if ((next & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    if (code_point < minimum || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return i;
    }
    i += length;
  }
  return std::nullopt;
}

JsonScan scan_json_structure(std::string_view text, std::uint32_t max_depth) noexcept {
  JsonScan scan;
  std::uint64_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        if (++depth > max_depth) {
          scan.outcome = JsonScan::Outcome::kTooDeep;
          scan.position = i;
          return scan;
        }
        break;
      case '}':
      case ']':
        // A stray closer at depth 0 is left for nlohmann to report as a syntax error.
        if (depth == 0 || --depth == 0) {
          scan.outcome = JsonScan::Outcome::kComplete;
          scan.value_end = i + 1;
          return scan;
        }
        break;
      default:
        break;
    }
  }
  scan.outcome = JsonScan::Outcome::kUnterminated;
  return scan;
}

std::optional<std::size_t> find_non_space(std::string_view text, std::size_t from) noexcept {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (text[i] != ' ') return i;
  }
  return std::nullopt;
}

}  // namespace eredu::checkpoint::detail

namespace eredu::checkpoint::detail {

std::uint64_t fnv1a64(std::span<const std::byte> bytes) noexcept {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::byte b : bytes) {
    hash ^= static_cast<std::uint64_t>(b);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace eredu::checkpoint::detail
