// Faults through the library API on the CPU backend with stories260K.gguf (issue 3, item 9): each
// ends in a clear error, nothing is computed for a rejected request, and the session keeps
// generating llama.cpp's tokens afterwards.

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/load_model.hpp"

namespace eredu::cli_tests {
namespace {

using cpu::CpuBackend;
using generation::CancellationToken;
using generation::FinishReason;
using generation::TextGeneration;
using generation::TextGenerationRequest;
using generation::TokenId;
using Runtime = runtime::ModelRuntime<CpuBackend>;

class GenerationFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    EREDU_REQUIRE_SHARED_PATH(stories_model());
    EREDU_REQUIRE_SHARED_PATH(eredu::testing::reference_dir() / "stories260K-F32-greedy.json");
    auto loaded = runtime::load_model(CpuBackend(cpu::CpuBackendOptions{2}), stories_model(),
                                      cpu::CpuLoadOptions{});
    ASSERT_TRUE(loaded.has_value()) << loaded.error().what();
    runtime_.emplace(std::move(loaded).value());
    reference_ = read_greedy_cases().front();
  }

  // Greedy, EOS ignored, `n` tokens of the first reference prompt.
  Result<generation::TextGenerationResult> greedy(int n, const CancellationToken& cancel,
                                                  int cancel_after = -1) {
    TextGenerationRequest request;
    request.prompt.assign(reference_.prompt_tokens.begin(), reference_.prompt_tokens.end());
    request.ignore_eos = true;
    request.max_tokens = n;
    EREDU_TRY(auto generation, TextGeneration<CpuBackend>::create(*runtime_, request));
    int pieces = 0;
    return generation.run(
        cancel, [](TokenId) -> Result<std::string> { return std::string("."); },
        [&](std::string_view) {
          if (++pieces == cancel_after) {
            std::thread([&] { const_cast<CancellationToken&>(cancel).request_stop(); }).join();
          }
        });
  }

  void expect_session_still_generates_the_reference() {
    const CancellationToken cancel;
    const auto again = greedy(16, cancel);
    ASSERT_TRUE(again.has_value()) << again.error().what();
    const std::vector<TokenId> expected(reference_.generated_tokens.begin(),
                                        reference_.generated_tokens.begin() + 16);
    EXPECT_EQ(again->tokens, expected);
  }

  std::optional<Runtime> runtime_;
  GreedyCase reference_;
};

