// Sampler: greedy, truncation (top-k, top-p, min-p), penalties, seeding and the sampled
// distribution, each against values computed by hand or by plain formulas written here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "eredu/generation/sampler.hpp"

namespace eredu::generation {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// A config with every truncation and penalty off: plain softmax sampling at `temperature`.
SamplingConfig plain(float temperature, std::uint64_t seed = 1) {
  SamplingConfig config;
  config.temperature = temperature;
  config.top_k = 0;
  config.top_p = 1.0f;
  config.min_p = 0.0f;
  config.seed = seed;
  return config;
}

Sampler make(const SamplingConfig& config, std::int32_t n_vocab) {
  Result<Sampler> sampler = Sampler::create(config, n_vocab);
  EXPECT_TRUE(sampler.has_value()) << sampler.error().what();
  return std::move(sampler).value();
}

std::set<TokenId> candidate_ids(const Sampler& sampler) {
  std::set<TokenId> ids;
  for (const Candidate& c : sampler.last_candidates())
    ids.insert(c.id);
  return ids;
}

// Logits whose softmax is exactly `probabilities` (up to float rounding).
std::vector<float> logits_of(const std::vector<double>& probabilities) {
  std::vector<float> logits;
  for (double p : probabilities)
    logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

// Reference softmax of logit / temperature, in double, written independently of the sampler.
std::vector<double> reference_softmax(const std::vector<float>& logits, double temperature) {
  double max_logit = logits[0];
  for (float l : logits)
    max_logit = std::max<double>(max_logit, l);
  std::vector<double> p;
  double total = 0.0;
  for (float l : logits) {
    p.push_back(std::exp((l - max_logit) / temperature));
    total += p.back();
  }
  for (double& v : p)
    v /= total;
  return p;
}

// Probabilities used by the truncation tests: sorted they are 0.40 (id 1), 0.30 (id 3),
// 0.15 (id 4), 0.10 (id 2), 0.05 (id 0); cumulative 0.40, 0.70, 0.85, 0.95, 1.00.
const std::vector<double> kFiveProbabilities = {0.05, 0.40, 0.10, 0.30, 0.15};

TEST(SamplerGreedy, PicksTheArgMax) {
  Sampler sampler = make(SamplingConfig::greedy(), 4);
  const std::vector<float> logits = {0.1f, 2.5f, -1.0f, 2.4f};
  EXPECT_EQ(sampler.sample(logits).value(), 1);
}

TEST(SamplerGreedy, BreaksTiesTowardsTheLowestId) {
  Sampler sampler = make(SamplingConfig::greedy(), 5);
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 0.0f, 3.0f};
  EXPECT_EQ(sampler.sample(logits).value(), 1);
  ASSERT_EQ(sampler.last_candidates().size(), 1u);
  EXPECT_EQ(sampler.last_candidates()[0], (Candidate{1, 3.0f}));
}

TEST(SamplerGreedy, TopKOfOneIsGreedyAtAnyTemperatureAndSeed) {
  const std::vector<float> logits = {0.0f, 5.0f, 5.0f, 4.9f};
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    SamplingConfig config = plain(1.5f, seed);
    config.top_k = 1;
    Sampler sampler = make(config, 4);
    EXPECT_EQ(sampler.sample(logits).value(), 1);
  }
}

TEST(SamplerGreedy, IgnoresMaskedTokens) {
  Sampler sampler = make(SamplingConfig::greedy(), 3);
  const std::vector<float> logits = {kNegInf, -50.0f, kNegInf};
  EXPECT_EQ(sampler.sample(logits).value(), 1);
}

TEST(SamplerTopK, KeepsExactlyTheKHighestLogits) {
  SamplingConfig config = plain(1.0f);
  config.top_k = 3;
  Sampler sampler = make(config, 6);
  const std::vector<float> logits = {0.5f, 3.0f, -2.0f, 2.0f, 1.0f, 2.5f};
  for (int i = 0; i < 500; ++i) {
    const TokenId token = sampler.sample(logits).value();
    EXPECT_TRUE(token == 1 || token == 5 || token == 3) << token;
    EXPECT_EQ(candidate_ids(sampler), (std::set<TokenId>{1, 3, 5}));
  }
}

