#include "eredu/generation/generation_sequence.hpp"

#include <algorithm>
#include <new>
#include <utility>

#include <fmt/format.h>

namespace eredu::generation {
namespace {

Unexpected<Error> invalid(std::string subject, std::string message) {
  return fail(
      Error(ErrorCode::kInvalidArgument, std::move(message)).with_subject(std::move(subject)));
}

}  // namespace

Result<GenerationSequence> GenerationSequence::create(SequenceOptions options) {
  if (options.max_tokens < SequenceOptions::kUnlimited) {
    return invalid("max_tokens",
                   fmt::format("is {}; expected >= 0, or -1 for no limit", options.max_tokens));
  }
  if (options.context_room < SequenceOptions::kUnlimited) {
    return invalid("context_room",
                   fmt::format("is {}; expected >= 0, or -1 for unbounded", options.context_room));
  }
  if (options.n_vocab < 0) {
    return invalid("n_vocab",
                   fmt::format("is {}; expected > 0, or 0 when unknown", options.n_vocab));
  }
  for (std::size_t i = 0; i < options.eos_ids.size(); ++i) {
    const TokenId id = options.eos_ids[i];
    if (id < 0 || (options.n_vocab > 0 && id >= options.n_vocab)) {
      return invalid(
          fmt::format("eos_ids[{}]", i),
          fmt::format("EOS token id {} is outside the vocabulary [0, {})", id, options.n_vocab));
    }
  }
  EREDU_TRY(StopStringMatcher matcher, StopStringMatcher::create(options.stop_strings));
  return GenerationSequence(std::move(options), std::move(matcher));
}

Result<void> GenerationSequence::check_not_finished(const char* operation) const {
  if (!finish_reason_) return ok();
  return invalid("sequence", fmt::format("{} after the sequence finished ({})", operation,
                                         to_string(*finish_reason_)));
}

bool GenerationSequence::is_eos(TokenId token) const noexcept {
  return std::find(options_.eos_ids.begin(), options_.eos_ids.end(), token) !=
         options_.eos_ids.end();
}

bool GenerationSequence::budget_spent() const noexcept {
  return options_.max_tokens != SequenceOptions::kUnlimited && generated_ >= options_.max_tokens;
}

bool GenerationSequence::context_exhausted() const noexcept {
  return options_.context_room != SequenceOptions::kUnlimited &&
         generated_ >= options_.context_room;
}

void GenerationSequence::finish(FinishReason reason, StepOutput& out) {
  scratch_.clear();
  utf8_.finish(scratch_);
  StopStringMatcher::Released tail = matcher_.push(scratch_);
  out.text += tail.text;
  if (tail.matched) {
    matched_stop_ = tail.matched;
    reason = FinishReason::kStopString;
  } else {
    out.text += matcher_.flush();
  }
  finish_reason_ = reason;
  out.finish_reason = reason;
}

Result<StepOutput> GenerationSequence::poll() {
  EREDU_TRY_VOID(check_not_finished("poll()"));
  StepOutput out;
  if (budget_spent()) {
    finish(FinishReason::kMaxTokens, out);
  } else if (context_exhausted()) {
    finish(FinishReason::kContextFull, out);
  }
  return out;
}

Result<StepOutput> GenerationSequence::poll(const CancellationToken& cancel) {
  EREDU_TRY_VOID(check_not_finished("poll()"));
  if (cancel.stop_requested()) {
    StepOutput out;
    finish(FinishReason::kCancelled, out);
    return out;
  }
  return poll();
}

Result<StepOutput> GenerationSequence::cancel() {
  EREDU_TRY_VOID(check_not_finished("cancel()"));
  StepOutput out;
  finish(FinishReason::kCancelled, out);
  return out;
}

Result<StepOutput> GenerationSequence::commit(TokenId token, std::string_view piece) {
  try {
    return commit_unguarded(token, piece);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("out of memory committing token {} ({} bytes)", token, piece.size()));
  }
}

Result<StepOutput> GenerationSequence::commit_unguarded(TokenId token, std::string_view piece) {
  EREDU_TRY_VOID(check_not_finished("commit()"));
  if (token < 0 || (options_.n_vocab > 0 && token >= options_.n_vocab)) {
    return invalid("token", fmt::format("token id {} is outside the vocabulary [0, {})", token,
                                        options_.n_vocab));
  }
  if (budget_spent() || context_exhausted()) {
    return invalid("sequence",
                   fmt::format("no room for token {} after {} generated tokens (max "
                               "tokens {}, context room {}); call poll() first",
                               token, generated_, options_.max_tokens, options_.context_room));
  }
  ++generated_;

  StepOutput out;
  scratch_.clear();
  utf8_.push(piece, scratch_);
  StopStringMatcher::Released released = matcher_.push(scratch_);
  out.text = std::move(released.text);
  if (released.matched) {
    utf8_.clear();  // bytes after the stop string are discarded with it
    matched_stop_ = released.matched;
    finish_reason_ = FinishReason::kStopString;
    out.finish_reason = FinishReason::kStopString;
  } else if (is_eos(token)) {
    finish(FinishReason::kEos, out);
  } else if (budget_spent()) {
    finish(FinishReason::kMaxTokens, out);
  } else if (context_exhausted()) {
    finish(FinishReason::kContextFull, out);
  }
  return out;
}

}  // namespace eredu::generation
