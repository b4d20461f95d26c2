// GenerationSequence: the text side (stop strings held back, UTF-8 never broken) and the finish
// rules (precedence stop string > EOS > max tokens > context full; cancellation; one finish).

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "eredu/generation/generation_sequence.hpp"
#include "eredu/generation/rng.hpp"

namespace eredu::generation {
namespace {

const std::string kFFFD(kReplacementCharacter);
constexpr TokenId kEos = 2;

GenerationSequence make(SequenceOptions options) {
  Result<GenerationSequence> sequence = GenerationSequence::create(std::move(options));
  EXPECT_TRUE(sequence.has_value()) << sequence.error().what();
  return std::move(sequence).value();
}

SequenceOptions options_with(std::vector<std::string> stops, std::int64_t max_tokens = -1,
                             std::int64_t context_room = -1) {
  SequenceOptions options;
  options.stop_strings = std::move(stops);
  options.eos_ids = {kEos};
  options.max_tokens = max_tokens;
  options.context_room = context_room;
  options.n_vocab = 100;
  return options;
}

StepOutput commit(GenerationSequence& sequence, TokenId token, std::string_view piece) {
  Result<StepOutput> out = sequence.commit(token, piece);
  EXPECT_TRUE(out.has_value()) << out.error().what();
  return std::move(out).value();
}

TEST(GenerationSequence, StopStringAcrossThreeTokensIsHeldBackAndNeverEmitted) {
  GenerationSequence sequence = make(options_with({"<|end|>"}));
  StepOutput a = commit(sequence, 10, "Once <|");
  EXPECT_EQ(a.text, "Once ");
  EXPECT_FALSE(a.finished());
  StepOutput b = commit(sequence, 11, "en");
  EXPECT_EQ(b.text, "");
  EXPECT_FALSE(b.finished());
  StepOutput c = commit(sequence, 12, "d|>after");
  EXPECT_EQ(c.text, "");
  EXPECT_EQ(c.finish_reason, FinishReason::kStopString);
  EXPECT_EQ(sequence.matched_stop_string(), 0u);
  EXPECT_EQ(sequence.generated_tokens(), 3);
}

TEST(GenerationSequence, PartialStopMatchThatFailsIsReleased) {
  GenerationSequence sequence = make(options_with({"<|end|>"}));
  EXPECT_EQ(commit(sequence, 10, "a <|e").text, "a ");
  const StepOutput out = commit(sequence, 11, "x");
  EXPECT_EQ(out.text, "<|ex");
  EXPECT_FALSE(out.finished());
}

TEST(GenerationSequence, FourByteCharacterSplitOverTokensIsEmittedWhole) {
  GenerationSequence sequence = make(options_with({}));
  EXPECT_EQ(commit(sequence, 3, "hi \xF0").text, "hi ");
  EXPECT_EQ(commit(sequence, 4, "\x9F").text, "");
  EXPECT_EQ(commit(sequence, 5, "\x98").text, "");
  EXPECT_EQ(commit(sequence, 6, "\x80!").text, "\xF0\x9F\x98\x80!");
}

TEST(GenerationSequence, StopStringStartingWithASplitCharacterIsMatched) {
  GenerationSequence sequence = make(options_with({"\xF0\x9F\x98\x80!"}));
  EXPECT_EQ(commit(sequence, 3, "ok\xF0\x9F").text, "ok");
  EXPECT_EQ(commit(sequence, 4, "\x98\x80").text, "");
  const StepOutput out = commit(sequence, 5, "!");
  EXPECT_EQ(out.text, "");
  EXPECT_EQ(out.finish_reason, FinishReason::kStopString);
}

TEST(GenerationSequence, EosReleasesHeldTextAndEnds) {
  GenerationSequence sequence = make(options_with({"STOP"}));
  EXPECT_EQ(commit(sequence, 10, "go ST").text, "go ");
  const StepOutput out = commit(sequence, kEos, "");
  EXPECT_EQ(out.text, "ST");
  EXPECT_EQ(out.finish_reason, FinishReason::kEos);
}

TEST(GenerationSequence, IncompleteCharacterAtTheFinishBecomesAReplacement) {
  GenerationSequence sequence = make(options_with({}, 2));
  EXPECT_EQ(commit(sequence, 10, "a").text, "a");
  const StepOutput out = commit(sequence, 11, "\xE2\x82");
  EXPECT_EQ(out.text, kFFFD);
  EXPECT_EQ(out.finish_reason, FinishReason::kMaxTokens);
}

TEST(GenerationSequencePrecedence, StopStringBeatsEosAtTheSameToken) {
  GenerationSequence sequence = make(options_with({"</s>"}, 1, 1));
  const StepOutput out = commit(sequence, kEos, "x</s>");
  EXPECT_EQ(out.text, "x");
  EXPECT_EQ(out.finish_reason, FinishReason::kStopString);
}

TEST(GenerationSequencePrecedence, EosBeatsMaxTokensAndContextFull) {
  GenerationSequence sequence = make(options_with({}, 2, 2));
  EXPECT_FALSE(commit(sequence, 10, "a").finished());
  EXPECT_EQ(commit(sequence, kEos, "").finish_reason, FinishReason::kEos);
}

TEST(GenerationSequencePrecedence, MaxTokensBeatsContextFull) {
  GenerationSequence sequence = make(options_with({}, 1, 1));
  EXPECT_EQ(commit(sequence, 10, "a").finish_reason, FinishReason::kMaxTokens);
}

TEST(GenerationSequencePrecedence, StopStringBeatsMaxTokens) {
  GenerationSequence sequence = make(options_with({"."}, 1));
  const StepOutput out = commit(sequence, 10, "end.");
  EXPECT_EQ(out.text, "end");
  EXPECT_EQ(out.finish_reason, FinishReason::kStopString);
}

TEST(GenerationSequencePrecedence, ContextFullWhenItIsTheOnlyLimitReached) {
  GenerationSequence sequence = make(options_with({}, 10, 2));
  EXPECT_FALSE(commit(sequence, 10, "a").finished());
  EXPECT_EQ(commit(sequence, 11, "b").finish_reason, FinishReason::kContextFull);
}

TEST(GenerationSequencePrecedence, ReplacementFlushedAtFinishCanStillCompleteAStopString) {
  // The stop string ends with U+FFFD; the incomplete tail only becomes U+FFFD at the finish.
  GenerationSequence sequence = make(options_with({"x" + kFFFD}, 1));
  const StepOutput out = commit(sequence, 10, "ax\xE2");
  EXPECT_EQ(out.text, "a");
  EXPECT_EQ(out.finish_reason, FinishReason::kStopString);
}

TEST(GenerationSequencePoll, ZeroBudgetFinishesBeforeAnyToken) {
  GenerationSequence sequence = make(options_with({}, 0));
  const StepOutput out = sequence.poll().value();
  EXPECT_EQ(out.finish_reason, FinishReason::kMaxTokens);
  EXPECT_EQ(sequence.generated_tokens(), 0);
}

TEST(GenerationSequencePoll, CancellationBeforeTheFirstTokenOverridesAZeroBudget) {
  GenerationSequence sequence = make(options_with({}, 0));
  CancellationToken cancel;
  cancel.request_stop();
  EXPECT_EQ(sequence.poll(cancel).value().finish_reason, FinishReason::kCancelled);
}

TEST(GenerationSequencePoll, ZeroContextRoomFinishesBeforeAnyToken) {
  GenerationSequence sequence = make(options_with({}, 5, 0));
  EXPECT_EQ(sequence.poll().value().finish_reason, FinishReason::kContextFull);
}

TEST(GenerationSequencePoll, CancellationMidGenerationReleasesHeldTextOnce) {
  GenerationSequence sequence = make(options_with({"STOP"}));
  CancellationToken cancel;
  EXPECT_FALSE(sequence.poll(cancel).value().finished());
  EXPECT_EQ(commit(sequence, 10, "so ST").text, "so ");
  cancel.request_stop();
  const StepOutput out = sequence.poll(cancel).value();
  EXPECT_EQ(out.text, "ST");
  EXPECT_EQ(out.finish_reason, FinishReason::kCancelled);
  EXPECT_EQ(sequence.finish_reason(), FinishReason::kCancelled);
}

TEST(GenerationSequencePoll, CancelEndsTheSequence) {
  GenerationSequence sequence = make(options_with({}));
  EXPECT_EQ(commit(sequence, 10, "x").text, "x");
  EXPECT_EQ(sequence.cancel().value().finish_reason, FinishReason::kCancelled);
}

TEST(GenerationSequenceOnce, EveryCallAfterTheFinishIsAnError) {
  GenerationSequence sequence = make(options_with({}, 1));
  EXPECT_TRUE(commit(sequence, 10, "a").finished());
  const Result<StepOutput> again = sequence.commit(11, "b");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(again.error().message().find("max_tokens"), std::string::npos);
  EXPECT_FALSE(sequence.poll().has_value());
  EXPECT_FALSE(sequence.cancel().has_value());
  EXPECT_EQ(sequence.finish_reason(), FinishReason::kMaxTokens);
  EXPECT_EQ(sequence.generated_tokens(), 1);
}

TEST(GenerationSequenceOnce, CommitWithNoBudgetLeftIsAnErrorNotASecondFinish) {
  GenerationSequence sequence = make(options_with({}, 0));
  const Result<StepOutput> out = sequence.commit(10, "a");
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message().find("poll()"), std::string::npos);
  EXPECT_FALSE(sequence.finished());
}

TEST(GenerationSequenceRejects, TokenOutsideTheVocabulary) {
  GenerationSequence sequence = make(options_with({}));
  for (TokenId bad : {-1, 100}) {
    const Result<StepOutput> out = sequence.commit(bad, "");
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().subject(), "token");
  }
  EXPECT_EQ(sequence.generated_tokens(), 0);
}

