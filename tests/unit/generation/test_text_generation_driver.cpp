// TextGeneration<B> over a scripted backend: the token stream is the model's, finish reasons follow
// the terminal policy, bad requests are rejected before any submission, and a request cancelled
// from another thread leaves the runtime ready for the next one.

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "eredu/generation/text_generation.hpp"
#include "scripted_text_backend.hpp"

namespace eredu::generation_tests {
namespace {

using generation::CancellationToken;
using generation::FinishReason;
using generation::TextGeneration;
using generation::TextGenerationRequest;
using generation::TokenId;
using Runtime = runtime::ModelRuntime<ScriptedTextBackend>;

class TextGenerationDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    ScriptedTextBackend::context_length = 64;
    ScriptedTextBackend::eos_at_position = -1;
    ScriptedTextBackend::submissions = 0;
  }
  Runtime runtime_ =
      Runtime::prepare(ScriptedTextBackend{}, concept_tests::MockModelConfig{}).value();
};

Result<std::string> letter(TokenId id) {
  return std::string(1, static_cast<char>('a' + id % 26));
}

// The reference stream: a plain loop over the toy model.
std::vector<TokenId> expected_stream(const std::vector<TokenId>& prompt, int count) {
  std::vector<TokenId> out;
  auto last = static_cast<std::uint32_t>(prompt.back());
  auto position = static_cast<std::uint32_t>(prompt.size());
  for (int i = 0; i < count; ++i) {
    last = scripted_next(last, position);
    out.push_back(static_cast<TokenId>(last));
    ++position;
  }
  return out;
}

Result<generation::TextGenerationResult> generate(Runtime& runtime, TextGenerationRequest request,
                                                  const CancellationToken& cancel,
                                                  std::string* streamed = nullptr) {
  EREDU_TRY(auto generation, TextGeneration<ScriptedTextBackend>::create(runtime, request));
  return generation.run(cancel, letter, [&](std::string_view text) {
    if (streamed) *streamed += text;
  });
}

TEST_F(TextGenerationDriver, GeneratesTheModelsTokensAndStreamsTheirText) {
  const CancellationToken cancel;
  std::string streamed;
  const auto result =
      generate(runtime_, {.prompt = {1, 5, 9}, .max_tokens = 10}, cancel, &streamed);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(result->tokens, expected_stream({1, 5, 9}, 10));
  EXPECT_EQ(result->finish_reason, FinishReason::kMaxTokens);
  EXPECT_EQ(result->prompt_tokens, 3);
  EXPECT_EQ(streamed, result->text);
  EXPECT_EQ(streamed.size(), 10u);
  EXPECT_EQ(result->timings.decoded_tokens, 9);
  EXPECT_EQ(ScriptedTextBackend::submissions.load(), 10);  // 1 prefill + 9 decodes, none wasted
}

TEST_F(TextGenerationDriver, StopsAtEosUnlessAskedToIgnoreIt) {
  ScriptedTextBackend::eos_at_position = 6;  // the 4th token sampled after a 3-token prompt
  const CancellationToken cancel;
  const auto stopped = generate(runtime_, {.prompt = {1, 5, 9}, .max_tokens = 10}, cancel);
  ASSERT_TRUE(stopped.has_value()) << stopped.error().what();
  EXPECT_EQ(stopped->finish_reason, FinishReason::kEos);
  ASSERT_EQ(stopped->tokens.size(), 4u);
  EXPECT_EQ(stopped->tokens.back(), static_cast<TokenId>(kScriptedEos));

  const auto ignored =
      generate(runtime_, {.prompt = {1, 5, 9}, .ignore_eos = true, .max_tokens = 10}, cancel);
  ASSERT_TRUE(ignored.has_value());
  EXPECT_EQ(ignored->finish_reason, FinishReason::kMaxTokens);
  EXPECT_EQ(ignored->tokens.size(), 10u);
}

TEST_F(TextGenerationDriver, AStopStringWinsAndIsNotStreamed) {
  const CancellationToken cancel;
  const std::vector<TokenId> stream = expected_stream({1, 5, 9}, 10);
  std::string third(1, static_cast<char>('a' + stream[2] % 26));
  std::string streamed;
  const auto result =
      generate(runtime_, {.prompt = {1, 5, 9}, .stop_strings = {third}, .max_tokens = 10}, cancel,
               &streamed);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(result->finish_reason, FinishReason::kStopString);
  EXPECT_EQ(streamed.find(third), std::string::npos);
}

