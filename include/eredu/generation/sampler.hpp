#pragma once
// The host sampler: turns one row of logits into a token id following a SamplingConfig (see
// sampling_config.hpp for the order of the steps and the penalty formula).
//
// All buffers (candidates, weights, penalty counts, penalty window) are allocated by create();
// sample() and accept() allocate nothing. The sampler owns its random generator
// (xoshiro256**, rng.hpp), so one seed gives one token stream for given logits on every platform,
// as long as std::exp / std::log agree (they are correctly rounded in glibc). A sampler belongs
// to one sequence; it is not safe to use from two threads at once.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/generation/rng.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/generation/token.hpp"

namespace eredu::generation {

// One token still in the running: its id and its (penalized, un-tempered) logit.
struct Candidate {
  TokenId id;
  float logit;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// The order truncation works in: higher logit first, equal logits by ascending id. It is a strict
// total order, so every sort of the candidates gives one result.
[[nodiscard]] constexpr bool ranks_before(const Candidate& a, const Candidate& b) noexcept {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

class Sampler {
 public:
  // Largest vocabulary the sampler accepts (16 Mi tokens).
  static constexpr std::int32_t kMaxVocab = 1 << 24;

  // Validates `config` and `n_vocab` (1..kMaxVocab) and allocates every buffer.
  [[nodiscard]] static Result<Sampler> create(const SamplingConfig& config, std::int32_t n_vocab);

  // Picks the next token from `logits` (exactly n_vocab values; -inf masks a token). Errors
  // (kInvalidArgument, subject "logits"): wrong length, a NaN or +inf logit (its index is named),
  // every logit -inf, or a logit made infinite by the penalties. The penalty window is not
  // updated: call accept() with the token actually committed.
  [[nodiscard]] Result<TokenId> sample(std::span<const float> logits);

  // The distribution sample() draws from for `logits`, over the whole vocabulary, into `probs`
  // (n_vocab values summing to 1; 0 for every token the truncation removed): penalties, top-k,
  // top-p, min-p and temperature as in sample(); one-hot at the arg-max when greedy. Speculative
  // sampling compares it with the draft's. Consumes no random numbers. Errors as sample(), and
  // kInvalidArgument (subject "probs") when `probs` does not hold n_vocab values.
  [[nodiscard]] Result<void> distribution(std::span<const float> logits, std::span<float> probs);

  // Records `token` in the penalty window (evicting the oldest once the window is full).
  // kInvalidArgument (subject "token") when it is outside [0, n_vocab).
  [[nodiscard]] Result<void> accept(TokenId token);

  // Forgets the penalty window (a new request on the same sampler).
  void reset_history() noexcept;
  // Restarts the random stream from `seed`.
  void reseed(std::uint64_t seed) noexcept { rng_.reseed(seed); }

  [[nodiscard]] const SamplingConfig& config() const noexcept { return config_; }
  [[nodiscard]] std::int32_t n_vocab() const noexcept { return n_vocab_; }
  // How many times `token` is in the current penalty window (0 when out of range).
  [[nodiscard]] std::uint32_t window_count(TokenId token) const noexcept;

  // The candidates the last sample() drew from, after penalties and truncation, with their
  // un-tempered logits: ranked by ranks_before() when a truncation step had to sort, otherwise in
  // id order; a single entry for greedy decoding. Valid until the next sample().
  [[nodiscard]] std::span<const Candidate> last_candidates() const noexcept {
    return {candidates_.data(), n_candidates_};
  }

 private:
  Sampler(const SamplingConfig& config, std::int32_t n_vocab);
  [[nodiscard]] bool penalties_active() const noexcept;
  [[nodiscard]] Result<void> gather_candidates(std::span<const float> logits);
  void keep_top_k();
  void keep_top_p();
  void keep_min_p();
  [[nodiscard]] TokenId draw();

  SamplingConfig config_;
  std::int32_t n_vocab_ = 0;
  Xoshiro256StarStar rng_;
  std::vector<Candidate> candidates_;  // n_vocab entries; the first n_candidates_ are live
  std::size_t n_candidates_ = 0;
  bool sorted_ = false;                // the live candidates are in ranks_before() order
  std::vector<double> weights_;        // scratch for softmax weights, n_vocab entries
  std::vector<std::uint32_t> counts_;  // per-token occurrences in the penalty window
  std::vector<TokenId> window_;        // ring buffer of the last penalty_window tokens
  std::size_t window_head_ = 0;        // index of the oldest entry
  std::size_t window_size_ = 0;
};

}  // namespace eredu::generation