TEST(SamplerTopK, BreaksTiesAtTheCutTowardsTheLowestIds) {
  SamplingConfig config = plain(1.0f);
  config.top_k = 2;
  Sampler sampler = make(config, 4);
  const std::vector<float> logits = {1.0f, 2.0f, 2.0f, 2.0f};
  ASSERT_TRUE(sampler.sample(logits).has_value());
  EXPECT_EQ(candidate_ids(sampler), (std::set<TokenId>{1, 2}));
}

TEST(SamplerTopK, LargerThanTheVocabularyKeepsEverything) {
  SamplingConfig config = plain(1.0f);
  config.top_k = 100;
  Sampler sampler = make(config, 3);
  ASSERT_TRUE(sampler.sample(std::vector<float>{0.0f, 1.0f, 2.0f}).has_value());
  EXPECT_EQ(candidate_ids(sampler), (std::set<TokenId>{0, 1, 2}));
}

TEST(SamplerTopP, KeepsTheShortestPrefixReachingP) {
  struct Case {
    float top_p;
    std::set<TokenId> expected;
  };
  // Cumulative mass highest-first: 0.40, 0.70, 0.85, 0.95, 1.00; the crossing token stays.
  const Case cases[] = {{0.35f, {1}},
                        {0.5f, {1, 3}},
                        {0.75f, {1, 3, 4}},
                        {0.9f, {1, 3, 4, 2}},
                        {0.99f, {1, 3, 4, 2, 0}}};
  for (const Case& c : cases) {
    SamplingConfig config = plain(1.0f);
    config.top_p = c.top_p;
    Sampler sampler = make(config, 5);
    ASSERT_TRUE(sampler.sample(logits_of(kFiveProbabilities)).has_value());
    EXPECT_EQ(candidate_ids(sampler), c.expected) << "top_p " << c.top_p;
  }
}

TEST(SamplerMinP, KeepsTokensAtLeastMinPTimesTheTopProbability) {
  struct Case {
    float min_p;
    std::set<TokenId> expected;
  };
  // Thresholds: 0.5 * 0.40 = 0.20, 0.3 * 0.40 = 0.12, 0.2 * 0.40 = 0.08, 1.0 -> only the top.
  const Case cases[] = {{0.5f, {1, 3}}, {0.3f, {1, 3, 4}}, {0.2f, {1, 3, 4, 2}}, {1.0f, {1}}};
  for (const Case& c : cases) {
    SamplingConfig config = plain(1.0f);
    config.min_p = c.min_p;
    Sampler sampler = make(config, 5);
    ASSERT_TRUE(sampler.sample(logits_of(kFiveProbabilities)).has_value());
    EXPECT_EQ(candidate_ids(sampler), c.expected) << "min_p " << c.min_p;
  }
}

TEST(SamplerChain, TopPRenormalizesAfterTopK) {
  // top_k 4 drops id 0; the remaining mass is 0.95, so the cumulative shares are
  // 0.421, 0.737, 0.895, 1: top_p 0.72 keeps {1, 3}. Without top_k it would keep {1, 3, 4}.
  SamplingConfig config = plain(1.0f);
  config.top_k = 4;
  config.top_p = 0.72f;
  Sampler sampler = make(config, 5);
  ASSERT_TRUE(sampler.sample(logits_of(kFiveProbabilities)).has_value());
  EXPECT_EQ(candidate_ids(sampler), (std::set<TokenId>{1, 3}));
  config.top_k = 0;
  Sampler without_top_k = make(config, 5);
  ASSERT_TRUE(without_top_k.sample(logits_of(kFiveProbabilities)).has_value());
  EXPECT_EQ(candidate_ids(without_top_k), (std::set<TokenId>{1, 3, 4}));
}

