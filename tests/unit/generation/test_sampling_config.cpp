// SamplingConfig::validate(): every invalid parameter is rejected with kInvalidArgument and an
// error whose subject names that parameter; documented boundary values are accepted.

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "eredu/generation/sampling_config.hpp"

namespace eredu::generation {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Expects `config` to be rejected for `parameter`, with the parameter also in the message.
void expect_rejected(const SamplingConfig& config, const std::string& parameter) {
  const Result<void> result = config.validate();
  ASSERT_FALSE(result.has_value()) << parameter << " should have been rejected";
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().subject(), parameter);
  EXPECT_NE(result.error().what().find(parameter), std::string::npos) << result.error().what();
}

SamplingConfig with(void (*edit)(SamplingConfig&)) {
  SamplingConfig config;
  edit(config);
  return config;
}

TEST(SamplingConfig, DefaultsAndGreedyPresetAreValid) {
  EXPECT_TRUE(SamplingConfig{}.validate().has_value());
  const SamplingConfig greedy = SamplingConfig::greedy();
  EXPECT_TRUE(greedy.validate().has_value());
  EXPECT_TRUE(greedy.is_greedy());
  EXPECT_FALSE(SamplingConfig{}.is_greedy());
}

TEST(SamplingConfig, BoundaryValuesAreAccepted) {
  SamplingConfig config;
  config.temperature = 0.0f;
  config.top_k = 0;
  config.top_p = 1.0f;
  config.min_p = 0.0f;
  config.penalty_window = SamplingConfig::kWholeHistory;
  config.frequency_penalty = -2.0f;
  config.presence_penalty = -2.0f;
  EXPECT_TRUE(config.validate().has_value());
  config.temperature = SamplingConfig::kMaxTemperature;
  config.min_p = 1.0f;
  config.top_p = 1e-6f;
  config.penalty_window = SamplingConfig::kMaxPenaltyWindow;
  config.repeat_penalty = 1e-3f;
  EXPECT_TRUE(config.validate().has_value());
}

TEST(SamplingConfigRejects, NaNTemperature) {
  expect_rejected(with([](SamplingConfig& c) { c.temperature = kNaN; }), "temperature");
}
TEST(SamplingConfigRejects, NegativeTemperature) {
  expect_rejected(with([](SamplingConfig& c) { c.temperature = -0.1f; }), "temperature");
}
TEST(SamplingConfigRejects, InfiniteTemperature) {
  expect_rejected(with([](SamplingConfig& c) { c.temperature = kInf; }), "temperature");
}
TEST(SamplingConfigRejects, HugeTemperature) {
  expect_rejected(with([](SamplingConfig& c) { c.temperature = 1e6f; }), "temperature");
}
TEST(SamplingConfigRejects, NegativeTopK) {
  expect_rejected(with([](SamplingConfig& c) { c.top_k = -1; }), "top_k");
}
TEST(SamplingConfigRejects, TopPOfZero) {
  expect_rejected(with([](SamplingConfig& c) { c.top_p = 0.0f; }), "top_p");
}
TEST(SamplingConfigRejects, TopPAboveOne) {
  expect_rejected(with([](SamplingConfig& c) { c.top_p = 1.01f; }), "top_p");
}
TEST(SamplingConfigRejects, NaNTopP) {
  expect_rejected(with([](SamplingConfig& c) { c.top_p = kNaN; }), "top_p");
}
TEST(SamplingConfigRejects, NegativeMinP) {
  expect_rejected(with([](SamplingConfig& c) { c.min_p = -0.01f; }), "min_p");
}
TEST(SamplingConfigRejects, MinPAboveOne) {
  expect_rejected(with([](SamplingConfig& c) { c.min_p = 1.5f; }), "min_p");
}
TEST(SamplingConfigRejects, NaNMinP) {
  expect_rejected(with([](SamplingConfig& c) { c.min_p = kNaN; }), "min_p");
}
TEST(SamplingConfigRejects, ZeroRepeatPenalty) {
  expect_rejected(with([](SamplingConfig& c) { c.repeat_penalty = 0.0f; }), "repeat_penalty");
}
TEST(SamplingConfigRejects, NegativeRepeatPenalty) {
  expect_rejected(with([](SamplingConfig& c) { c.repeat_penalty = -1.1f; }), "repeat_penalty");
}
TEST(SamplingConfigRejects, NaNRepeatPenalty) {
  expect_rejected(with([](SamplingConfig& c) { c.repeat_penalty = kNaN; }), "repeat_penalty");
}
TEST(SamplingConfigRejects, InfiniteRepeatPenalty) {
  expect_rejected(with([](SamplingConfig& c) { c.repeat_penalty = kInf; }), "repeat_penalty");
}
TEST(SamplingConfigRejects, NaNFrequencyPenalty) {
  expect_rejected(with([](SamplingConfig& c) { c.frequency_penalty = kNaN; }), "frequency_penalty");
}
TEST(SamplingConfigRejects, InfinitePresencePenalty) {
  expect_rejected(with([](SamplingConfig& c) { c.presence_penalty = -kInf; }), "presence_penalty");
}
TEST(SamplingConfigRejects, PenaltyWindowBelowMinusOne) {
  expect_rejected(with([](SamplingConfig& c) { c.penalty_window = -2; }), "penalty_window");
}
TEST(SamplingConfigRejects, PenaltyWindowAboveLimit) {
  expect_rejected(
      with([](SamplingConfig& c) { c.penalty_window = SamplingConfig::kMaxPenaltyWindow + 1; }),
      "penalty_window");
}

}  // namespace
}  // namespace eredu::generation
