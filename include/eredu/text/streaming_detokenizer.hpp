#pragma once
// Detokenization for streaming: token ids arrive one at a time and only complete, valid UTF-8
// leaves. A character split across byte tokens (<0xE2><0x82><0xAC>) is held back until its last
// byte arrives; bytes that can never form a valid sequence become U+FFFD (one per maximal
// subpart), so the concatenated output is always valid UTF-8. The byte-level work is
// generation::Utf8StreamGuard's; this class adds the tokenizer and the decode options.

#include <cstddef>
#include <string>

#include "eredu/core/result.hpp"
#include "eredu/generation/utf8_stream.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::text {

// Detokenizes one token at a time. The tokenizer must outlive this object. Not thread-safe: one
// per stream.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, DecodeOptions options = {})
      : tokenizer_(&tokenizer), options_(options) {}

  // Appends one token; returns the text that became complete (possibly empty). An id out of
  // range is an error and leaves the stream unchanged.
  [[nodiscard]] Result<std::string> push(TokenId id);
  // Ends the stream and returns what was held back (an incomplete sequence becomes U+FFFD).
  // Afterwards the detokenizer starts a new stream.
  [[nodiscard]] std::string finish();
  // Bytes of an incomplete character held back (0..3).
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return guard_.pending_bytes(); }
  // Forgets held-back bytes and starts a new stream.
  void reset() noexcept;

 private:
  const Tokenizer* tokenizer_;
  DecodeOptions options_;
  generation::Utf8StreamGuard guard_;
  bool produced_text_ = false;  // for strip_leading_space: has a piece produced text yet?
};

}  // namespace eredu::text
