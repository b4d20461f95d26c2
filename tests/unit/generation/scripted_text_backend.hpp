#pragma once
// A functional TextGenerationBackend for the driver tests: the complete mock BackendProvider
// (concepts/mocks.hpp) plus a toy "model" whose next token is a fixed function of the last token
// and its position, so tests can compute the expected stream with a plain loop. Static counters
// record every submission, so a test can prove that a rejected request ran no compute.

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "../concepts/mocks.hpp"
#include "eredu/core/completion.hpp"
#include "eredu/core/concepts/text_generation_backend.hpp"
#include "eredu/core/text_generation.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::generation_tests {

using concept_tests::CompleteMockBackend;
using concept_tests::MockError;

inline constexpr std::uint32_t kScriptedVocab = 32;
inline constexpr std::uint32_t kScriptedEos = 2;

// The toy model: the token after `last` at position `position` (never 0, 1 or EOS).
constexpr std::uint32_t scripted_next(std::uint32_t last, std::uint32_t position) {
  return (last * 7 + position) % (kScriptedVocab - 3) + 3;
}

class ScriptedTextBackend : public CompleteMockBackend {
 public:
  struct text_prompt {
    std::vector<std::uint32_t> tokens;
  };
  struct text_token {
    std::uint32_t id = 0;
    Result<std::uint32_t, MockError> token_id() const { return id; }
  };
  struct text_state {
    std::uint32_t position = 0;  // cached positions of the current sequence
  };
  using text_completion =
      concept_tests::MockCompletion<concept_tests::CompletionDefect::kNone, MockError>;
  using submission = Submission<text_token, text_completion>;

  // Knobs and counters (tests reset them).
  static inline std::uint32_t context_length = 64;
  static inline std::int64_t eos_at_position = -1;  // emit EOS when sampling at this position
  static inline std::atomic<int> submissions{0};

  static TextGenerationLimits text_limits(const runtime::ModelRuntime<ScriptedTextBackend>&) {
    return TextGenerationLimits{context_length, kScriptedVocab, {kScriptedEos}};
  }
  static Result<text_state, MockError> start_text_generation(const ScriptedTextBackend&,
                                                             const generation::SamplingConfig&) {
    return text_state{};
  }
  static Result<text_prompt, MockError> prepare_text_prompt(const ScriptedTextBackend&,
                                                            std::span<const std::uint32_t> ids) {
    return text_prompt{std::vector<std::uint32_t>(ids.begin(), ids.end())};
  }
  static Result<submission, MockError> submit_text_prefill(
      runtime::ModelRuntime<ScriptedTextBackend>&, text_prompt&& prompt, text_state& state) {
    ++submissions;
    state.position = static_cast<std::uint32_t>(prompt.tokens.size());
    return sample(prompt.tokens.back(), state);
  }
  static Result<submission, MockError> submit_text_decode(
      runtime::ModelRuntime<ScriptedTextBackend>&, text_token&& token, text_state& state) {
    ++submissions;
    if (state.position >= context_length) {
      return Unexpected<MockError>(MockError("decode past the end of the context"));
    }
    state.position += 1;
    return sample(token.id, state);
  }

 private:
  static Result<submission, MockError> sample(std::uint32_t last, const text_state& state) {
    const std::uint32_t next = static_cast<std::int64_t>(state.position) == eos_at_position
                                   ? kScriptedEos
                                   : scripted_next(last, state.position);
    return submission{text_token{next}, text_completion{}};
  }
};

static_assert(diagnose::text_generation_backend<ScriptedTextBackend>());

}  // namespace eredu::generation_tests
