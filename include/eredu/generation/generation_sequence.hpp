#pragma once
// GenerationSequence: the terminal policy of one generation request, independent of any model or
// backend. Per token the caller commits (token id, the bytes its detokenizer produced for it) and
// gets back the text to show now and whether generation is over.
//
// Text path: piece bytes -> Utf8StreamGuard (never a broken character) -> StopStringMatcher (text
// held back until no stop string can claim it) -> StepOutput::text.
//
// Finish rules (exactly one finish per sequence):
// - commit() of a token, after its text is added, checks in this order of precedence:
//     stop string  >  EOS id  >  max tokens  >  context full.
//   The EOS token's piece is treated like any other piece (pass "" to keep it out of the text).
// - poll(), called before computing each token, finishes with kCancelled when cancellation was
//   requested, else kMaxTokens when the budget is already spent (max_tokens 0), else kContextFull
//   when there is no room (context_room 0). Cancellation thus wins over a zero budget, and a
//   request made while a token is computed stops the sequence after that token.
// - On every finish other than a stop string, held-back text is released and an incomplete UTF-8
//   tail becomes U+FFFD. After a stop string, everything from it on is discarded.
// - commit(), poll() or cancel() after the finish is an error (kInvalidArgument).
//
// Typical loop (see generation_loop.hpp for a ready-made one):
//   while (true) {
//     EREDU_TRY(auto pre, seq.poll(cancel));  show(pre.text);  if (pre.finished()) break;
//     token = sample(); EREDU_TRY(auto out, seq.commit(token, piece(token)));
//     show(out.text); if (out.finished()) break;  decode(token);
//   }

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/stop_strings.hpp"
#include "eredu/generation/token.hpp"
#include "eredu/generation/utf8_stream.hpp"

namespace eredu::generation {

enum class FinishReason : std::uint8_t {
  kStopString,   // a caller stop string completed
  kEos,          // an end-of-sequence token was committed
  kMaxTokens,    // the token budget is spent
  kContextFull,  // the context has no room for another token
  kCancelled,    // the caller asked to stop
};

// "stop_string", "eos", "max_tokens", "context_full", "cancelled" (the --json spelling).
[[nodiscard]] constexpr std::string_view to_string(FinishReason reason) noexcept {
  switch (reason) {
    case FinishReason::kStopString:
      return "stop_string";
    case FinishReason::kEos:
      return "eos";
    case FinishReason::kMaxTokens:
      return "max_tokens";
    case FinishReason::kContextFull:
      return "context_full";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

struct SequenceOptions {
  static constexpr std::int64_t kUnlimited = -1;

  std::vector<std::string> stop_strings;  // see StopStringMatcher for the limits
  std::vector<TokenId> eos_ids;           // from metadata; empty = ignore EOS
  std::int64_t max_tokens = kUnlimited;   // tokens to generate; 0 = none, -1 = no limit
  // Tokens that can be generated before the context is full (generation_room()); -1 = unbounded.
  std::int64_t context_room = kUnlimited;
  // When > 0, EOS ids and committed tokens must lie in [0, n_vocab).
  std::int32_t n_vocab = 0;
};

struct StepOutput {
  std::string text;                           // show this now (well-formed UTF-8, maybe empty)
  std::optional<FinishReason> finish_reason;  // set on the one output that ends the sequence
  [[nodiscard]] bool finished() const noexcept { return finish_reason.has_value(); }
};

class GenerationSequence {
 public:
  // kInvalidArgument naming the field ("max_tokens", "context_room", "eos_ids[i]",
  // "stop_strings[i]", "n_vocab") when an option is out of range.
  [[nodiscard]] static Result<GenerationSequence> create(SequenceOptions options);

  // Checks, before a token is computed, whether the sequence must end (see the file comment).
  [[nodiscard]] Result<StepOutput> poll();
  [[nodiscard]] Result<StepOutput> poll(const CancellationToken& cancel);
  // Commits one generated token and the bytes it decodes to. Out of memory is returned as
  // kLimitExceeded; the sequence should then be abandoned.
  [[nodiscard]] Result<StepOutput> commit(TokenId token, std::string_view piece);
  // Ends the sequence now with kCancelled, releasing held-back text.
  [[nodiscard]] Result<StepOutput> cancel();

  [[nodiscard]] bool finished() const noexcept { return finish_reason_.has_value(); }
  [[nodiscard]] std::optional<FinishReason> finish_reason() const noexcept {
    return finish_reason_;
  }
  [[nodiscard]] std::int64_t generated_tokens() const noexcept { return generated_; }
  // Index into the stop strings of the one that ended the sequence.
  [[nodiscard]] std::optional<std::size_t> matched_stop_string() const noexcept {
    return matched_stop_;
  }
  [[nodiscard]] const SequenceOptions& options() const noexcept { return options_; }

 private:
  GenerationSequence(SequenceOptions options, StopStringMatcher matcher)
      : options_(std::move(options)), matcher_(std::move(matcher)) {}
  [[nodiscard]] Result<StepOutput> commit_unguarded(TokenId token, std::string_view piece);
  [[nodiscard]] Result<void> check_not_finished(const char* operation) const;
  [[nodiscard]] bool is_eos(TokenId token) const noexcept;
  [[nodiscard]] bool budget_spent() const noexcept;
  [[nodiscard]] bool context_exhausted() const noexcept;
  // Ends the sequence for `reason` (not a stop string match): flushes the UTF-8 tail and the held
  // text into `out`; a stop string completed by the flushed U+FFFD still takes precedence.
  void finish(FinishReason reason, StepOutput& out);

  SequenceOptions options_;
  StopStringMatcher matcher_;
  Utf8StreamGuard utf8_;
  std::string scratch_;  // decoded text of the current piece, reused
  std::int64_t generated_ = 0;
  std::optional<FinishReason> finish_reason_;
  std::optional<std::size_t> matched_stop_;
};

}  // namespace eredu::generation
