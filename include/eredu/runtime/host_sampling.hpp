#pragma once
// HostSamplingTextGeneration<B, Completion>: the TextGenerationBackend operations of a backend
// whose sampler runs on the host, written once. A backend inherits it (its static members and
// associated types are then B's own) and provides only what every session already has:
//   session().n_vocab(), session().max_positions(), session().checkpoint(),
//   session_mut().truncate(p), prefill(tokens), decode(token), observe_output(output)
//   -> Result<std::vector<float>> (the last position's logits).
// `Completion` is the backend's born-complete completion type (observe_output has waited).
//
// Prefill starts a new sequence at position 0; `submit_text_continuation` keeps the first
// `cached_positions` of the session's cache (the caller proves they hold the prompt's first
// tokens, as a chat that re-renders its conversation does) and evaluates only the rest.
//
// The sampler lives behind HostSamplingState's pointer, so a backend header that inherits this
// never includes the generation layer.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "eredu/core/completion.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/result.hpp"
#include "eredu/core/text_generation.hpp"

namespace eredu::runtime {

struct HostTextPrompt {
  std::vector<std::uint32_t> tokens;
};

// The sampled token: the host already holds its id.
struct HostTextToken {
  std::uint32_t id = 0;
  [[nodiscard]] Result<std::uint32_t> token_id() const { return id; }
};

struct HostSampler;  // generation::Sampler and its configuration (host_sampling.cpp)

// One request's sampler: created on the first prefill, when the vocabulary size is known.
class HostSamplingState {
 public:
  [[nodiscard]] static Result<HostSamplingState> create(const generation::SamplingConfig& config);
  HostSamplingState(HostSamplingState&&) noexcept;
  HostSamplingState& operator=(HostSamplingState&&) noexcept;
  HostSamplingState(const HostSamplingState&) = delete;
  HostSamplingState& operator=(const HostSamplingState&) = delete;
  ~HostSamplingState();

  // A new sequence: the penalty window forgets the last request and takes the whole prompt (it
  // counts towards the repetition penalty, as in llama.cpp's CLI), cached part included.
  [[nodiscard]] Result<void> begin_sequence(std::uint32_t n_vocab,
                                            std::span<const std::uint32_t> prompt);
  // Samples the next token from one position's logits and records it in the penalty window.
  [[nodiscard]] Result<std::uint32_t> sample_and_accept(std::span<const float> logits);
  [[nodiscard]] bool started() const noexcept;

 private:
  explicit HostSamplingState(std::unique_ptr<HostSampler> sampler);
  std::unique_ptr<HostSampler> sampler_;
};

template <typename B, typename Completion>
class HostSamplingTextGeneration {
 public:
  using text_prompt = HostTextPrompt;
  using text_token = HostTextToken;
  using text_state = HostSamplingState;
  using text_completion = Completion;
  using token_submission = Submission<HostTextToken, Completion>;

  [[nodiscard]] static TextGenerationLimits text_limits(const ModelRuntime<B>& runtime) {
    return TextGenerationLimits{runtime.session().max_positions(), runtime.session().n_vocab(), {}};
  }

  [[nodiscard]] static Result<HostSamplingState> start_text_generation(
      const B& /*backend*/, const generation::SamplingConfig& config) {
    return HostSamplingState::create(config);
  }

  [[nodiscard]] static Result<HostTextPrompt> prepare_text_prompt(
      const B& /*backend*/, std::span<const std::uint32_t> tokens) {
    if (tokens.empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "empty prompt").with_subject("prompt"));
    }
    return HostTextPrompt{std::vector<std::uint32_t>(tokens.begin(), tokens.end())};
  }

  [[nodiscard]] static Result<token_submission> submit_text_prefill(ModelRuntime<B>& runtime,
                                                                    HostTextPrompt&& prompt,
                                                                    HostSamplingState& state) {
    return submit_text_continuation(runtime, std::move(prompt), 0, state);
  }

  // The prompt's first `cached_positions` tokens are already in the session's cache; at least one
  // token is evaluated so that there are logits to sample from.
  [[nodiscard]] static Result<token_submission> submit_text_continuation(
      ModelRuntime<B>& runtime, HostTextPrompt&& prompt, std::uint32_t cached_positions,
      HostSamplingState& state) {
    if (cached_positions >= prompt.tokens.size()) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        std::to_string(cached_positions) + " cached positions leave nothing of a " +
                            std::to_string(prompt.tokens.size()) + "-token prompt to evaluate")
                      .with_subject("prompt"));
    }
    if (cached_positions > runtime.session().checkpoint()) {
      return fail(
          Error(ErrorCode::kInvalidArgument, "cannot keep " + std::to_string(cached_positions) +
                                                 " cached positions: the session holds " +
                                                 std::to_string(runtime.session().checkpoint()))
              .with_subject("prompt"));
    }
    EREDU_TRY_VOID(state.begin_sequence(runtime.session().n_vocab(), prompt.tokens));
    EREDU_TRY_VOID(runtime.session_mut().truncate(cached_positions));
    std::vector<std::uint32_t> rest(prompt.tokens.begin() + cached_positions, prompt.tokens.end());
    EREDU_TRY(auto submission, runtime.prefill(std::move(rest)));
    return sample(runtime, submission.output, state);
  }

  [[nodiscard]] static Result<token_submission> submit_text_decode(ModelRuntime<B>& runtime,
                                                                   HostTextToken&& token,
                                                                   HostSamplingState& state) {
    if (!state.started()) {
      return fail(ErrorCode::kInvalidArgument, "decode before the prompt was prefilled");
    }
    EREDU_TRY(auto submission, runtime.decode(std::uint32_t{token.id}));
    return sample(runtime, submission.output, state);
  }

 private:
  template <typename Output>
  static Result<token_submission> sample(const ModelRuntime<B>& runtime, const Output& output,
                                         HostSamplingState& state) {
    EREDU_TRY(const std::vector<float> logits, runtime.observe_output(output));
    if (logits.empty()) return fail(ErrorCode::kInternal, "the forward pass returned no logits");
    EREDU_TRY(const std::uint32_t token, state.sample_and_accept(logits));
    return token_submission{HostTextToken{token}, Completion{}};
  }
};

}  // namespace eredu::runtime
