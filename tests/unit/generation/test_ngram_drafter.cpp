// NgramDrafter: prompt lookup proposes what followed the most recent earlier occurrence of the
// history's last n tokens, falling back to shorter n-grams, and nothing when there is none.

#include <gtest/gtest.h>

#include <vector>

#include "eredu/generation/speculative/ngram_drafter.hpp"

namespace eredu::generation::speculative {
namespace {

std::vector<TokenId> propose(std::uint32_t order, const std::vector<TokenId>& history,
                             std::uint32_t k) {
  auto drafter = NgramDrafter::create(order);
  EXPECT_TRUE(drafter.has_value());
  auto draft = drafter->propose(history, k);
  EXPECT_TRUE(draft.has_value());
  EXPECT_TRUE(draft->probabilities.empty());  // deterministic: q is one-hot
  return draft->tokens;
}

TEST(NgramDrafter, ProposesWhatFollowedTheLastTrigram) {
  EXPECT_EQ(propose(3, {1, 2, 3, 4, 9, 7, 1, 2, 3}, 3), (std::vector<TokenId>{4, 9, 7}));
}

TEST(NgramDrafter, ProposesAtMostKAndAtMostWhatTheHistoryHolds) {
  EXPECT_EQ(propose(3, {1, 2, 3, 4, 9, 7, 1, 2, 3}, 2), (std::vector<TokenId>{4, 9}));
  // The match's continuation runs into the suffix itself and stops at the history's end.
  EXPECT_EQ(propose(2, {5, 6, 8, 5, 6}, 8), (std::vector<TokenId>{8, 5, 6}));
}

TEST(NgramDrafter, FallsBackToShorterNgrams) {
  // [7, 8, 6] and [8, 6] never occurred before; [6] did, at index 1.
  EXPECT_EQ(propose(3, {5, 6, 7, 8, 6}, 3), (std::vector<TokenId>{7, 8, 6}));
}

TEST(NgramDrafter, UsesTheMostRecentOccurrence) {
  EXPECT_EQ(propose(1, {1, 2, 1, 3, 1}, 2), (std::vector<TokenId>{3, 1}));
}

TEST(NgramDrafter, ProposesNothingWithoutAMatch) {
  EXPECT_TRUE(propose(3, {1, 2, 3, 4}, 4).empty());
  EXPECT_TRUE(propose(3, {1}, 4).empty());
  EXPECT_TRUE(propose(3, {1, 2, 1}, 0).empty());
}

TEST(NgramDrafter, RefusesAnOrderOutsideItsRange) {
  EXPECT_FALSE(NgramDrafter::create(0).has_value());
  EXPECT_FALSE(NgramDrafter::create(NgramDrafter::kMaxOrder + 1).has_value());
}

}  // namespace
}  // namespace eredu::generation::speculative
