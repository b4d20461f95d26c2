#pragma once
// Python's text conventions the engine must reproduce byte for byte: float repr, str/repr of
// containers, json.dumps (as HF's tojson calls it), and code-point views of UTF-8 strings.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/jinja/value.hpp"

namespace eredu::jinja::detail {

// UTF-8 to code points (invalid bytes map to themselves as U+DCxx-free Latin-1, never fail).
std::vector<std::uint32_t> decode_utf8(std::string_view text);
std::string encode_utf8(const std::vector<std::uint32_t>& cps, std::size_t begin, std::size_t end);
void append_code_point(std::string& out, std::uint32_t cp);
std::size_t code_point_count(std::string_view text);
bool is_ascii(std::string_view text);

// float.__repr__: shortest round-trip digits, exponent form below 1e-4 or from 1e16.
std::string float_repr(double value);

struct JsonOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
// json.dumps(value, ...); an error for what Python cannot serialise (undefined, functions,
// generators).
Result<std::string> json_dumps(const Value& value, const JsonOptions& options);

}  // namespace eredu::jinja::detail
