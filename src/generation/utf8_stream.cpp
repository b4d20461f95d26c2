#include "eredu/generation/utf8_stream.hpp"

namespace eredu::generation {

namespace {

struct LeadByte {
  std::size_t remaining;  // continuation bytes that follow
  std::uint8_t low;       // accepted range of the first continuation byte
  std::uint8_t high;
};

// Lead byte -> its sequence shape (Unicode table 3-7); false for a byte that cannot start one
// (a stray continuation byte, C0/C1 which only make overlong forms, or F5..FF).
bool classify_lead(std::uint8_t byte, LeadByte& lead) noexcept {
  lead = LeadByte{0, 0x80, 0xBF};
  if (byte >= 0xC2 && byte <= 0xDF) {
    lead.remaining = 1;
  } else if (byte == 0xE0) {
    lead = LeadByte{2, 0xA0, 0xBF};
  } else if ((byte >= 0xE1 && byte <= 0xEC) || byte == 0xEE || byte == 0xEF) {
    lead.remaining = 2;
  } else if (byte == 0xED) {
    lead = LeadByte{2, 0x80, 0x9F};  // excludes the UTF-16 surrogates
  } else if (byte == 0xF0) {
    lead = LeadByte{3, 0x90, 0xBF};
  } else if (byte >= 0xF1 && byte <= 0xF3) {
    lead.remaining = 3;
  } else if (byte == 0xF4) {
    lead = LeadByte{3, 0x80, 0x8F};  // nothing above U+10FFFF
  } else {
    return false;
  }
  return true;
}

}  // namespace

// Begins a character with `byte` (no character is in progress).
void Utf8StreamGuard::start(std::uint8_t byte, std::string& out) {
  if (byte < 0x80) {
    out.push_back(static_cast<char>(byte));
    return;
  }
  LeadByte lead{};
  if (!classify_lead(byte, lead)) {
    out.append(kReplacementCharacter);
    return;
  }
  bytes_[0] = byte;
  length_ = 1;
  remaining_ = lead.remaining;
  low_ = lead.low;
  high_ = lead.high;
}

void Utf8StreamGuard::push(std::string_view bytes, std::string& out) {
  for (const char c : bytes) {
    const auto byte = static_cast<std::uint8_t>(c);
    if (length_ == 0) {
      start(byte, out);
      continue;
    }
    if (byte < low_ || byte > high_) {
      // The character is broken: replace what was read, then decode this byte afresh.
      out.append(kReplacementCharacter);
      length_ = 0;
      start(byte, out);
      continue;
    }
    bytes_[length_++] = byte;
    low_ = 0x80;
    high_ = 0xBF;
    if (--remaining_ == 0) {
      out.append(reinterpret_cast<const char*>(bytes_), length_);
      length_ = 0;
    }
  }
}

void Utf8StreamGuard::finish(std::string& out) {
  if (length_ > 0) out.append(kReplacementCharacter);
  length_ = 0;
}

bool is_valid_utf8(std::string_view text) noexcept {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<std::uint8_t>(text[i]);
    ++i;
    if (byte < 0x80) continue;
    LeadByte lead{};
    if (!classify_lead(byte, lead)) return false;
    for (std::size_t k = 0; k < lead.remaining; ++k, ++i) {
      if (i >= text.size()) return false;
      const auto next = static_cast<std::uint8_t>(text[i]);
      const std::uint8_t low = k == 0 ? lead.low : std::uint8_t{0x80};
      const std::uint8_t high = k == 0 ? lead.high : std::uint8_t{0xBF};
      if (next < low || next > high) return false;
    }
  }
  return true;
}

}  // namespace eredu::generation
