#include "text_util.hpp"

#include <cstdio>

namespace eredu::text {
namespace {

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text, pos);
  return out;
}

std::optional<std::uint8_t> hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
  if (c >= 'A' && c <= 'F') return static_cast<std::uint8_t>(c - 'A' + 10);
  if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
  return std::nullopt;
}

}  // namespace

std::string escape_spaces(std::string_view text) {
  return replace_all(text, " ", kSpaceMarker);
}

std::string unescape_spaces(std::string_view text) {
  return replace_all(text, kSpaceMarker, " ");
}

std::optional<std::uint8_t> parse_byte_token(std::string_view text) noexcept {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  const auto high = hex_digit(text[3]);
  const auto low = hex_digit(text[4]);
  if (!high || !low) return std::nullopt;
  return static_cast<std::uint8_t>(*high * 16 + *low);
}

std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 64;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

}  // namespace eredu::text