TEST(SamplerChain, TopPAndMinPSeeUntemperedLogits) {
  // At temperature 2 the tempered probabilities are proportional to sqrt(p): cumulative
  // 0.30, 0.56, 0.74, 0.89, so top_p 0.75 on tempered logits would keep four tokens, and
  // min_p 0.45 would keep {1, 3, 4, 2} (sqrt ratios 0.87, 0.61, 0.5). Untempered: three and two.
  SamplingConfig config = plain(2.0f);
  config.top_p = 0.75f;
  Sampler top_p = make(config, 5);
  ASSERT_TRUE(top_p.sample(logits_of(kFiveProbabilities)).has_value());
  EXPECT_EQ(candidate_ids(top_p), (std::set<TokenId>{1, 3, 4}));
  config.top_p = 1.0f;
  config.min_p = 0.45f;
  Sampler min_p = make(config, 5);
  ASSERT_TRUE(min_p.sample(logits_of(kFiveProbabilities)).has_value());
  EXPECT_EQ(candidate_ids(min_p), (std::set<TokenId>{1, 3}));
}

TEST(SamplerChain, MinPAppliesAfterTopP) {
  // top_p 0.9 keeps {1, 3, 4, 2}; min_p 0.3 (threshold 0.12) then drops id 2 (0.10).
  SamplingConfig config = plain(1.0f);
  config.top_p = 0.9f;
  config.min_p = 0.3f;
  Sampler sampler = make(config, 5);
  ASSERT_TRUE(sampler.sample(logits_of(kFiveProbabilities)).has_value());
  EXPECT_EQ(candidate_ids(sampler), (std::set<TokenId>{1, 3, 4}));
}

TEST(SamplerPenalties, MatchHandComputedLlamaCppValues) {
  SamplingConfig config = plain(1.0f);
  config.repeat_penalty = 2.0f;
  config.frequency_penalty = 0.5f;
  config.presence_penalty = 0.25f;
  Sampler sampler = make(config, 5);
  for (TokenId t : {0, 0, 1, 3, 4})
    ASSERT_TRUE(sampler.accept(t).has_value());
  const std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, 0.0f};
  ASSERT_TRUE(sampler.sample(logits).has_value());
  // id 0 (count 2):  2 / 2 - (2 * 0.5 + 0.25) = -0.25
  // id 1 (count 1): -1 * 2 - (0.5 + 0.25)     = -2.75
  // id 2 (count 0):  unchanged                 =  0.5
  // id 3 (count 1):  3 / 2 - 0.75              =  0.75
  // id 4 (count 1):  0 * 2 - 0.75 (0 counts as non-positive: multiplied) = -0.75
  std::map<TokenId, float> got;
  for (const Candidate& c : sampler.last_candidates())
    got[c.id] = c.logit;
  const std::map<TokenId, float> expected = {
      {0, -0.25f}, {1, -2.75f}, {2, 0.5f}, {3, 0.75f}, {4, -0.75f}};
  EXPECT_EQ(got, expected);
}

TEST(SamplerPenalties, WindowForgetsTokensOlderThanN) {
  SamplingConfig config = plain(1.0f);
  config.repeat_penalty = 2.0f;
  config.penalty_window = 2;
  Sampler sampler = make(config, 3);
  for (TokenId t : {0, 1, 2})
    ASSERT_TRUE(sampler.accept(t).has_value());
  EXPECT_EQ(sampler.window_count(0), 0u);
  EXPECT_EQ(sampler.window_count(1), 1u);
  EXPECT_EQ(sampler.window_count(2), 1u);
  ASSERT_TRUE(sampler.sample(std::vector<float>{2.0f, 2.0f, 2.0f}).has_value());
  std::map<TokenId, float> got;
  for (const Candidate& c : sampler.last_candidates())
    got[c.id] = c.logit;
  EXPECT_EQ(got, (std::map<TokenId, float>{{0, 2.0f}, {1, 1.0f}, {2, 1.0f}}));
}

