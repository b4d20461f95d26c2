#pragma once
// Small string helpers private to the tokenizers.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eredu::text {

// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's stand-in for a space.
inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

// Every ' ' replaced by U+2581.
std::string escape_spaces(std::string_view text);
// Every U+2581 replaced by ' '.
std::string unescape_spaces(std::string_view text);

// The byte a byte token "<0xHH>" stands for: exactly six characters, two hex digits (either
// case). Anything else ("<0x-1>", "<0xZZ>", "<0x100>", "<0x4>") is nullopt. No stoi/strtol:
// they accept signs, spaces and overlong digit strings.
std::optional<std::uint8_t> parse_byte_token(std::string_view text) noexcept;

// `text` for an error message: printable ASCII kept, other bytes as \xHH, at most ~64 bytes.
std::string printable(std::string_view text);

}  // namespace eredu::text

namespace eredu::text {

// The byte offset of the first byte that does not belong to a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are ill-formed), or nullopt.
std::optional<std::size_t> find_invalid_utf8(std::string_view text) noexcept;

// Decodes the well-formed UTF-8 sequence at text[i] and advances i past it.
char32_t next_code_point(std::string_view text, std::size_t& i) noexcept;

// Appends the UTF-8 form of `cp`.
void append_utf8(std::string& out, char32_t cp);

}  // namespace eredu::text
