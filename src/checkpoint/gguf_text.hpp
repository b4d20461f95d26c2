#pragma once
// Small text helpers for GGUF error messages (private to src/checkpoint).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace eredu::checkpoint::detail {

// Two lower-case hex digits.
inline std::string hex_byte(unsigned char c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string{kDigits[c >> 4], kDigits[c & 0xF]};
}

// `text` with non-printable bytes as \xNN, cut to `max` characters: safe to put in a message.
inline std::string printable(std::string_view text, std::size_t max = 200) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex_byte(c);
    }
  }
  if (out.size() >= max && text.size() > max) out += "...";
  return out;
}

// "'GGML' (47 47 4d 4c)": the four magic bytes, printable ones as text, all in hex.
inline std::string describe_magic(const std::array<unsigned char, 4>& magic) {
  std::string text = "'";
  std::string hex;
  for (unsigned char c : magic) {
    text += (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '?';
    if (!hex.empty()) hex += ' ';
    hex += hex_byte(c);
  }
  return text + "' (" + hex + ")";
}

// Dotted lower_snake_case: segments of [a-z0-9_], none empty.
inline bool is_lower_snake_dotted(std::string_view key) {
  if (key.empty()) return false;
  bool segment_empty = true;
  for (char c : key) {
    if (c == '.') {
      if (segment_empty) return false;
      segment_empty = true;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
      segment_empty = false;
    } else {
      return false;
    }
  }
  return !segment_empty;
}

}  // namespace eredu::checkpoint::detail
