// Greedy speculative decoding on the CPU backend is plain greedy decoding: with the n-gram
// drafter, with the target itself as its draft model and with the shared quantized variants as
// draft models (and as targets), for several prompts and draft lengths, the committed tokens and
// the streamed text equal plain TextGeneration's, 100 tokens each. Also: a verify pass's rows
// are bit-identical to one-token decodes (what makes the equality exact, for drafts of up to 15
// tokens on float-decoded weights, see SpeculativeVerify below), and the finish rules
// (EOS, max tokens, stop strings, repetition penalty) apply as in plain generation.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "eredu/generation/speculative/external_drafter.hpp"
#include "eredu/generation/speculative/ngram_drafter.hpp"
#include "eredu/text/vocabulary_fingerprint.hpp"
#include "speculative_support.hpp"

namespace eredu::testing::speculative {
namespace {

using generation::speculative::ExternalDrafter;
using generation::speculative::NgramDrafter;

const std::vector<std::string> kPrompts{
    "Once upon a time",
    "Lily and Tom went to the park. Lily and Tom",
    "The cat sat on the mat. The dog sat on the",
};
const std::vector<std::uint32_t> kDraftLengths{1, 3, 8, 15};
constexpr std::int64_t kTokens = 100;

TEST(SpeculativeGreedy, NgramDraftingGivesThePlainGreedyTokens) {
  const auto path = model_path("stories260K.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  auto tokenizer = tokenizer_of(path);
  Runtime target = load(path);
  std::int64_t accepted = 0;
  for (const std::string& prompt : kPrompts) {
    const auto request = request_for(*tokenizer, prompt, kTokens);
    const TextGenerationResult reference = plain(target, *tokenizer, request);
    ASSERT_EQ(reference.tokens.size(), static_cast<std::size_t>(kTokens));
    for (const std::uint32_t k : kDraftLengths) {
      for (const std::uint32_t order : {1u, 3u}) {
        auto drafter = NgramDrafter::create(order);
        ASSERT_TRUE(drafter.has_value());
        const auto run = speculative(target, *drafter, *tokenizer, request, k);
        EXPECT_EQ(run.generation.tokens, reference.tokens) << prompt << ", k " << k;
        EXPECT_EQ(run.generation.text, reference.text) << prompt << ", k " << k;
        EXPECT_EQ(run.generation.finish_reason, reference.finish_reason);
        EXPECT_LE(run.statistics.accepted, run.statistics.drafted);
        accepted += run.statistics.accepted;
        // Every round commits at least one token.
        EXPECT_LE(run.statistics.rounds, kTokens - 1);
      }
    }
  }
  EXPECT_GT(accepted, 0);  // the stories repeat themselves: some drafts are right
}

// Draft model `draft_name` drafting for target `target_name`.
void expect_external_drafting_is_plain(const std::string& target_name,
                                       const std::string& draft_name, bool expect_all_accepted) {
  const auto target_path = model_path(target_name);
  const auto draft_path = model_path(draft_name);
  EREDU_REQUIRE_SHARED_PATH(target_path);
  EREDU_REQUIRE_SHARED_PATH(draft_path);
  auto tokenizer = tokenizer_of(target_path);
  auto draft_tokenizer = tokenizer_of(draft_path);
  auto proof = text::prove_tokenizer_compatibility(*tokenizer, *draft_tokenizer);
  ASSERT_TRUE(proof.has_value()) << proof.error().what();
  Runtime target = load(target_path);
  auto drafter = ExternalDrafter<Cpu>::create(load(draft_path), *proof);
  ASSERT_TRUE(drafter.has_value()) << drafter.error().what();
  for (const std::string& prompt : kPrompts) {
    const auto request = request_for(*tokenizer, prompt, kTokens);
    const TextGenerationResult reference = plain(target, *tokenizer, request);
    for (const std::uint32_t k : kDraftLengths) {
      const auto run = speculative(target, *drafter, *tokenizer, request, k);
      EXPECT_EQ(run.generation.tokens, reference.tokens) << prompt << ", k " << k;
      EXPECT_EQ(run.generation.text, reference.text) << prompt << ", k " << k;
      EXPECT_GT(run.statistics.drafted, 0);
      if (expect_all_accepted) {
        EXPECT_EQ(run.statistics.accepted, run.statistics.drafted) << prompt << ", k " << k;
      }
      // The draft cache never holds more than the committed history.
      EXPECT_LE(drafter->cached_positions(), target.session().checkpoint());
      // The target's cache holds the prompt and every committed token but the last.
      EXPECT_EQ(target.session().checkpoint(),
                request.prompt.size() + run.generation.tokens.size() - 1);
    }
  }
}

TEST(SpeculativeGreedy, TheTargetDraftingForItselfIsAcceptedEverywhere) {
  expect_external_drafting_is_plain("stories260K.gguf", "stories260K.gguf", true);
}

TEST(SpeculativeGreedy, AQ8DraftModelGivesThePlainGreedyTokens) {
  expect_external_drafting_is_plain("stories260K.gguf", "stories260K-Q8_0-ffndownF16.gguf", false);
}

TEST(SpeculativeGreedy, AQ4DraftModelGivesThePlainGreedyTokens) {
  expect_external_drafting_is_plain("stories260K.gguf", "stories260K-Q4_0-ffndownF16.gguf", false);
}

TEST(SpeculativeGreedy, AQuantizedTargetDraftedByTheF32ModelGivesItsPlainGreedyTokens) {
  expect_external_drafting_is_plain("stories260K-Q8_0-ffndownF16.gguf", "stories260K.gguf", false);
  expect_external_drafting_is_plain("stories260K-Q4_0-ffndownF16.gguf", "stories260K.gguf", false);
  // Mixed Q5_0 / Q8_0 / F16 tensors; it parted from plain greedy at a near tie ~60 tokens into
  // the third prompt before float-decoded batches took the one-token kernels.
  expect_external_drafting_is_plain("stories260K-Q4_K_M.gguf", "stories260K.gguf", false);
}

TEST(SpeculativeGreedy, AQuantizedTargetDraftingForItselfIsAcceptedEverywhere) {
  expect_external_drafting_is_plain("stories260K-Q4_0-ffndownF16.gguf",
                                    "stories260K-Q4_0-ffndownF16.gguf", true);
}

// The adaptive draft length (k chosen per round, 0 included) changes only how many drafts each
// round verifies, never a committed token.
TEST(SpeculativeGreedy, AdaptiveDraftLengthsGiveThePlainGreedyTokens) {
  const auto path = model_path("stories260K.gguf");
  const auto draft_path = model_path("stories260K-Q4_0-ffndownF16.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  EREDU_REQUIRE_SHARED_PATH(draft_path);
  auto tokenizer = tokenizer_of(path);
  auto proof = text::prove_tokenizer_compatibility(*tokenizer, *tokenizer_of(draft_path));
  ASSERT_TRUE(proof.has_value()) << proof.error().what();
  Runtime target = load(path);
  auto external = ExternalDrafter<Cpu>::create(load(draft_path), *proof);
  ASSERT_TRUE(external.has_value()) << external.error().what();
  auto ngram = NgramDrafter::create(3);
  ASSERT_TRUE(ngram.has_value());
  const generation::CancellationToken cancel;
  for (const std::string& prompt : kPrompts) {
    const auto request = request_for(*tokenizer, prompt, kTokens);
    const TextGenerationResult reference = plain(target, *tokenizer, request);
    for (const std::uint32_t k : {1u, 8u}) {
      const auto by_model = speculative(target, *external, *tokenizer, request, k, cancel, true);
      EXPECT_EQ(by_model.generation.tokens, reference.tokens) << prompt << ", k " << k;
      EXPECT_EQ(by_model.generation.text, reference.text) << prompt << ", k " << k;
      EXPECT_LE(by_model.statistics.drafted, by_model.statistics.rounds * k);
      const auto by_ngram = speculative(target, *ngram, *tokenizer, request, k, cancel, true);
      EXPECT_EQ(by_ngram.generation.tokens, reference.tokens) << prompt << ", k " << k;
      EXPECT_LE(by_ngram.statistics.plain_rounds, by_ngram.statistics.rounds);
    }
  }
}

// The property greedy equality rests on: row i of verify([t0..tn]) is, bit for bit, the logits a
// one-token decode of t_i gives after t0..t_{i-1}.
void expect_verify_rows_equal_decodes(const std::string& name) {
  const auto path = model_path(name);
  EREDU_REQUIRE_SHARED_PATH(path);
  Runtime runtime = load(path);
  const std::vector<std::uint32_t> prompt{1, 403, 407, 261, 378};
  const std::vector<std::uint32_t> continuation{429, 281, 270, 395, 328, 271, 416, 13, 300};
  auto& session = runtime.session_mut();
  const auto n_vocab = session.n_vocab();

  ASSERT_TRUE(runtime.prefill(std::vector<std::uint32_t>(prompt)).has_value());
  std::vector<std::vector<float>> decoded;
  for (const std::uint32_t t : continuation) {
    auto sub = runtime.decode(std::uint32_t{t});
    ASSERT_TRUE(sub.has_value());
    auto logits = runtime.observe_output(sub->output);
    ASSERT_TRUE(logits.has_value());
    decoded.push_back(*logits);
  }
  ASSERT_TRUE(session.truncate(static_cast<std::uint32_t>(prompt.size())).has_value());
  auto sub = session.verify(runtime.backend(), continuation);
  ASSERT_TRUE(sub.has_value()) << sub.error().what();
  auto rows = runtime.observe_output(sub->output);
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), continuation.size() * n_vocab);
  for (std::size_t i = 0; i < continuation.size(); ++i) {
    const std::vector<float> row(rows->begin() + static_cast<std::ptrdiff_t>(i * n_vocab),
                                 rows->begin() + static_cast<std::ptrdiff_t>((i + 1) * n_vocab));
    EXPECT_EQ(row, decoded[i]) << name << ": row " << i;
  }
  EXPECT_EQ(session.checkpoint(), prompt.size() + continuation.size());
}

// The batch and one-token products perform the same operations in the same order: integer
// encodings always (tests/unit/cpu_ops/test_tiled_matmul.cpp), float-decoded ones (F32, F16,
// BF16) for batches of up to 16 tokens (matmul.cpp), and attention always: bit-identical rows.
TEST(SpeculativeVerify, RowsAreBitIdenticalToOneTokenDecodesF32) {
  expect_verify_rows_equal_decodes("stories260K.gguf");
}
TEST(SpeculativeVerify, RowsAreBitIdenticalToOneTokenDecodesQ8) {
  expect_verify_rows_equal_decodes("stories260K-Q8_0-ffndownF16.gguf");
}
TEST(SpeculativeVerify, RowsAreBitIdenticalToOneTokenDecodesQ4) {
  expect_verify_rows_equal_decodes("stories260K-Q4_0-ffndownF16.gguf");
}
TEST(SpeculativeVerify, RowsAreBitIdenticalToOneTokenDecodesQ4KM) {
  expect_verify_rows_equal_decodes("stories260K-Q4_K_M.gguf");
}

// The finish rules and the sampler's penalties, with EOS honoured: plain and speculative agree.
TEST(SpeculativeGreedy, FinishRulesAndPenaltiesApplyAsInPlainGeneration) {
  const auto path = model_path("stories260K.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  auto tokenizer = tokenizer_of(path);
  Runtime target = load(path);
  auto drafter = NgramDrafter::create();
  ASSERT_TRUE(drafter.has_value());
  std::vector<TextGenerationRequest> requests;
  {
    auto r = request_for(*tokenizer, kPrompts[1], 400);
    r.ignore_eos = false;  // ends at EOS (or the budget)
    requests.push_back(r);
  }
  {
    auto r = request_for(*tokenizer, kPrompts[1], 37);  // an odd budget mid-round
    requests.push_back(r);
  }
  {
    auto r = request_for(*tokenizer, kPrompts[0], 200);
    r.stop_strings = {"park"};
    requests.push_back(r);
  }
  {
    auto r = request_for(*tokenizer, kPrompts[2], 100);
    r.sampling.repeat_penalty = 1.3f;  // greedy over penalized logits
    requests.push_back(r);
  }
  for (const auto& request : requests) {
    const TextGenerationResult reference = plain(target, *tokenizer, request);
    for (const std::uint32_t k : kDraftLengths) {
      const auto run = speculative(target, *drafter, *tokenizer, request, k);
      EXPECT_EQ(run.generation.tokens, reference.tokens) << "k " << k;
      EXPECT_EQ(run.generation.text, reference.text) << "k " << k;
      EXPECT_EQ(run.generation.finish_reason, reference.finish_reason) << "k " << k;
    }
  }
}

}  // namespace
}  // namespace eredu::testing::speculative
