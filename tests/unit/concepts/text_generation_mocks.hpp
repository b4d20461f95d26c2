#pragma once
// Mock backends for the TextGenerationBackend concept tests. MockTextBackend<kNone> is the
// complete BackendProvider mock (mocks.hpp) plus the text-generation associated types and static
// operations; every other defect removes exactly one of them or gives it a wrong signature.
// Operations are declared only: concept checks are unevaluated.

#include <cstdint>
#include <span>
#include <vector>

#include "eredu/core/completion.hpp"
#include "eredu/core/concepts/text_generation_backend.hpp"
#include "eredu/core/text_generation.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/runtime/model_runtime.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {

enum class TextDefect {
  kNone,
  kNotBackendProvider,
  kNoTextPrompt,
  kNoTextToken,
  kNoTextState,
  kNoTextCompletion,
  kTokenIdReturnsBareId,
  kTokenNotMovable,
  kCompletionCopyable,
  kCompletionErrorDiffers,
  kNoTextLimits,
  kNoStartTextGeneration,
  kStartTextGenerationNotStatic,
  kNoPrepareTextPrompt,
  kPrepareTextPromptTakesVector,
  kNoSubmitTextPrefill,
  kSubmitTextPrefillReturnsBareToken,
  kNoSubmitTextDecode,
  kSubmitTextDecodeTakesTokenId,
};

struct MockTextPrompt {
  std::vector<std::uint32_t> tokens;
};
struct MockTextState {
  std::uint64_t seed = 0;
};

// A sampled token; the defects change how its id is read or whether it moves.
template <TextDefect TD>
struct MockTextToken {
  std::uint32_t id = 0;
  Result<std::uint32_t, MockError> token_id() const
      requires(TD != TextDefect::kTokenIdReturnsBareId) {
    return id;
  }
  std::uint32_t token_id() const requires(TD == TextDefect::kTokenIdReturnsBareId);
};
struct ImmovableTextToken : Immovable {
  Result<std::uint32_t, MockError> token_id() const;
};

#define EREDU_TEST_OPTIONAL_ALIAS_TEXT(name) \
  template <bool Present, typename T>        \
  struct optional_##name {};                 \
  template <typename T>                      \
  struct optional_##name<true, T> {          \
    using name = T;                          \
  };

EREDU_TEST_OPTIONAL_ALIAS_TEXT(text_prompt)
EREDU_TEST_OPTIONAL_ALIAS_TEXT(text_token)
EREDU_TEST_OPTIONAL_ALIAS_TEXT(text_state)
EREDU_TEST_OPTIONAL_ALIAS_TEXT(text_completion)

#undef EREDU_TEST_OPTIONAL_ALIAS_TEXT

template <TextDefect TD>
using text_token_for =
    std::conditional_t<TD == TextDefect::kTokenNotMovable, ImmovableTextToken, MockTextToken<TD>>;
template <TextDefect TD>
using text_completion_for =
    std::conditional_t<TD == TextDefect::kCompletionCopyable,
                       MockCompletion<CompletionDefect::kCopyable, MockError>,
                       std::conditional_t<TD == TextDefect::kCompletionErrorDiffers,
                                          MockCompletion<CompletionDefect::kNone, OtherError>,
                                          MockCompletion<CompletionDefect::kNone, MockError>>>;
template <TextDefect TD>
using text_base_for = std::conditional_t<TD == TextDefect::kNotBackendProvider,
                                         MockBackend<Defect::kNoDevices>, CompleteMockBackend>;

template <TextDefect TD>
class MockTextBackend
    : public text_base_for<TD>,
      public optional_text_prompt<TD != TextDefect::kNoTextPrompt, MockTextPrompt>,
      public optional_text_token<TD != TextDefect::kNoTextToken, text_token_for<TD>>,
      public optional_text_state<TD != TextDefect::kNoTextState, MockTextState>,
      public optional_text_completion<TD != TextDefect::kNoTextCompletion,
                                      text_completion_for<TD>> {
  using Token = text_token_for<TD>;
  using Runtime = runtime::ModelRuntime<MockTextBackend>;
  // Always the good completion: Submission<T, C> cannot even be named with a copyable C, and the
  // completion defects are reported before the submissions are looked at.
  using TokenSubmission =
      Result<Submission<Token, MockCompletion<CompletionDefect::kNone, MockError>>, MockError>;

 public:
  static TextGenerationLimits text_limits(const Runtime& runtime) requires(
      TD != TextDefect::kNoTextLimits);

  static Result<MockTextState, MockError> start_text_generation(
      const MockTextBackend& backend,
      const generation::SamplingConfig&
          config) requires(TD != TextDefect::kNoStartTextGeneration &&
                           TD != TextDefect::kStartTextGenerationNotStatic);
  Result<MockTextState, MockError> start_text_generation(
      const MockTextBackend& backend, const generation::SamplingConfig& config) const
      requires(TD == TextDefect::kStartTextGenerationNotStatic);

  static Result<MockTextPrompt, MockError> prepare_text_prompt(
      const MockTextBackend& backend,
      std::span<const std::uint32_t>
          tokens) requires(TD != TextDefect::kNoPrepareTextPrompt &&
                           TD != TextDefect::kPrepareTextPromptTakesVector);
  static Result<MockTextPrompt, MockError> prepare_text_prompt(
      const MockTextBackend& backend,
      std::vector<std::uint32_t>& tokens) requires(TD == TextDefect::kPrepareTextPromptTakesVector);

  static TokenSubmission submit_text_prefill(
      Runtime& runtime, MockTextPrompt&& prompt,
      MockTextState& state) requires(TD != TextDefect::kNoSubmitTextPrefill &&
                                     TD != TextDefect::kSubmitTextPrefillReturnsBareToken);
  static Result<Token, MockError> submit_text_prefill(
      Runtime& runtime, MockTextPrompt&& prompt,
      MockTextState& state) requires(TD == TextDefect::kSubmitTextPrefillReturnsBareToken);

  static TokenSubmission submit_text_decode(
      Runtime& runtime, Token&& token,
      MockTextState& state) requires(TD != TextDefect::kNoSubmitTextDecode &&
                                     TD != TextDefect::kSubmitTextDecodeTakesTokenId);
  static TokenSubmission submit_text_decode(
      Runtime& runtime, std::uint32_t& token,
      MockTextState& state) requires(TD == TextDefect::kSubmitTextDecodeTakesTokenId);
};

}  // namespace eredu::concept_tests