TEST(GenerationSequenceRejects, MaxTokensBelowMinusOne) {
  const Result<GenerationSequence> result = GenerationSequence::create(options_with({}, -2));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "max_tokens");
}

TEST(GenerationSequenceRejects, ContextRoomBelowMinusOne) {
  const Result<GenerationSequence> result = GenerationSequence::create(options_with({}, 5, -3));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "context_room");
}

TEST(GenerationSequenceRejects, EosIdOutsideTheVocabulary) {
  SequenceOptions options = options_with({});
  options.eos_ids = {2, 100};
  const Result<GenerationSequence> result = GenerationSequence::create(options);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "eos_ids[1]");
  options.eos_ids = {-1};
  EXPECT_EQ(GenerationSequence::create(options).error().subject(), "eos_ids[0]");
}

TEST(GenerationSequenceRejects, InvalidStopString) {
  const Result<GenerationSequence> result = GenerationSequence::create(options_with({"a", ""}));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "stop_strings[1]");
}

TEST(FinishReason, HasStableNames) {
  EXPECT_EQ(to_string(FinishReason::kStopString), "stop_string");
  EXPECT_EQ(to_string(FinishReason::kEos), "eos");
  EXPECT_EQ(to_string(FinishReason::kMaxTokens), "max_tokens");
  EXPECT_EQ(to_string(FinishReason::kContextFull), "context_full");
  EXPECT_EQ(to_string(FinishReason::kCancelled), "cancelled");
}

}  // namespace
}  // namespace eredu::generation

