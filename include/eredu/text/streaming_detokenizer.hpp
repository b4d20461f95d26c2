#pragma once
// Detokenization for streaming: token ids arrive one at a time and only complete, valid UTF-8
// leaves. A character split across byte tokens (<0xE2><0x96><0x81>) is held back until its last
// byte arrives; bytes that can never form a valid sequence become U+FFFD, so the concatenated
// output is always valid UTF-8.

#include <cstddef>
#include <string>
#include <string_view>

#include "eredu/core/result.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::text {

// Turns a byte stream into valid UTF-8 text, holding back an incomplete trailing sequence.
// Invalid bytes are replaced by U+FFFD following Unicode's "maximal subpart" practice (one
// replacement per maximal prefix of a well-formed sequence), as WHATWG and ICU decoders do.
class Utf8StreamAssembler {
 public:
  // Appends bytes; returns the text that is now complete (possibly empty).
  [[nodiscard]] std::string append(std::string_view bytes);
  // Ends the stream: an incomplete held-back sequence becomes U+FFFD. The assembler is then
  // empty and can take a new stream.
  [[nodiscard]] std::string finish();
  // Bytes held back (0 to 3).
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return pending_.size(); }
  void reset() noexcept { pending_.clear(); }

 private:
  std::string pending_;
};

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
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return assembler_.pending_bytes(); }
  // Forgets held-back bytes and starts a new stream.
  void reset() noexcept;

 private:
  const Tokenizer* tokenizer_;
  DecodeOptions options_;
  Utf8StreamAssembler assembler_;
  bool produced_text_ = false;  // for strip_leading_space: has a piece produced text yet?
};

}  // namespace eredu::text
