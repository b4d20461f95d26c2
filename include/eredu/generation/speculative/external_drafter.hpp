#pragma once
// ExternalDrafter<B>: drafting with a separately prepared draft model on the same backend (a
// smaller or quantized model sharing the target's vocabulary). It owns the draft model's
// runtime and keeps the draft KV cache in step with the committed history:
//   propose(history, k): keeps the longest prefix of its cache that agrees with `history`,
//       evaluates the rest (at least the last token, whose logits draft the first token), then
//       drafts k tokens one decode at a time (the last draft is never evaluated);
//   rollback(committed): forgets every cached position >= committed, as the target does.
//
// Greedy drafting proposes the draft model's arg-max; with a sampling configuration it draws
// each token from the draft distribution (the request's temperature and truncation, without
// penalties: q is only a proposal, speculative sampling corrects for any q) and reports it.
//
// Only a TokenizerCompatibilityProof admits a draft model: token ids mean the same text on both.

#include <algorithm>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/generation/sampler.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/generation/speculative/draft.hpp"
#include "eredu/generation/speculative/speculative_sampling.hpp"
#include "eredu/generation/token.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::generation::speculative {

template <typename B>
class ExternalDrafter {
 public:
  using runtime_type = runtime::ModelRuntime<B>;

  // `sampling` is the target request's: greedy drafts greedily, anything else samples.
  [[nodiscard]] static Result<ExternalDrafter> create(
      runtime_type draft, const plan::TokenizerCompatibilityProof& /*proof*/,
      SamplingConfig sampling = SamplingConfig::greedy()) {
    SamplingConfig config = sampling;
    config.penalty_window = 0;
    config.repeat_penalty = 1.0f;
    config.frequency_penalty = 0.0f;
    config.presence_penalty = 0.0f;
    config.seed = sampling.seed ^ 0xD2AF7ULL;  // its own stream, not the target's
    const auto n_vocab = static_cast<std::int32_t>(draft.session().n_vocab());
    EREDU_TRY(Sampler sampler, Sampler::create(config, n_vocab));
    return ExternalDrafter(std::move(draft), std::move(sampler), SpeculativeSampling(config.seed));
  }

  [[nodiscard]] Result<Draft> propose(std::span<const TokenId> history, std::uint32_t k) {
    Draft draft;
    if (k == 0 || history.empty()) return draft;
    auto& session = runtime_.session_mut();
    // Room in the draft cache: the history plus k - 1 evaluated drafts.
    const std::size_t limit = session.max_positions();
    if (history.size() >= limit) return draft;
    k = static_cast<std::uint32_t>(std::min<std::size_t>(k, limit - history.size() + 1));
    try {
      std::size_t keep = 0;
      const std::size_t most = std::min(cached_.size(), history.size() - 1);
      while (keep < most && cached_[keep] == history[keep])
        ++keep;
      EREDU_TRY_VOID(forget_from(static_cast<std::uint32_t>(keep)));
      std::vector<std::uint32_t> rest;
      for (std::size_t i = keep; i < history.size(); ++i) {
        if (history[i] < 0) return fail(ErrorCode::kInvalidArgument, "negative token id");
        rest.push_back(static_cast<std::uint32_t>(history[i]));
      }
      EREDU_TRY(auto submission, runtime_.prefill(std::move(rest)));
      cached_.assign(history.begin(), history.end());
      EREDU_TRY(std::vector<float> logits, runtime_.observe_output(submission.output));
      for (std::uint32_t i = 0; i < k; ++i) {
        EREDU_TRY(const TokenId token, choose(logits, draft));
        draft.tokens.push_back(token);
        if (i + 1 == k) break;
        EREDU_TRY(auto next, runtime_.decode(static_cast<std::uint32_t>(token)));
        cached_.push_back(token);
        EREDU_TRY(std::vector<float> next_logits, runtime_.observe_output(next.output));
        logits = std::move(next_logits);
      }
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "external drafter: cannot allocate the draft");
    }
    return draft;
  }

  // Evaluates the prompt ahead of the first proposal (the generation calls it in its prompt
  // phase, so the draft's prefill is timed with the target's, not with the first round).
  [[nodiscard]] Result<void> prepare(std::span<const TokenId> prompt) {
    if (prompt.empty()) return ok();
    try {
      std::size_t keep = 0;
      const std::size_t most = std::min(cached_.size(), prompt.size() - 1);
      while (keep < most && cached_[keep] == prompt[keep])
        ++keep;
      EREDU_TRY_VOID(forget_from(static_cast<std::uint32_t>(keep)));
      if (prompt.size() >= runtime_.session().max_positions()) return ok();
      std::vector<std::uint32_t> rest;
      for (std::size_t i = keep; i < prompt.size(); ++i) {
        if (prompt[i] < 0) return fail(ErrorCode::kInvalidArgument, "negative token id");
        rest.push_back(static_cast<std::uint32_t>(prompt[i]));
      }
      EREDU_TRY(auto submission, runtime_.prefill(std::move(rest)));
      (void)submission;
      cached_.assign(prompt.begin(), prompt.end());
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "external drafter: cannot allocate the prompt");
    }
    return ok();
  }

  [[nodiscard]] Result<void> rollback(std::uint32_t committed) {
    if (committed >= cached_.size()) return ok();
    return forget_from(committed);
  }

  // Positions the draft cache holds (tests: it never runs ahead of the committed history).
  [[nodiscard]] std::uint32_t cached_positions() const noexcept {
    return runtime_.session().checkpoint();
  }
  [[nodiscard]] std::uint32_t n_vocab() const noexcept { return runtime_.session().n_vocab(); }

 private:
  ExternalDrafter(runtime_type draft, Sampler sampler, SpeculativeSampling draws)
      : runtime_(std::move(draft)), sampler_(std::move(sampler)), draws_(std::move(draws)) {}

  Result<void> forget_from(std::uint32_t position) {
    auto& session = runtime_.session_mut();
    if (position < session.checkpoint()) EREDU_TRY_VOID(session.truncate(position));
    if (position < cached_.size()) cached_.resize(position);
    return ok();
  }

  // The next draft token from one row of draft logits; records q when sampling.
  Result<TokenId> choose(std::span<const float> logits, Draft& draft) {
    if (sampler_.config().is_greedy()) return sampler_.sample(logits);
    std::vector<float> q(logits.size());
    EREDU_TRY_VOID(sampler_.distribution(logits, q));
    EREDU_TRY(const TokenId token, draws_.draw(q));
    draft.probabilities.push_back(std::move(q));
    return token;
  }

  runtime_type runtime_;
  Sampler sampler_;
  SpeculativeSampling draws_;    // draws the sampled drafts from q
  std::vector<TokenId> cached_;  // the tokens whose keys/values the draft cache holds
};

}  // namespace eredu::generation::speculative