TEST_F(GenerationFaults, ATokenIdOutOfRangeIsRejectedAndTheSessionStaysUsable) {
  TextGenerationRequest request;
  request.prompt = {1, 403, 512};  // the vocabulary has 512 tokens
  const auto generation = TextGeneration<CpuBackend>::create(*runtime_, request);
  ASSERT_FALSE(generation.has_value());
  EXPECT_EQ(generation.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(generation.error().what().find("512"), std::string::npos) << generation.error().what();
  // The session itself rejects it too, leaving its cache unchanged.
  const auto direct = runtime_->prefill(std::vector<std::uint32_t>{1, 9999});
  ASSERT_FALSE(direct.has_value());
  EXPECT_EQ(runtime_->session().checkpoint(), 0u);
  expect_session_still_generates_the_reference();
}

TEST_F(GenerationFaults, AnEmptyPromptIsRejected) {
  const auto generation = TextGeneration<CpuBackend>::create(*runtime_, TextGenerationRequest{});
  ASSERT_FALSE(generation.has_value());
  EXPECT_EQ(generation.error().subject(), "prompt");
  EXPECT_NE(generation.error().what().find("empty"), std::string::npos)
      << generation.error().what();
}

TEST_F(GenerationFaults, InvalidSamplingParametersAreRejectedByName) {
  for (const auto& [field, apply] :
       std::vector<std::pair<std::string, void (*)(generation::SamplingConfig&)>>{
           {"temperature", [](generation::SamplingConfig& s) { s.temperature = -0.5f; }},
           {"top_k", [](generation::SamplingConfig& s) { s.top_k = -1; }},
           {"top_p", [](generation::SamplingConfig& s) { s.top_p = 0.0f; }},
           {"min_p", [](generation::SamplingConfig& s) { s.min_p = 1.5f; }},
           {"repeat_penalty", [](generation::SamplingConfig& s) { s.repeat_penalty = 0.0f; }}}) {
    SCOPED_TRACE(field);
    TextGenerationRequest request;
    request.prompt = {1, 403};
    apply(request.sampling);
    const auto generation = TextGeneration<CpuBackend>::create(*runtime_, request);
    ASSERT_FALSE(generation.has_value());
    EXPECT_EQ(generation.error().subject(), field);
  }
}

TEST_F(GenerationFaults, APromptLongerThanTheContextIsRejectedBeforeAnyCompute) {
  const std::uint32_t n_ctx = runtime_->session().max_positions();
  TextGenerationRequest request;
  request.prompt.assign(n_ctx + 1, 403);
  request.prompt.front() = 1;
  const auto generation = TextGeneration<CpuBackend>::create(*runtime_, request);
  ASSERT_FALSE(generation.has_value());
  const std::string what = generation.error().what();
  EXPECT_NE(what.find(std::to_string(n_ctx + 1)), std::string::npos) << what;
  EXPECT_NE(what.find(std::to_string(n_ctx)), std::string::npos) << what;
  EXPECT_EQ(runtime_->session().checkpoint(), 0u);  // nothing was computed
}

TEST_F(GenerationFaults, CancellationFromAnotherThreadStopsAndTheSessionStaysUsable) {
  CancellationToken cancel;
  const auto cancelled = greedy(128, cancel, 5);
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().what();
  EXPECT_EQ(cancelled->finish_reason, FinishReason::kCancelled);
  EXPECT_GE(cancelled->tokens.size(), 5u);
  EXPECT_LT(cancelled->tokens.size(), 128u);
  const std::vector<TokenId> prefix(
      reference_.generated_tokens.begin(),
      reference_.generated_tokens.begin() + static_cast<std::ptrdiff_t>(cancelled->tokens.size()));
  EXPECT_EQ(cancelled->tokens, prefix);
  expect_session_still_generates_the_reference();
}

TEST_F(GenerationFaults, ATruncatedModelFileIsAClearErrorNamingTheFile) {
  const std::string bytes = read_text(stories_model());
  const auto truncated = scratch_dir() / "truncated-lib.gguf";
  std::ofstream(truncated, std::ios::binary).write(bytes.data(), bytes.size() - 1000);
  const auto loaded =
      runtime::load_model(CpuBackend(cpu::CpuBackendOptions{1}), truncated, cpu::CpuLoadOptions{});
  ASSERT_FALSE(loaded.has_value());
  EXPECT_NE(loaded.error().what().find(truncated.string()), std::string::npos)
      << loaded.error().what();
}

// llama.feed_forward_length is patched to one more than the tensors' width: the tensor schema no
// longer matches the metadata, and the load fails before any weight is used.
TEST_F(GenerationFaults, TensorShapesThatContradictTheMetadataAreAClearError) {
  std::string bytes = read_text(stories_model());
  const std::string key = "llama.feed_forward_length";
  const auto at = bytes.find(key);
  ASSERT_NE(at, std::string::npos);
  const std::size_t value_at = at + key.size() + 4;  // after the u32 value type
  std::uint32_t type = 0;
  std::memcpy(&type, bytes.data() + at + key.size(), 4);
  ASSERT_EQ(type, 4u) << "expected a u32 value";
  std::uint32_t n_ff = 0;
  std::memcpy(&n_ff, bytes.data() + value_at, 4);
  const std::uint32_t patched = n_ff + 1;
  std::memcpy(bytes.data() + value_at, &patched, 4);
  const auto file = scratch_dir() / "contradicting.gguf";
  std::ofstream(file, std::ios::binary).write(bytes.data(), bytes.size());

  const auto loaded =
      runtime::load_model(CpuBackend(cpu::CpuBackendOptions{1}), file, cpu::CpuLoadOptions{});
  ASSERT_FALSE(loaded.has_value());
  const std::string what = loaded.error().what();
  EXPECT_NE(what.find("ffn"), std::string::npos) << what;
  EXPECT_NE(what.find(std::to_string(patched)), std::string::npos) << what;
}

}  // namespace
}  // namespace eredu::cli_tests
