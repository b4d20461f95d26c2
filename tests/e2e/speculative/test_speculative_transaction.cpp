// The speculative transaction's other guarantees on the CPU backend: a cancellation requested
// during a round (while drafting/verifying, or while its tokens are published) publishes only
// committed tokens, a prefix of the plain greedy output, and leaves both caches at the committed
// position; a draft model whose vocabulary differs is refused naming the first differing token;
// sampled speculative decoding is reproducible for one seed and honours the budget.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eredu/generation/speculative/external_drafter.hpp"
#include "eredu/generation/speculative/ngram_drafter.hpp"
#include "eredu/text/vocabulary_fingerprint.hpp"
#include "speculative_support.hpp"

namespace eredu::testing::speculative {
namespace {

using generation::CancellationToken;
using generation::speculative::Draft;
using generation::speculative::ExternalDrafter;
using generation::speculative::NgramDrafter;

// Wraps a drafter and requests a stop while round `stop_round` (0-based) is drafting.
template <typename D>
class CancellingDrafter {
 public:
  CancellingDrafter(D& inner, CancellationToken& cancel, int stop_round)
      : inner_(&inner), cancel_(&cancel), stop_round_(stop_round) {}
  Result<Draft> propose(std::span<const TokenId> history, std::uint32_t k) {
    if (round_++ == stop_round_) cancel_->request_stop();
    return inner_->propose(history, k);
  }
  Result<void> rollback(std::uint32_t committed) { return inner_->rollback(committed); }

