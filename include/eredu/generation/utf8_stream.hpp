#pragma once
// A streaming UTF-8 guard: bytes go in piece by piece (a token may end in the middle of a
// character), only complete, well-formed characters come out.
//
// Well-formed means Unicode's table 3-7 (no overlong forms, no surrogates, nothing above
// U+10FFFF). An ill-formed sequence is replaced by U+FFFD, one per maximal subpart (the
// W3C/WHATWG and Unicode §3.9 recommended practice), and the byte that broke it is decoded again
// as the start of the next character. An incomplete character at the end of the input is held
// until more bytes arrive, or replaced by U+FFFD by finish().

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace eredu::generation {

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

class Utf8StreamGuard {
 public:
  // Appends to `out` every character completed by `bytes`; keeps an incomplete tail.
  void push(std::string_view bytes, std::string& out);
  // Ends the stream: an incomplete tail becomes one U+FFFD appended to `out`.
  void finish(std::string& out);
  // Drops an incomplete tail without emitting anything.
  void clear() noexcept { length_ = 0; }
  // Bytes of the incomplete character held back (0..3).
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return length_; }

 private:
  void start(std::uint8_t byte, std::string& out);

  std::uint8_t bytes_[4] = {};
  std::size_t length_ = 0;     // bytes of the current character seen so far
  std::size_t remaining_ = 0;  // continuation bytes still expected
  std::uint8_t low_ = 0x80;    // accepted range of the next continuation byte
  std::uint8_t high_ = 0xBF;
};

// True when `text` is well-formed UTF-8 (complete characters only).
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

}  // namespace eredu::generation