TEST_F(TextGenerationDriver, FillsTheContextAndStopsWithContextFull) {
  ScriptedTextBackend::context_length = 8;
  const CancellationToken cancel;
  const auto result = generate(runtime_, {.prompt = {1, 5, 9}}, cancel);
  ASSERT_TRUE(result.has_value()) << result.error().what();
  EXPECT_EQ(result->finish_reason, FinishReason::kContextFull);
  EXPECT_EQ(result->tokens, expected_stream({1, 5, 9}, 5));
}

TEST_F(TextGenerationDriver, RejectsAnEmptyPromptBeforeAnyCompute) {
  const auto generation = TextGeneration<ScriptedTextBackend>::create(runtime_, {.prompt = {}});
  ASSERT_FALSE(generation.has_value());
  EXPECT_EQ(generation.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(generation.error().subject(), "prompt");
  EXPECT_EQ(ScriptedTextBackend::submissions.load(), 0);
}

TEST_F(TextGenerationDriver, RejectsATokenIdOutsideTheVocabularyNamingItsIndex) {
  const auto generation =
      TextGeneration<ScriptedTextBackend>::create(runtime_, {.prompt = {1, 4, 32}});
  ASSERT_FALSE(generation.has_value());
  EXPECT_EQ(generation.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(generation.error().what().find("32"), std::string::npos) << generation.error().what();
  const auto negative = TextGeneration<ScriptedTextBackend>::create(runtime_, {.prompt = {-1, 4}});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(ScriptedTextBackend::submissions.load(), 0);
}

TEST_F(TextGenerationDriver, RejectsAPromptThatDoesNotFitTheContextBeforeAnyCompute) {
  ScriptedTextBackend::context_length = 4;
  const auto generation =
      TextGeneration<ScriptedTextBackend>::create(runtime_, {.prompt = {1, 3, 4, 5, 6}});
  ASSERT_FALSE(generation.has_value());
  EXPECT_EQ(generation.error().code(), ErrorCode::kInvalidArgument);
  const std::string what = generation.error().what();
  EXPECT_NE(what.find('5'), std::string::npos) << what;
  EXPECT_NE(what.find('4'), std::string::npos) << what;
  EXPECT_EQ(ScriptedTextBackend::submissions.load(), 0);
}

TEST_F(TextGenerationDriver, RejectsInvalidSamplingParametersByName) {
  generation::SamplingConfig sampling = generation::SamplingConfig::greedy();
  sampling.top_p = 1.5f;
  const auto generation = TextGeneration<ScriptedTextBackend>::create(
      runtime_, {.prompt = {1, 3}, .sampling = sampling});
  ASSERT_FALSE(generation.has_value());
  EXPECT_EQ(generation.error().subject(), "top_p");
  EXPECT_EQ(ScriptedTextBackend::submissions.load(), 0);
}

TEST_F(TextGenerationDriver, CancellationFromAnotherThreadStopsAndTheRuntimeStaysUsable) {
  CancellationToken cancel;
  int pieces = 0;
  auto generation =
      TextGeneration<ScriptedTextBackend>::create(runtime_, {.prompt = {1, 5, 9}}).value();
  const auto cancelled = generation.run(cancel, letter, [&](std::string_view) {
    if (++pieces == 3) std::thread([&] { cancel.request_stop(); }).join();
  });
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().what();
  EXPECT_EQ(cancelled->finish_reason, FinishReason::kCancelled);
  EXPECT_EQ(cancelled->tokens, expected_stream({1, 5, 9}, 3));

  const CancellationToken fresh;
  const auto again = generate(runtime_, {.prompt = {1, 5, 9}, .max_tokens = 6}, fresh);
  ASSERT_TRUE(again.has_value()) << again.error().what();
  EXPECT_EQ(again->tokens, expected_stream({1, 5, 9}, 6));
}

TEST_F(TextGenerationDriver, AThrowingCallbackBecomesAnError) {
  const CancellationToken cancel;
  auto generation =
      TextGeneration<ScriptedTextBackend>::create(runtime_, {.prompt = {1, 5}, .max_tokens = 4})
          .value();
  const auto result =
      generation.run(cancel, letter, [](std::string_view) { throw std::runtime_error("boom"); });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInternal);
}

}  // namespace
}  // namespace eredu::generation_tests
