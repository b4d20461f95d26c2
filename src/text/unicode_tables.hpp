#pragma once
// Unicode data for the BERT normalizer (WordPieceTokenizer), generated into unicode_tables.cpp by
// tests/reference/unicode-tables/generate_unicode_tables.py from Python's unicodedata.

#include <cstddef>
#include <span>

namespace eredu::text::unicode {

inline constexpr unsigned kOther = 1;        // general category Cc, Cf, Co or Cs
inline constexpr unsigned kNonspacing = 2;   // Mn
inline constexpr unsigned kPunctuation = 4;  // P*

// Which of the flags above `cp` has (at most one).
[[nodiscard]] unsigned flags(char32_t cp) noexcept;
// NFD(cp) without its Mn code points, for code points whose NFD differs from them (not Hangul
// syllables: decompose those algorithmically). Empty when there is no entry or all is stripped;
// has_strip_mapping tells the two apart.
[[nodiscard]] std::span<const char32_t> strip_accents(char32_t cp) noexcept;
[[nodiscard]] bool has_strip_mapping(char32_t cp) noexcept;
// The full lower-case mapping of `cp`, or empty when it lower-cases to itself.
[[nodiscard]] std::span<const char32_t> to_lower(char32_t cp) noexcept;

}  // namespace eredu::text::unicode