TEST(SamplerPenalties, WholeHistoryWindowCountsEveryToken) {
  SamplingConfig config = plain(1.0f);
  config.penalty_window = SamplingConfig::kWholeHistory;
  config.frequency_penalty = 0.01f;
  Sampler sampler = make(config, 2);
  for (int i = 0; i < 300; ++i)
    ASSERT_TRUE(sampler.accept(1).has_value());
  EXPECT_EQ(sampler.window_count(1), 300u);
  sampler.reset_history();
  EXPECT_EQ(sampler.window_count(1), 0u);
}

TEST(SamplerPenalties, ZeroWindowDisablesThem) {
  SamplingConfig config = SamplingConfig::greedy();
  config.repeat_penalty = 10.0f;
  config.penalty_window = 0;
  Sampler sampler = make(config, 2);
  ASSERT_TRUE(sampler.accept(0).has_value());
  EXPECT_EQ(sampler.sample(std::vector<float>{3.0f, 2.0f}).value(), 0);
}

TEST(SamplerPenalties, CanChangeTheGreedyChoice) {
  SamplingConfig config = SamplingConfig::greedy();
  config.repeat_penalty = 2.0f;
  Sampler sampler = make(config, 2);
  const std::vector<float> logits = {3.0f, 2.0f};
  EXPECT_EQ(sampler.sample(logits).value(), 0);
  ASSERT_TRUE(sampler.accept(0).has_value());
  EXPECT_EQ(sampler.sample(logits).value(), 1);  // 3 / 2 = 1.5 < 2
}

TEST(SamplerRejects, NaNLogitNamingItsIndex) {
  Sampler sampler = make(plain(1.0f), 4);
  const std::vector<float> logits = {0.0f, 1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  const Result<TokenId> result = sampler.sample(logits);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().subject(), "logits");
  EXPECT_NE(result.error().message().find("token 2 is NaN"), std::string::npos)
      << result.error().what();
}

TEST(SamplerRejects, NaNLogitAlsoWhenGreedy) {
  Sampler sampler = make(SamplingConfig::greedy(), 2);
  const Result<TokenId> result =
      sampler.sample(std::vector<float>{std::numeric_limits<float>::quiet_NaN(), 1.0f});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "logits");
}

TEST(SamplerRejects, PositiveInfinityLogit) {
  Sampler sampler = make(plain(1.0f), 2);
  const Result<TokenId> result =
      sampler.sample(std::vector<float>{0.0f, std::numeric_limits<float>::infinity()});
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message().find("+inf"), std::string::npos);
}

TEST(SamplerRejects, LogitsOfTheWrongLength) {
  Sampler sampler = make(plain(1.0f), 3);
  const Result<TokenId> result = sampler.sample(std::vector<float>{0.0f, 1.0f});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "logits");
  EXPECT_NE(result.error().message().find("2 logits"), std::string::npos);
}

TEST(SamplerRejects, EveryTokenMasked) {
  Sampler sampler = make(plain(1.0f), 2);
  EXPECT_FALSE(sampler.sample(std::vector<float>{kNegInf, kNegInf}).has_value());
}

TEST(SamplerRejects, AcceptingAnIdOutsideTheVocabulary) {
  Sampler sampler = make(plain(1.0f), 3);
  for (TokenId bad : {-1, 3}) {
    const Result<void> result = sampler.accept(bad);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().subject(), "token");
  }
}

TEST(SamplerRejects, InvalidConfigAndVocabularyAtCreation) {
  SamplingConfig config;
  config.top_p = 0.0f;
  const Result<Sampler> bad_config = Sampler::create(config, 10);
  ASSERT_FALSE(bad_config.has_value());
  EXPECT_EQ(bad_config.error().subject(), "top_p");
  for (std::int32_t n_vocab : {0, -5, Sampler::kMaxVocab + 1}) {
    const Result<Sampler> bad_vocab = Sampler::create(SamplingConfig{}, n_vocab);
    ASSERT_FALSE(bad_vocab.has_value());
    EXPECT_EQ(bad_vocab.error().subject(), "n_vocab");
  }
}

