// Prompt admission: empty or too-long prompts and bad token ids are rejected before compute,
// with both numbers (or the index and value) in the error.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eredu/generation/prompt_checks.hpp"

namespace eredu::generation {
namespace {

TEST(PromptChecks, EmptyPromptIsRejected) {
  const Result<void> result = validate_prompt_fits(0, 512);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().subject(), "prompt");
  EXPECT_NE(result.error().message().find("empty prompt"), std::string::npos);
  EXPECT_FALSE(validate_prompt_tokens({}, 32000, 512).has_value());
}

TEST(PromptChecks, PromptLongerThanTheContextCarriesBothNumbers) {
  const Result<void> result = validate_prompt_fits(600, 512);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message().find("n_prompt = 600"), std::string::npos);
  EXPECT_NE(result.error().message().find("n_ctx = 512"), std::string::npos);
}

TEST(PromptChecks, PromptFillingTheWholeContextLeavesNoRoomAndIsRejected) {
  EXPECT_FALSE(validate_prompt_fits(512, 512).has_value());
  EXPECT_TRUE(validate_prompt_fits(511, 512).has_value());
  EXPECT_TRUE(validate_prompt_fits(1, 2).has_value());
}

TEST(PromptChecks, NonPositiveContextIsRejected) {
  const Result<void> result = validate_prompt_fits(1, 0);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "n_ctx");
}

TEST(PromptChecks, TokenOutsideTheVocabularyIsNamedByIndexAndValue) {
  const std::vector<TokenId> prompt = {1, 5, 32000, 7};
  const Result<void> result = validate_prompt_tokens(prompt, 32000, 512);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message().find("prompt token 2 has id 32000"), std::string::npos)
      << result.error().what();
  const std::vector<TokenId> negative = {-4};
  EXPECT_NE(validate_prompt_tokens(negative, 32000, 512).error().message().find("id -4"),
            std::string::npos);
  EXPECT_TRUE(validate_prompt_tokens(std::vector<TokenId>{0, 31999}, 32000, 512).has_value());
}

TEST(PromptChecks, GenerationRoomIsTheContextLeftAfterThePrompt) {
  EXPECT_EQ(generation_room(100, 512), 412);
  EXPECT_EQ(generation_room(512, 512), 0);
  EXPECT_EQ(generation_room(600, 512), 0);
}

}  // namespace
}  // namespace eredu::generation
