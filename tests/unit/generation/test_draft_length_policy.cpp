// DraftLengthPolicy against scripted measurements whose best draft length is known in closed
// form: the rate E(k) / (k * t_draft + t_verify(k + 1)) with E(k) = 1 + a + ... + a^k.
#include "eredu/generation/speculative/draft_length_policy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace {

using eredu::generation::speculative::DraftLengthPolicy;

// Rounds of k drafts of which `accepted` are committed, with a drafter costing t_draft per token
// and a verify pass costing t0 + t1 * rows.
void feed(DraftLengthPolicy& policy, int rounds, std::uint32_t k, std::uint32_t accepted,
          double t_draft, double t0, double t1) {
  for (int i = 0; i < rounds; ++i) {
    policy.record_draft(k, k * t_draft);
    policy.record_verify(k + 1, k, accepted, t0 + t1 * (k + 1));
  }
}

TEST(DraftLengthPolicy, AsksForTheMostDraftsBeforeAnythingIsMeasuredAndAlwaysWhenFixed) {
  DraftLengthPolicy adaptive(8, true);
  EXPECT_EQ(adaptive.next(), 8u);
  DraftLengthPolicy fixed(8, false);
  feed(fixed, 20, 8, 0, 1.0, 1.0, 1.0);
  EXPECT_EQ(fixed.next(), 8u);
}

TEST(DraftLengthPolicy, DraftsThatAreNeverAcceptedLeadToPlainDecodingWithPeriodicProbes) {
  DraftLengthPolicy policy(8, true);
  // A drafter half as costly as the target, none of its drafts accepted.
  feed(policy, 30, 8, 0, 0.5, 1.0, 0.1);
  EXPECT_LT(policy.acceptance(), 0.05);
  EXPECT_EQ(policy.next(), 0u);
  // Plain rounds (no drafts) until the probe interval, then one probing draft.
  int plain = 0;
  while (policy.next() == 0u && plain < 100) {
    policy.record_verify(1, 0, 0, 1.1);
    ++plain;
  }
  EXPECT_EQ(plain, static_cast<int>(DraftLengthPolicy::kProbeInterval) - 1);
  EXPECT_EQ(policy.next(), 1u);
  // A refused probe doubles the wait for the next one.
  policy.record_draft(1, 0.5);
  policy.record_verify(2, 1, 0, 1.2);
  plain = 0;
  while (policy.next() == 0u && plain < 100) {
    policy.record_verify(1, 0, 0, 1.1);
    ++plain;
  }
  EXPECT_EQ(plain, 2 * static_cast<int>(DraftLengthPolicy::kProbeInterval) - 1);
}

TEST(DraftLengthPolicy, CheapAndAlwaysAcceptedDraftsUseTheFullLength) {
  DraftLengthPolicy policy(8, true);
  feed(policy, 30, 8, 8, 0.01, 1.0, 0.05);
  EXPECT_GT(policy.acceptance(), 0.9);
  EXPECT_EQ(policy.next(), 8u);
}

TEST(DraftLengthPolicy, TheChosenLengthMaximizesTheModelledRate) {
  // Acceptance 0.6, drafts at 0.2 of a one-row pass, each extra verify row 0.1 of it: learned
  // from rounds of varying length, so the verify cost's slope is fitted, not assumed.
  DraftLengthPolicy policy(16, true);
  const double t0 = 0.9, t1 = 0.1, t_draft = 0.2;
  for (int i = 0; i < 200; ++i) {
    const std::uint32_t k = 2 + static_cast<std::uint32_t>(i % 4) * 2;  // 2, 4, 6, 8
    const std::uint32_t accepted = static_cast<std::uint32_t>(std::lround(0.6 * k));
    policy.record_draft(k, k * t_draft);
    policy.record_verify(k + 1, k, accepted, t0 + t1 * (k + 1));
  }
  EXPECT_NEAR(policy.verify_seconds(1), t0 + t1, 1e-9);
  EXPECT_NEAR(policy.verify_seconds(9), t0 + 9 * t1, 1e-9);
  const double a = policy.acceptance();
  std::uint32_t best = 0;
  double best_rate = 1.0 / (t0 + t1);
  double expected = 1.0;
  for (std::uint32_t k = 1; k <= 16; ++k) {
    expected += std::pow(a, k);
    const double rate = expected / (k * t_draft + t0 + t1 * (k + 1));
    if (rate > best_rate) {
      best_rate = rate;
      best = k;
    }
  }
  EXPECT_GT(best, 0u);
  EXPECT_LT(best, 16u);
  EXPECT_EQ(policy.next(), best);
}

}  // namespace