TEST(SamplerMasking, NeverDrawsAMaskedToken) {
  Sampler sampler = make(plain(1.0f), 4);
  const std::vector<float> logits = {0.0f, kNegInf, 0.0f, kNegInf};
  for (int i = 0; i < 2000; ++i) {
    const TokenId token = sampler.sample(logits).value();
    ASSERT_TRUE(token == 0 || token == 2) << token;
  }
}

std::vector<TokenId> draw_many(std::uint64_t seed, int count) {
  Sampler sampler = make(plain(1.0f, seed), 5);
  const std::vector<float> logits = {0.2f, 0.5f, 0.1f, 0.4f, 0.3f};
  std::vector<TokenId> tokens;
  for (int i = 0; i < count; ++i)
    tokens.push_back(sampler.sample(logits).value());
  return tokens;
}

TEST(SamplerSeed, SameSeedGivesTheSameSequence) {
  EXPECT_EQ(draw_many(7, 200), draw_many(7, 200));
}

TEST(SamplerSeed, DifferentSeedsGiveDifferentSequences) {
  EXPECT_NE(draw_many(7, 200), draw_many(8, 200));
}

TEST(SamplerSeed, ReseedRestartsTheSequence) {
  Sampler sampler = make(plain(1.0f, 7), 5);
  const std::vector<float> logits = {0.2f, 0.5f, 0.1f, 0.4f, 0.3f};
  std::vector<TokenId> tokens;
  for (int i = 0; i < 50; ++i)
    tokens.push_back(sampler.sample(logits).value());
  sampler.reseed(7);
  std::vector<TokenId> again;
  for (int i = 0; i < 50; ++i)
    again.push_back(sampler.sample(logits).value());
  EXPECT_EQ(tokens, again);
}

TEST(SamplerGolden, SeededStreamMatchesAnIndependentPythonImplementation) {
  // tests/reference/generation/sampler_golden.py: logits {0.2, 0.5, 0.1, 0.4, 0.3},
  // temperature 0.9, seed 42, no truncation.
  const std::vector<TokenId> expected = {0, 1, 3, 4, 4, 3, 3, 4, 3, 3, 3, 1,
                                         3, 1, 3, 4, 3, 4, 3, 3, 0, 1, 2, 3};
  Sampler sampler = make(plain(0.9f, 42), 5);
  const std::vector<float> logits = {0.2f, 0.5f, 0.1f, 0.4f, 0.3f};
  std::vector<TokenId> got;
  for (std::size_t i = 0; i < expected.size(); ++i)
    got.push_back(sampler.sample(logits).value());
  EXPECT_EQ(got, expected);
}

// Draws `draws` tokens and compares the frequencies with the reference softmax: Pearson's
// chi-square against the 0.999 quantile for 4 degrees of freedom (18.47), and max |diff|.
void expect_distribution_matches_softmax(float temperature, std::uint64_t seed) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  const std::vector<double> expected = reference_softmax(logits, temperature);
  Sampler sampler = make(plain(temperature, seed), 5);
  constexpr int kDraws = 20000;
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < kDraws; ++i)
    ++counts[static_cast<std::size_t>(sampler.sample(logits).value())];
  double chi_square = 0.0;
  double max_abs_diff = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const double expected_count = expected[i] * kDraws;
    chi_square += (counts[i] - expected_count) * (counts[i] - expected_count) / expected_count;
    max_abs_diff = std::max(max_abs_diff, std::abs(counts[i] / double(kDraws) - expected[i]));
  }
  EXPECT_LT(chi_square, 18.47) << "temperature " << temperature;
  EXPECT_LT(max_abs_diff, 0.012) << "temperature " << temperature;
}

TEST(SamplerDistribution, TwentyThousandDrawsAtTemperatureOneMatchSoftmax) {
  expect_distribution_matches_softmax(1.0f, 12345);
}

TEST(SamplerDistribution, TwentyThousandDrawsAtTemperatureHalfMatchSharpenedSoftmax) {
  expect_distribution_matches_softmax(0.5f, 999);
}

}  // namespace
}  // namespace eredu::generation
