#pragma once
// SpeculativeSampling: the acceptance rule that keeps speculative decoding's output distributed
// exactly as the target's own sampling (Leviathan et al. 2023, Chen et al. 2023).
//
// A draft token d was drawn from the drafter's distribution q; the target's distribution at that
// position is p. Then
//   accept d with probability min(1, p(d) / q(d));
//   otherwise draw from the residual  max(0, p - q) / sum(max(0, p - q)).
// The committed token is distributed as p: P(x) = q(x) min(1, p(x)/q(x)) + (1 - sum_y min(p(y),
// q(y))) * max(0, p(x) - q(x)) / sum_y max(0, p(y) - q(y)) = min(p, q) + max(0, p - q) = p(x).
// A deterministic drafter (n-gram) has q one-hot at d: d is accepted with probability p(d), and
// the residual is p without d. When every draft is accepted, the bonus token is drawn from p.
//
// The generator is its own xoshiro256** stream (seeded by the request's seed), so one seed gives
// one output for given logits and drafts.

#include <cstdint>
#include <span>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/generation/rng.hpp"
#include "eredu/generation/token.hpp"

namespace eredu::generation::speculative {

struct Verdict {
  bool accepted = false;  // the draft token itself was committed
  TokenId token = 0;      // the committed token (the draft, or the residual's draw)
  friend bool operator==(const Verdict&, const Verdict&) = default;
};

class SpeculativeSampling {
 public:
  explicit SpeculativeSampling(std::uint64_t seed) noexcept : rng_(seed) {}

  // Judges draft token `draft` against the target's distribution `p`; `q` is the distribution it
  // was drawn from (the same length as p), or empty for a deterministic drafter (one-hot).
  // kInvalidArgument when the lengths differ, `draft` is outside p, or q(draft) is 0 (the token
  // could not have been drawn from q).
  [[nodiscard]] Result<Verdict> judge(std::span<const float> p, std::span<const float> q,
                                      TokenId draft);

  // One draw from the (not necessarily normalized) non-negative weights; kInvalidArgument when
  // they are empty or sum to 0.
  [[nodiscard]] Result<TokenId> draw(std::span<const float> weights);

 private:
  Xoshiro256StarStar rng_;
  std::vector<float> residual_;  // scratch for judge()
};

}  // namespace eredu::generation::speculative
