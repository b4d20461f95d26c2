#include "eredu/generation/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include <fmt/format.h>

namespace eredu::generation {
namespace {

// exp((logit - max) / temperature) of the first `n` candidates into `weights`; returns their sum
// (what draw() samples from and distribution() normalizes, computed once for both).
template <typename Candidate>
double softmax_weights(const Candidate* candidates, std::size_t n, float temperature,
                       double* weights) {
  float max_logit = candidates[0].logit;
  for (std::size_t i = 1; i < n; ++i)
    max_logit = std::max(max_logit, candidates[i].logit);
  const double inv_temperature = 1.0 / static_cast<double>(temperature);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    weights[i] = std::exp((static_cast<double>(candidates[i].logit) - max_logit) * inv_temperature);
    total += weights[i];
  }
  return total;
}

Unexpected<Error> bad_logits(std::string message) {
  return fail(Error(ErrorCode::kInvalidArgument, std::move(message)).with_subject("logits"));
}

}  // namespace

Sampler::Sampler(const SamplingConfig& config, std::int32_t n_vocab)
    : config_(config), n_vocab_(n_vocab), rng_(config.seed) {}

Result<Sampler> Sampler::create(const SamplingConfig& config, std::int32_t n_vocab) {
  EREDU_TRY_VOID(config.validate());
  if (n_vocab <= 0 || n_vocab > kMaxVocab) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      fmt::format("vocabulary size is {}; expected 1..{}", n_vocab, kMaxVocab))
                    .with_subject("n_vocab"));
  }
  try {
    Sampler sampler(config, n_vocab);
    const auto n = static_cast<std::size_t>(n_vocab);
    sampler.candidates_.resize(n);
    sampler.weights_.resize(n);
    sampler.counts_.assign(n, 0);
    if (config.penalty_window > 0) {
      sampler.window_.resize(static_cast<std::size_t>(config.penalty_window));
    }
    return sampler;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("out of memory allocating a sampler for {} tokens", n_vocab));
  }
}

bool Sampler::penalties_active() const noexcept {
  return config_.penalty_window != 0 &&
         (config_.repeat_penalty != 1.0f || config_.frequency_penalty != 0.0f ||
          config_.presence_penalty != 0.0f);
}

std::uint32_t Sampler::window_count(TokenId token) const noexcept {
  if (token < 0 || token >= n_vocab_) return 0;
  return counts_[static_cast<std::size_t>(token)];
}

void Sampler::reset_history() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0u);
  window_head_ = 0;
  window_size_ = 0;
}

Result<void> Sampler::accept(TokenId token) {
  if (token < 0 || token >= n_vocab_) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      fmt::format("token id {} is outside the vocabulary [0, {})", token, n_vocab_))
                    .with_subject("token"));
  }
  const auto id = static_cast<std::size_t>(token);
  if (config_.penalty_window == 0) return ok();
  if (config_.penalty_window == SamplingConfig::kWholeHistory) {
    // Saturate rather than wrap: a count this large penalizes the same either way.
    if (counts_[id] != std::numeric_limits<std::uint32_t>::max()) ++counts_[id];
    return ok();
  }
  const std::size_t capacity = window_.size();
  if (window_size_ == capacity) {
    --counts_[static_cast<std::size_t>(window_[window_head_])];
    window_[window_head_] = token;
    window_head_ = (window_head_ + 1) % capacity;
  } else {
    window_[(window_head_ + window_size_) % capacity] = token;
    ++window_size_;
  }
  ++counts_[id];
  return ok();
}

// Copies the finite logits into the candidate buffer, applying the penalties on the way.
Result<void> Sampler::gather_candidates(std::span<const float> logits) {
  if (logits.size() != static_cast<std::size_t>(n_vocab_)) {
    return bad_logits(
        fmt::format("got {} logits for a vocabulary of {} tokens", logits.size(), n_vocab_));
  }
  const bool penalize = penalties_active();
  const float repeat = config_.repeat_penalty;
  std::size_t n = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    float logit = logits[i];
    if (std::isnan(logit)) return bad_logits(fmt::format("logit of token {} is NaN", i));
    if (logit == std::numeric_limits<float>::infinity()) {
      return bad_logits(fmt::format("logit of token {} is +inf", i));
    }
    if (logit == -std::numeric_limits<float>::infinity()) continue;  // masked out
    if (penalize && counts_[i] > 0) {
      const std::uint32_t count = counts_[i];
      logit = logit <= 0.0f ? logit * repeat : logit / repeat;
      logit -= static_cast<float>(count) * config_.frequency_penalty +
               (count > 0 ? config_.presence_penalty : 0.0f);
      if (!std::isfinite(logit)) {
        return bad_logits(fmt::format("logit of token {} is {} after the penalties", i, logit));
      }
    }
    candidates_[n++] = Candidate{static_cast<TokenId>(i), logit};
  }
  if (n == 0) return bad_logits("every logit is -inf; there is no token to sample");
  n_candidates_ = n;
  sorted_ = false;
  return ok();
}

