#include "eredu/generation/speculative/speculative_sampling.hpp"

#include <algorithm>
#include <new>
#include <string>

namespace eredu::generation::speculative {
namespace {

Unexpected<Error> bad(std::string message) {
  return fail(Error(ErrorCode::kInvalidArgument, std::move(message)).with_subject("draft"));
}

}  // namespace

Result<TokenId> SpeculativeSampling::draw(std::span<const float> weights) {
  double total = 0.0;
  for (const float w : weights)
    total += std::max(0.0, static_cast<double>(w));
  if (!(total > 0.0)) return bad("nothing to draw from: every weight is 0");
  const double target = rng_.next_double() * total;
  double cumulative = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] > 0.0f)) continue;
    last_positive = i;
    cumulative += static_cast<double>(weights[i]);
    if (target < cumulative) return static_cast<TokenId>(i);
  }
  // Rounding left target at (or a hair above) the total: the last token with weight wins.
  return static_cast<TokenId>(last_positive);
}

Result<Verdict> SpeculativeSampling::judge(std::span<const float> p, std::span<const float> q,
                                           TokenId draft) {
  if (!q.empty() && q.size() != p.size()) {
    return bad("the draft distribution has " + std::to_string(q.size()) +
               " entries, the target's " + std::to_string(p.size()));
  }
  if (draft < 0 || static_cast<std::size_t>(draft) >= p.size()) {
    return bad("draft token " + std::to_string(draft) + " is outside the vocabulary");
  }
  const auto d = static_cast<std::size_t>(draft);
  const double pd = p[d];
  const double qd = q.empty() ? 1.0 : static_cast<double>(q[d]);
  if (!(qd > 0.0)) {
    return bad("draft token " + std::to_string(draft) + " has probability 0 under its drafter");
  }
  // u < p/q, written without the division (u in [0, 1), so p >= q always accepts).
  if (rng_.next_double() * qd < pd) return Verdict{true, draft};

  // The residual max(0, p - q).
  try {
    residual_.assign(p.begin(), p.end());
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted,
                "speculative sampling: cannot allocate the residual");
  }
  if (q.empty()) {
    residual_[d] = 0.0f;
  } else {
    for (std::size_t i = 0; i < residual_.size(); ++i)
      residual_[i] = std::max(0.0f, p[i] - q[i]);
  }
  auto token = draw(residual_);
  // p == q up to rounding leaves no residual mass (rejection then has probability ~0): p itself.
  if (!token) {
    EREDU_TRY(const TokenId fallback, draw(p));
    return Verdict{false, fallback};
  }
  return Verdict{false, *token};
}

}  // namespace eredu::generation::speculative
