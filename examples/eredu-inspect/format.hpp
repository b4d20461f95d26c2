#pragma once
// Small text helpers shared by the text and JSON printers: byte counts for people, shapes,
// printable excerpts of untrusted strings and summaries of metadata values.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "eredu/checkpoint/gguf_value.hpp"

namespace eredu::inspect {

// How much of a metadata value is shown.
struct ValueLimits {
  std::uint64_t max_array = 8;    // array elements shown before "..."
  std::uint64_t max_string = 96;  // bytes of a string shown before it is cut
};

// "512 B", "3.5 KiB", "1.1 MiB", "7.0 GiB".
[[nodiscard]] std::string human_bytes(std::uint64_t bytes);
// "[512, 64]"; "[]" for a scalar.
[[nodiscard]] std::string shape_string(std::span<const std::uint64_t> shape);
// "12.5%" for 0.125.
[[nodiscard]] std::string percent(double fraction);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence (raw bytes that are not UTF-8 are cut anywhere).
[[nodiscard]] std::string_view utf8_prefix(std::string_view text, std::uint64_t max_bytes);

// `text` on one line for a terminal: valid UTF-8 is kept, backslash, quotes and control
// characters are escaped (\n, \t, \xNN), and bytes that are not UTF-8 are shown as \xNN.
[[nodiscard]] std::string escape_for_terminal(std::string_view text);

// `text` on one line, otherwise verbatim: only control characters (\n, \t, \xNN) and bytes that
// are not UTF-8 (\xNN) are escaped. For error messages, which quote names themselves.
[[nodiscard]] std::string escape_control(std::string_view text);

// A string value for people: "\"text\"" or "\"first bytes...\" (1234 bytes)".
[[nodiscard]] std::string summarize_string(std::string_view text, const ValueLimits& limits);

// The type column of a metadata value: "u32", "string", "array".
[[nodiscard]] std::string value_type_name(const checkpoint::GgufValue& value);

// A value for people: scalars as numbers, strings via summarize_string, arrays as
// "[type; count] a, b, c, ..." (nested arrays in parentheses).
[[nodiscard]] std::string summarize_value(const checkpoint::GgufValue& value,
                                          const ValueLimits& limits);
[[nodiscard]] std::string summarize_array(const checkpoint::GgufArray& array,
                                          const ValueLimits& limits);

}  // namespace eredu::inspect