namespace eredu::generation {
namespace {

// Runs `bytes` through a sequence split at the given cut points (max tokens = pieces, so the
// last piece finishes it) and returns the emitted chunks.
std::vector<std::string> emit_chunks(const std::vector<std::string>& stops,
                                     const std::string& bytes,
                                     const std::vector<std::size_t>& cuts) {
  SequenceOptions options;
  options.stop_strings = stops;
  options.max_tokens = static_cast<std::int64_t>(cuts.size()) + 1;
  GenerationSequence sequence = GenerationSequence::create(options).value();
  std::vector<std::string> chunks;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= cuts.size(); ++i) {
    const std::size_t end = i < cuts.size() ? cuts[i] : bytes.size();
    StepOutput out = sequence.commit(7, std::string_view(bytes).substr(start, end - start)).value();
    chunks.push_back(out.text);
    start = end;
    if (out.finished()) break;
  }
  EXPECT_TRUE(sequence.finished());
  return chunks;
}

TEST(GenerationSequenceProperty, EveryChunkIsWellFormedAndSplittingNeverChangesTheText) {
  // Random byte strings over an alphabet of ASCII, pieces of "é" and "😀" (so characters split
  // and break), with stop strings that contain multi-byte characters; each string is cut into
  // pieces at random. Each emitted chunk must be well-formed UTF-8, must not contain a stop
  // string, and the concatenation must equal the one-piece result.
  const std::vector<std::string> stops = {"ab",
                                          "\xC3\xA9"
                                          "b",
                                          "\xF0\x9F\x98\x80!"};
  const char alphabet[] = {'a', 'b', '!', '\xC3', '\xA9', '\xF0', '\x9F', '\x98', '\x80'};
  Xoshiro256StarStar rng(2024);
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes;
    const std::size_t length = 1 + rng.next() % 24;
    for (std::size_t i = 0; i < length; ++i)
      bytes += alphabet[rng.next() % sizeof(alphabet)];
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < length; ++i) {
      if (rng.next() % 3 == 0) cuts.push_back(i);
    }
    const std::vector<std::string> whole = emit_chunks(stops, bytes, {});
    ASSERT_EQ(whole.size(), 1u);
    std::string joined;
    for (const std::string& chunk : emit_chunks(stops, bytes, cuts)) {
      ASSERT_TRUE(is_valid_utf8(chunk)) << "trial " << trial;
      joined += chunk;
    }
    EXPECT_EQ(joined, whole[0]) << "trial " << trial;
    for (const std::string& stop : stops) {
      EXPECT_EQ(joined.find(stop), std::string::npos) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace eredu::generation
