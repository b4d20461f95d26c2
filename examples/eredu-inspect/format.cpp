// Text helpers for eredu-inspect (see format.hpp).

#include "format.hpp"

#include <fmt/format.h>

#include <array>
#include <variant>

namespace eredu::inspect {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when there is none (overlong
// forms, surrogates and code points past U+10FFFF are not valid).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  std::uint32_t min = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min = 0x80, code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, min = 0x800, code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, min = 0x10000, code = lead & 0x07u;
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

template <typename T>
std::string scalar_text(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t>) {
    return std::to_string(static_cast<int>(value));
  } else {
    return fmt::format("{}", value);
  }
}

std::string array_element(const checkpoint::GgufArray& array, std::uint64_t i,
                          const ValueLimits& limits) {
  using checkpoint::GgufValueType;
  switch (array.element_type()) {
    case GgufValueType::kU8:
      return scalar_text(*array.at<std::uint8_t>(i));
    case GgufValueType::kI8:
      return scalar_text(*array.at<std::int8_t>(i));
    case GgufValueType::kU16:
      return scalar_text(*array.at<std::uint16_t>(i));
    case GgufValueType::kI16:
      return scalar_text(*array.at<std::int16_t>(i));
    case GgufValueType::kU32:
      return scalar_text(*array.at<std::uint32_t>(i));
    case GgufValueType::kI32:
      return scalar_text(*array.at<std::int32_t>(i));
    case GgufValueType::kF32:
      return scalar_text(*array.at<float>(i));
    case GgufValueType::kBool:
      return scalar_text(*array.at<bool>(i));
    case GgufValueType::kU64:
      return scalar_text(*array.at<std::uint64_t>(i));
    case GgufValueType::kI64:
      return scalar_text(*array.at<std::int64_t>(i));
    case GgufValueType::kF64:
      return scalar_text(*array.at<double>(i));
    case GgufValueType::kString:
      return i < array.strings().size()
                 ? summarize_string(array.strings()[static_cast<std::size_t>(i)], limits)
                 : "?";
    case GgufValueType::kArray:
      // fmt, not `"(" + nested + ")"`: GCC 12 at -O3 reports a false -Wrestrict overlap there.
      return i < array.arrays().size()
                 ? fmt::format("({})",
                               summarize_array(array.arrays()[static_cast<std::size_t>(i)], limits))
                 : "?";
  }
  return "?";
}

}  // namespace

std::string human_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> kUnits{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string shape_string(std::span<const std::uint64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", fraction * 100.0);
}

std::string_view utf8_prefix(std::string_view text, std::uint64_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = 0;
  while (end < max_bytes) {
    const std::size_t length = std::max<std::size_t>(utf8_sequence_length(text, end), 1);
    if (end + length > max_bytes) break;
    end += length;
  }
  return text.substr(0, end);
}

namespace {

std::string escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    if (length > 1) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    switch (c) {
      case '\\':
        out += quotes ? "\\\\" : "\\";
        break;
      case '"':
        out += quotes ? "\\\"" : "\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x7F) {
          out += fmt::format("\\x{:02X}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out;
}

}  // namespace

std::string escape_for_terminal(std::string_view text) {
  return escape(text, true);
}
std::string escape_control(std::string_view text) {
  return escape(text, false);
}

std::string summarize_string(std::string_view text, const ValueLimits& limits) {
  const std::string_view shown = utf8_prefix(text, limits.max_string);
  if (shown.size() == text.size()) {
    // Appended, not `"\"" + escaped + "\""`: GCC 12 at -O3 reports a false -Wrestrict overlap in
    // the inlined operator+ of a literal and a temporary string.
    std::string quoted;
    const std::string escaped = escape_for_terminal(text);
    quoted.reserve(escaped.size() + 2);
    quoted += '"';
    quoted += escaped;
    quoted += '"';
    return quoted;
  }
  return fmt::format("\"{}...\" ({} bytes)", escape_for_terminal(shown), text.size());
}

std::string value_type_name(const checkpoint::GgufValue& value) {
  return std::string(to_string(value.type()));
}

std::string summarize_array(const checkpoint::GgufArray& array, const ValueLimits& limits) {
  std::string out = fmt::format("[{}; {}]", to_string(array.element_type()), array.size());
  const std::uint64_t shown = std::min(array.size(), limits.max_array);
  for (std::uint64_t i = 0; i < shown; ++i) {
    out += i == 0 ? " " : ", ";
    out += array_element(array, i, limits);
  }
  if (shown < array.size()) out += shown == 0 ? " ..." : ", ...";
  return out;
}

std::string summarize_value(const checkpoint::GgufValue& value, const ValueLimits& limits) {
  return std::visit(
      [&](const auto& held) -> std::string {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return summarize_string(held, limits);
        } else if constexpr (std::is_same_v<T, checkpoint::GgufArray>) {
          return summarize_array(held, limits);
        } else {
          return scalar_text(held);
        }
      },
      value.storage());
}

}  // namespace eredu::inspect