void Sampler::keep_top_k() {
  const auto k = static_cast<std::size_t>(config_.top_k);
  if (k == 0 || k >= n_candidates_) return;
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k),
                    candidates_.begin() + static_cast<std::ptrdiff_t>(n_candidates_), ranks_before);
  n_candidates_ = k;
  sorted_ = true;
}

void Sampler::keep_top_p() {
  if (config_.top_p >= 1.0f || n_candidates_ <= 1) return;
  if (!sorted_) {
    std::sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(n_candidates_),
              ranks_before);
    sorted_ = true;
  }
  const double max_logit = candidates_[0].logit;
  double total = 0.0;
  for (std::size_t i = 0; i < n_candidates_; ++i) {
    weights_[i] = std::exp(static_cast<double>(candidates_[i].logit) - max_logit);
    total += weights_[i];
  }
  // Keep the shortest prefix whose mass reaches top_p (the token that crosses it stays).
  const double target = static_cast<double>(config_.top_p) * total;
  double cumulative = 0.0;
  for (std::size_t i = 0; i < n_candidates_; ++i) {
    cumulative += weights_[i];
    if (cumulative >= target) {
      n_candidates_ = i + 1;
      return;
    }
  }
}

void Sampler::keep_min_p() {
  if (config_.min_p <= 0.0f || n_candidates_ <= 1) return;
  float max_logit = candidates_[0].logit;
  if (!sorted_) {
    for (std::size_t i = 1; i < n_candidates_; ++i)
      max_logit = std::max(max_logit, candidates_[i].logit);
  }
  // p_i >= min_p * p_max  <=>  logit_i >= max_logit + log(min_p); the arg-max always stays.
  const double threshold =
      static_cast<double>(max_logit) + std::log(static_cast<double>(config_.min_p));
  const auto end = std::remove_if(
      candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(n_candidates_),
      [threshold](const Candidate& c) { return static_cast<double>(c.logit) < threshold; });
  n_candidates_ = static_cast<std::size_t>(end - candidates_.begin());
}

// Softmax of logit / temperature over the live candidates, then one inverse-CDF draw.
TokenId Sampler::draw() {
  const double total =
      softmax_weights(candidates_.data(), n_candidates_, config_.temperature, weights_.data());
  const double target = rng_.next_double() * total;
  double cumulative = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < n_candidates_; ++i) {
    if (weights_[i] <= 0.0) continue;
    last_positive = i;
    cumulative += weights_[i];
    if (target < cumulative) return candidates_[i].id;
  }
  // Rounding left target at (or a hair above) the total: the last token with weight wins.
  return candidates_[last_positive].id;
}

Result<TokenId> Sampler::sample(std::span<const float> logits) {
  EREDU_TRY_VOID(gather_candidates(logits));
  if (config_.is_greedy()) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < n_candidates_; ++i) {
      if (ranks_before(candidates_[i], candidates_[best])) best = i;
    }
    candidates_[0] = candidates_[best];
    n_candidates_ = 1;
    sorted_ = true;
    return candidates_[0].id;
  }
  keep_top_k();
  keep_top_p();
  keep_min_p();
  return draw();
}

Result<void> Sampler::distribution(std::span<const float> logits, std::span<float> probs) {
  if (probs.size() != static_cast<std::size_t>(n_vocab_)) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      fmt::format("got room for {} probabilities for a vocabulary of {} tokens",
                                  probs.size(), n_vocab_))
                    .with_subject("probs"));
  }
  std::fill(probs.begin(), probs.end(), 0.0f);
  if (config_.is_greedy()) {
    EREDU_TRY(const TokenId best, sample(logits));
    probs[static_cast<std::size_t>(best)] = 1.0f;
    return ok();
  }
  EREDU_TRY_VOID(gather_candidates(logits));
  keep_top_k();
  keep_top_p();
  keep_min_p();
  // The weights draw() would use, normalized.
  const double total =
      softmax_weights(candidates_.data(), n_candidates_, config_.temperature, weights_.data());
  for (std::size_t i = 0; i < n_candidates_; ++i) {
    probs[static_cast<std::size_t>(candidates_[i].id)] = static_cast<float>(weights_[i] / total);
  }
  return ok();
}

}  // namespace eredu::generation