 private:
  D* inner_;
  CancellationToken* cancel_;
  int stop_round_;
  int round_ = 0;
};

bool is_prefix(const std::vector<TokenId>& a, const std::vector<TokenId>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

TEST(SpeculativeTransaction, CancellationDuringARoundPublishesOnlyCommittedTokens) {
  const auto path = model_path("stories260K.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  auto tokenizer = tokenizer_of(path);
  auto proof = text::prove_tokenizer_compatibility(*tokenizer, *tokenizer);
  ASSERT_TRUE(proof.has_value());
  Runtime target = load(path);
  auto drafter = ExternalDrafter<Cpu>::create(load(path), *proof);
  ASSERT_TRUE(drafter.has_value());
  const auto request = request_for(*tokenizer, "Once upon a time", 100);
  const TextGenerationResult reference = plain(target, *tokenizer, request);

  for (const int stop_round : {0, 2, 5}) {
    CancellationToken cancel;
    CancellingDrafter<ExternalDrafter<Cpu>> cancelling(*drafter, cancel, stop_round);
    const auto run = speculative(target, cancelling, *tokenizer, request, 4, cancel);
    EXPECT_EQ(run.generation.finish_reason, generation::FinishReason::kCancelled);
    EXPECT_TRUE(is_prefix(run.generation.tokens, reference.tokens));
    EXPECT_LT(run.generation.tokens.size(), reference.tokens.size());
    // The round that was cancelled ran to its end and published none of its tokens: every
    // earlier round committed its k = 4 drafts and a bonus (the model drafts for itself).
    EXPECT_EQ(run.generation.tokens.size(), 1u + 5u * static_cast<std::size_t>(stop_round));
    auto text = tokenizer->decode(run.generation.tokens);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(run.generation.text, *text);
    // Both caches hold exactly the committed history but its last token.
    const std::size_t committed = request.prompt.size() + run.generation.tokens.size() - 1;
    EXPECT_EQ(target.session().checkpoint(), committed);
    EXPECT_LE(drafter->cached_positions(), committed);
  }
}

TEST(SpeculativeTransaction, CancellationWhileARoundPublishesStopsAfterThatToken) {
  const auto path = model_path("stories260K.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  auto tokenizer = tokenizer_of(path);
  Runtime target = load(path);
  auto drafter = NgramDrafter::create(1);
  ASSERT_TRUE(drafter.has_value());
  const auto request = request_for(*tokenizer, "The cat sat on the mat. The dog sat on the", 100);
  const TextGenerationResult reference = plain(target, *tokenizer, request);

  CancellationToken cancel;
  auto generation = generation::speculative::SpeculativeGeneration<Cpu, NgramDrafter>::create(
      target, *drafter, request, {.max_draft = 8, .adaptive = false});
  ASSERT_TRUE(generation.has_value());
  std::size_t pieces = 0;
  auto run = generation->run(cancel, piece_of(*tokenizer), [&](std::string_view) {
    if (++pieces == 20) cancel.request_stop();
  });
  ASSERT_TRUE(run.has_value()) << run.error().what();
  EXPECT_EQ(run->generation.finish_reason, generation::FinishReason::kCancelled);
  EXPECT_TRUE(is_prefix(run->generation.tokens, reference.tokens));
  EXPECT_LT(run->generation.tokens.size(), reference.tokens.size());
  EXPECT_EQ(target.session().checkpoint(),
            request.prompt.size() + run->generation.tokens.size() - 1);
}

// A tokenizer that is `inner` except for the text of one entry.
class AlteredTokenizer final : public text::Tokenizer {
 public:
  AlteredTokenizer(const text::Tokenizer& inner, TokenId id, std::string entry)
      : inner_(&inner), id_(id), entry_(std::move(entry)) {}
  text::TokenizerKind kind() const noexcept override { return inner_->kind(); }
  std::size_t vocab_size() const noexcept override { return inner_->vocab_size(); }
  Result<std::vector<TokenId>> encode(std::string_view text,
                                      const text::EncodeOptions& options) const override {
    return inner_->encode(text, options);
  }
  Result<std::string> token_to_piece(TokenId id, bool render_special) const override {
    return inner_->token_to_piece(id, render_special);
  }
  Result<std::string_view> token_text(TokenId id) const override {
    if (id == id_) return std::string_view(entry_);
    return inner_->token_text(id);
  }
  std::optional<TokenId> find_token(std::string_view text) const override {
    return inner_->find_token(text);
  }
  Result<text::TokenType> token_type(TokenId id) const override { return inner_->token_type(id); }
  const text::SpecialTokenIds& special_tokens() const noexcept override {
    return inner_->special_tokens();
  }
  bool adds_bos() const noexcept override { return inner_->adds_bos(); }
  bool adds_eos() const noexcept override { return inner_->adds_eos(); }

 private:
  const text::Tokenizer* inner_;
  TokenId id_;
  std::string entry_;
};

TEST(SpeculativeTransaction, ADraftVocabularyThatDiffersIsRefusedNamingTheFirstDifference) {
  const auto path = model_path("stories260K.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  auto tokenizer = tokenizer_of(path);
  auto original = tokenizer->token_text(300);
  ASSERT_TRUE(original.has_value());
  const std::string original_text(*original);
  AlteredTokenizer altered(*tokenizer, 300, "mismatch");
  auto proof = text::prove_tokenizer_compatibility(*tokenizer, altered);
  ASSERT_FALSE(proof.has_value());
  EXPECT_EQ(proof.error().code(), ErrorCode::kInvalidModel);
  const std::string message = proof.error().message();
  EXPECT_NE(message.find("at token 300"), std::string::npos) << message;
  EXPECT_NE(message.find("'" + original_text + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("'mismatch'"), std::string::npos) << message;

  // The same vocabulary (the quantized variant's) is proven, with equal fingerprints.
  auto q4 = tokenizer_of(model_path("stories260K-Q4_0-ffndownF16.gguf"));
  auto same = text::prove_tokenizer_compatibility(*tokenizer, *q4);
  ASSERT_TRUE(same.has_value()) << same.error().what();
  auto fingerprint = text::vocabulary_fingerprint(altered);
  ASSERT_TRUE(fingerprint.has_value());
  EXPECT_NE(*fingerprint, same->fingerprint());
}

TEST(SpeculativeTransaction, SampledSpeculativeDecodingIsReproducibleAndKeepsTheBudget) {
  const auto path = model_path("stories260K.gguf");
  const auto draft_path = model_path("stories260K-Q4_0-ffndownF16.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  EREDU_REQUIRE_SHARED_PATH(draft_path);
  auto tokenizer = tokenizer_of(path);
  auto proof = text::prove_tokenizer_compatibility(*tokenizer, *tokenizer_of(draft_path));
  ASSERT_TRUE(proof.has_value());
  Runtime target = load(path);
  auto request = request_for(*tokenizer, "Once upon a time", 80);
  request.sampling = generation::SamplingConfig{};  // temperature 0.8, top-k 40, top-p 0.95
  request.sampling.seed = 42;
  std::vector<std::vector<TokenId>> outputs;
  for (int run = 0; run < 2; ++run) {
    auto drafter = ExternalDrafter<Cpu>::create(load(draft_path), *proof, request.sampling);
    ASSERT_TRUE(drafter.has_value());
    const auto result = speculative(target, *drafter, *tokenizer, request, 4);
    EXPECT_EQ(result.generation.tokens.size(), 80u);
    EXPECT_GT(result.statistics.accepted, 0);
    outputs.push_back(result.generation.tokens);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  auto ngram = NgramDrafter::create();
  ASSERT_TRUE(ngram.has_value());
  const auto result = speculative(target, *ngram, *tokenizer, request, 4);
  EXPECT_EQ(result.generation.tokens.size(), 80u);
}

}  // namespace
}  // namespace eredu::testing::speculative
