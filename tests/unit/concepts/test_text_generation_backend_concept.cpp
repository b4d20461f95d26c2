// TextGenerationBackend: the complete mock is accepted; each requirement is enforced. One TEST per
// requirement, each with a mock (text_generation_mocks.hpp) that misses just that one; every
// rejection is proven at compile time and as a counted test that checks the diagnoser names
// exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "text_generation_mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(TextGenerationBackendConcept, AcceptsCompleteMockBackend) {
  using T = MockTextBackend<TextDefect::kNone>;
  static_assert(TextGenerationBackend<T>);
  static_assert(diagnose::text_generation_backend<T>());
  static_assert(TokenOutput<T::text_token, MockError>);
  EXPECT_TRUE(TextGenerationBackend<T>);
  EXPECT_TRUE(diagnose::text_generation_backend_unmet<T>().empty());
}

TEST(TextGenerationBackendConcept, ItsTokenHandleReportsTheSampledId) {
  const MockTextToken<TextDefect::kNone> token{42};
  const Result<std::uint32_t, MockError> id = token.token_id();
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(*id, 42u);
}

#define EREDU_TEXT_REJECTS(test_name, defect, prefix)                         \
  TEST(TextGenerationBackendConcept, test_name) {                             \
    using T = MockTextBackend<TextDefect::defect>;                            \
    static_assert(!TextGenerationBackend<T>);                                 \
    EXPECT_FALSE(TextGenerationBackend<T>);                                   \
    expect_first_unmet(diagnose::text_generation_backend_unmet<T>(), prefix); \
  }

EREDU_TEXT_REJECTS(RejectsABackendThatIsNotABackendProvider, kNotBackendProvider,
                   "TextGenerationBackend: B must satisfy BackendProvider")
EREDU_TEXT_REJECTS(RejectsABackendWithoutTextPrompt, kNoTextPrompt,
                   "TextGenerationBackend: missing associated type text_prompt")
EREDU_TEXT_REJECTS(RejectsABackendWithoutTextToken, kNoTextToken,
                   "TextGenerationBackend: missing associated type text_token")
EREDU_TEXT_REJECTS(RejectsABackendWithoutTextState, kNoTextState,
                   "TextGenerationBackend: missing associated type text_state")
EREDU_TEXT_REJECTS(RejectsABackendWithoutTextCompletion, kNoTextCompletion,
                   "TextGenerationBackend: missing associated type text_completion")
EREDU_TEXT_REJECTS(RejectsATokenWhoseIdIsNotAResult, kTokenIdReturnsBareId,
                   "TextGenerationBackend: text_token must be a movable object with token_id()")
EREDU_TEXT_REJECTS(RejectsAnImmovableToken, kTokenNotMovable,
                   "TextGenerationBackend: text_token must be a movable object with token_id()")
EREDU_TEXT_REJECTS(RejectsACopyableCompletion, kCompletionCopyable,
                   "TextGenerationBackend: text_completion must satisfy Completion")
EREDU_TEXT_REJECTS(RejectsACompletionWithAnotherErrorType, kCompletionErrorDiffers,
                   "TextGenerationBackend: text_completion must satisfy Completion")
EREDU_TEXT_REJECTS(RejectsABackendWithoutTextLimits, kNoTextLimits,
                   "TextGenerationBackend: missing static text_limits(")
EREDU_TEXT_REJECTS(RejectsABackendWithoutStartTextGeneration, kNoStartTextGeneration,
                   "TextGenerationBackend: missing static start_text_generation(")
EREDU_TEXT_REJECTS(RejectsANonStaticStartTextGeneration, kStartTextGenerationNotStatic,
                   "TextGenerationBackend: missing static start_text_generation(")
EREDU_TEXT_REJECTS(RejectsABackendWithoutPrepareTextPrompt, kNoPrepareTextPrompt,
                   "TextGenerationBackend: missing static prepare_text_prompt(")
EREDU_TEXT_REJECTS(RejectsAPreparePromptThatTakesAMutableVector, kPrepareTextPromptTakesVector,
                   "TextGenerationBackend: missing static prepare_text_prompt(")
EREDU_TEXT_REJECTS(RejectsABackendWithoutSubmitTextPrefill, kNoSubmitTextPrefill,
                   "TextGenerationBackend: missing static submit_text_prefill(")
EREDU_TEXT_REJECTS(RejectsAPrefillThatReturnsNoCompletion, kSubmitTextPrefillReturnsBareToken,
                   "TextGenerationBackend: missing static submit_text_prefill(")
EREDU_TEXT_REJECTS(RejectsABackendWithoutSubmitTextDecode, kNoSubmitTextDecode,
                   "TextGenerationBackend: missing static submit_text_decode(")
EREDU_TEXT_REJECTS(RejectsADecodeThatTakesAHostTokenIdInsteadOfTheHandle,
                   kSubmitTextDecodeTakesTokenId,
                   "TextGenerationBackend: missing static submit_text_decode(")

#undef EREDU_TEXT_REJECTS

}  // namespace
}  // namespace eredu::concept_tests
