// Streaming detokenization: token pieces through the UTF-8 stream guard.

#include "eredu/text/streaming_detokenizer.hpp"

#include <new>

namespace eredu::text {

Result<std::string> StreamingDetokenizer::push(TokenId id) {
  try {
    EREDU_TRY(std::string piece, tokenizer_->token_to_piece(id, options_.render_special));
    if (piece.empty()) return std::string();
    if (options_.strip_leading_space && !produced_text_ && piece.front() == ' ') piece.erase(0, 1);
    produced_text_ = true;
    std::string out;
    guard_.push(piece, out);
    return out;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while detokenizing");
  }
}

std::string StreamingDetokenizer::finish() {
  std::string out;  // at most one U+FFFD: fits the small-string buffer, no allocation
  guard_.finish(out);
  produced_text_ = false;
  return out;
}

void StreamingDetokenizer::reset() noexcept {
  guard_.clear();
  produced_text_ = false;
}

}  // namespace eredu::text
