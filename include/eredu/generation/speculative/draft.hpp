#pragma once
// The drafter contract of speculative decoding (speculative_generation.hpp).
//
//   d.propose(history, k) -> Result<Draft>
//       up to k tokens the drafter expects to follow `history` (the prompt and every committed
//       token, in order); fewer, or none, when it has no guess. A drafter that samples its
//       tokens reports the distribution each was drawn from (Draft::probabilities), so that
//       speculative sampling can correct for it; a deterministic one reports none (its
//       distribution is one-hot at the token it proposed).
//   d.rollback(committed) -> Result<void>
//       the target has committed `committed` positions of its cache (a prefix of the history
//       the last proposal saw, plus at most the drafts it accepted): a drafter with state (a
//       draft model's KV cache) forgets everything past it. Called after every verification.
//   d.prepare(prompt) -> Result<void>   (optional)
//       called once in the prompt phase, so a draft model evaluates the prompt there.
//
// A drafter's tokens are only proposals: the target verifies each one, so a wrong or even
// out-of-vocabulary guess costs speed, never correctness (out-of-vocabulary ids are refused).

#include <concepts>
#include <cstdint>
#include <span>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/generation/token.hpp"

namespace eredu::generation::speculative {

struct Draft {
  std::vector<TokenId> tokens;
  // Empty, or one distribution over the target's vocabulary per token (the one it was drawn
  // from; each sums to 1).
  std::vector<std::vector<float>> probabilities;
};

template <typename D>
concept Drafter = requires(D& d, std::span<const TokenId> history, std::uint32_t k,
                           std::uint32_t committed) {
  { d.propose(history, k) } -> std::same_as<Result<Draft>>;
  { d.rollback(committed) } -> std::same_as<Result<void>>;
};

// Whether D has the optional prepare(prompt).
template <typename D>
concept PreparesPrompt = requires(D& d, std::span<const TokenId> prompt) {
  { d.prepare(prompt) } -> std::same_as<Result<void>>;
};

}  // namespace eredu::generation::speculative
