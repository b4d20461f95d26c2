// run_generation and CancellationToken: a stop requested from another thread ends a running
// loop with kCancelled; the streamed text is the sequence's text; callback exceptions become
// errors; the last committed token is never decoded.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "eredu/generation/generation_loop.hpp"
#include "eredu/generation/sampler.hpp"

namespace eredu::generation {
namespace {

GenerationSequence make(SequenceOptions options) {
  Result<GenerationSequence> sequence = GenerationSequence::create(std::move(options));
  EXPECT_TRUE(sequence.has_value()) << sequence.error().what();
  return std::move(sequence).value();
}

TEST(CancellationToken, StopRequestIsSeenAndResetRearms) {
  CancellationToken token;
  EXPECT_FALSE(token.stop_requested());
  token.request_stop();
  token.request_stop();
  EXPECT_TRUE(token.stop_requested());
  token.reset();
  EXPECT_FALSE(token.stop_requested());
}

TEST(GenerationLoop, CancellationFromAnotherThreadStopsAnUnboundedLoop) {
  // No max tokens, no context limit, no EOS: only the cancellation can end this loop. A guard
  // fails the step after a million tokens so that a broken cancellation fails instead of hanging.
  GenerationSequence sequence = make(SequenceOptions{});
  CancellationToken cancel;
  std::atomic<std::int64_t> produced{0};
  constexpr std::int64_t kStopAfter = 50;

  std::thread canceller([&] {
    while (produced.load() < kStopAfter)
      std::this_thread::yield();
    cancel.request_stop();
  });

  Result<Sampler> sampler = Sampler::create(SamplingConfig{}, 4);
  ASSERT_TRUE(sampler.has_value());
  const std::vector<float> logits = {0.1f, 0.2f, 0.3f, 0.4f};
  std::string streamed;
  const Result<GenerationOutcome> outcome = run_generation(
      sequence, cancel,
      [&](std::optional<TokenId>) -> Result<TokenId> {
        if (produced.fetch_add(1) > 1'000'000) return fail(ErrorCode::kInternal, "not cancelled");
        EREDU_TRY(const TokenId token, sampler->sample(logits));
        EREDU_TRY_VOID(sampler->accept(token));
        return token;
      },
      [](TokenId token) -> Result<std::string> { return std::string(1, char('a' + token)); },
      [&](std::string_view text) { streamed += text; });
  canceller.join();

  ASSERT_TRUE(outcome.has_value()) << outcome.error().what();
  EXPECT_EQ(outcome->finish_reason, FinishReason::kCancelled);
  EXPECT_GE(outcome->generated_tokens, kStopAfter);
  EXPECT_EQ(static_cast<std::int64_t>(streamed.size()), outcome->generated_tokens);
  EXPECT_TRUE(sequence.finished());
}

TEST(GenerationLoop, StreamsTheTextAndNeverDecodesTheFinalToken) {
  SequenceOptions options;
  options.stop_strings = {" END"};
  options.eos_ids = {0};
  GenerationSequence sequence = make(options);
  CancellationToken cancel;
  const std::vector<std::string> pieces = {"", "Once", " upon", " E", "ND", " never"};
  std::vector<std::optional<TokenId>> previous_seen;
  TokenId next = 1;
  std::vector<std::string> chunks;
  const Result<GenerationOutcome> outcome = run_generation(
      sequence, cancel,
      [&](std::optional<TokenId> previous) -> Result<TokenId> {
        previous_seen.push_back(previous);
        return next++;
      },
      [&](TokenId token) -> Result<std::string> { return pieces[static_cast<std::size_t>(token)]; },
      [&](std::string_view text) { chunks.emplace_back(text); });
  ASSERT_TRUE(outcome.has_value()) << outcome.error().what();
  EXPECT_EQ(outcome->finish_reason, FinishReason::kStopString);
  EXPECT_EQ(outcome->generated_tokens, 4);
  EXPECT_EQ(chunks, (std::vector<std::string>{"Once", " upon"}));
  // The first call has no token to decode; then each call decodes the previous token; token 4,
  // which ended the sequence, is never handed back.
  EXPECT_EQ(previous_seen, (std::vector<std::optional<TokenId>>{std::nullopt, 1, 2, 3}));
}

TEST(GenerationLoop, ZeroBudgetComputesNothing) {
  SequenceOptions options;
  options.max_tokens = 0;
  GenerationSequence sequence = make(options);
  CancellationToken cancel;
  int calls = 0;
  const Result<GenerationOutcome> outcome = run_generation(
      sequence, cancel, [&](std::optional<TokenId>) -> Result<TokenId> { return ++calls; },
      [](TokenId) -> Result<std::string> { return std::string(); }, [](std::string_view) {});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->finish_reason, FinishReason::kMaxTokens);
  EXPECT_EQ(calls, 0);
}

TEST(GenerationLoop, AnErrorFromTheModelStepIsReturned) {
  GenerationSequence sequence = make(SequenceOptions{});
  CancellationToken cancel;
  const Result<GenerationOutcome> outcome = run_generation(
      sequence, cancel,
      [](std::optional<TokenId>) -> Result<TokenId> {
        return fail(ErrorCode::kBackend, "decode failed");
      },
      [](TokenId) -> Result<std::string> { return std::string(); }, [](std::string_view) {});
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code(), ErrorCode::kBackend);
}

TEST(GenerationLoop, AThrowingStreamCallbackBecomesAnError) {
  GenerationSequence sequence = make(SequenceOptions{});
  CancellationToken cancel;
  const Result<GenerationOutcome> outcome = run_generation(
      sequence, cancel, [](std::optional<TokenId>) -> Result<TokenId> { return 1; },
      [](TokenId) -> Result<std::string> { return std::string("x"); },
      [](std::string_view) { throw std::runtime_error("client went away"); });
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code(), ErrorCode::kInternal);
  EXPECT_NE(outcome.error().message().find("client went away"), std::string::npos);
}

}  // namespace
}  // namespace eredu::generation
