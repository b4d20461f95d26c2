// UTF-8 stream assembly and streaming detokenization.

#include "eredu/text/streaming_detokenizer.hpp"

#include <cstdint>
#include <new>

namespace eredu::text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The accepted range of the second byte of a sequence starting with `lead`, and the sequence
// length (Unicode Table 3-7, "Well-Formed UTF-8 Byte Sequences"). Length 0: `lead` cannot start
// a sequence (a continuation byte, C0, C1 or F5..FF).
struct LeadInfo {
  int length;
  std::uint8_t second_min;
  std::uint8_t second_max;
};

constexpr LeadInfo lead_info(std::uint8_t lead) noexcept {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};  // no UTF-16 surrogates
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  return {0, 0, 0};
}

}  // namespace

std::string Utf8StreamAssembler::append(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  out.reserve(pending_.size());
  const auto byte_at = [&](std::size_t i) { return static_cast<std::uint8_t>(pending_[i]); };
  std::size_t i = 0;
  while (i < pending_.size()) {
    const LeadInfo info = lead_info(byte_at(i));
    if (info.length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (info.length == 1) {
      out += pending_[i];
      ++i;
      continue;
    }
    // Check the continuation bytes that are present; stop at the first that does not fit.
    std::size_t valid = 1;
    bool broken = false;
    while (valid < static_cast<std::size_t>(info.length)) {
      if (i + valid >= pending_.size()) break;  // incomplete so far
      const std::uint8_t b = byte_at(i + valid);
      const std::uint8_t lo = valid == 1 ? info.second_min : std::uint8_t{0x80};
      const std::uint8_t hi = valid == 1 ? info.second_max : std::uint8_t{0xBF};
      if (b < lo || b > hi) {
        broken = true;
        break;
      }
      ++valid;
    }
    if (broken) {
      out += kReplacement;  // the maximal subpart [i, i + valid) as one replacement
      i += valid;
      continue;
    }
    if (valid < static_cast<std::size_t>(info.length)) break;  // hold back the incomplete tail
    out.append(pending_, i, valid);
    i += valid;
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8StreamAssembler::finish() {
  std::string out = append({});
  if (!pending_.empty()) out += kReplacement;  // a truncated but so far well-formed sequence
  pending_.clear();
  return out;
}

Result<std::string> StreamingDetokenizer::push(TokenId id) {
  try {
    EREDU_TRY(std::string piece, tokenizer_->token_to_piece(id, options_.render_special));
    if (piece.empty()) return std::string();
    if (options_.strip_leading_space && !produced_text_ && piece.front() == ' ') piece.erase(0, 1);
    produced_text_ = true;
    return assembler_.append(piece);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while detokenizing");
  }
}

std::string StreamingDetokenizer::finish() {
  std::string out = assembler_.finish();
  produced_text_ = false;
  return out;
}

void StreamingDetokenizer::reset() noexcept {
  assembler_.reset();
  produced_text_ = false;
}

}  // namespace eredu::text
