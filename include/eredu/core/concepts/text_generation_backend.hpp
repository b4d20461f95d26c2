#pragma once
// TextGenerationBackend<B>: refines BackendProvider with whole "prefill, then sample" and
// "decode, then sample" submissions, so the generation driver never sees logits. The sampled
// token stays a handle (text_token): a decode consumes it directly, and the host reads its id only
// when it needs it (token_id() waits for exactly the work that produced it).
//
// Associated types:
//   text_prompt      a prepared prompt (opaque to the driver)
//   text_token       satisfies TokenOutput<text_token, error>: token_id() const ->
//                    Result<std::uint32_t, error>; move-constructible
//   text_state       the per-request sampler state (sampling configuration, penalty window, RNG)
//   text_completion  a Completion whose error_type is B::error; covers model work and sampling
// Operations (all static: they act on the runtime that owns the backend and its session):
//   B::text_limits(const runtime::ModelRuntime<B>&)            -> TextGenerationLimits
//   B::start_text_generation(const B&, const generation::SamplingConfig&)
//                                                              -> Result<text_state, error>
//   B::prepare_text_prompt(const B&, std::span<const std::uint32_t>)
//                                                              -> Result<text_prompt, error>
//   B::submit_text_prefill(runtime::ModelRuntime<B>&, text_prompt&&, text_state&)
//       -> Result<Submission<text_token, text_completion>, error>
//       Starts a new sequence: whatever the session cached before is discarded, the prompt is
//       evaluated from position 0 and the next token is sampled from its last position.
//   B::submit_text_decode(runtime::ModelRuntime<B>&, text_token&&, text_state&)
//       -> Result<Submission<text_token, text_completion>, error>
//       Appends the token to the sequence and samples the next one.
// Upstream's TokenFilter (constrained sampling) is not part of this first version.
// ModelRuntime is forward-declared (core/planning_fwd.hpp) and the sampling configuration too
// (core/text_generation.hpp); include eredu/runtime/model_runtime.hpp and
// eredu/generation/sampling_config.hpp to check a backend.

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "eredu/core/completion.hpp"
#include "eredu/core/concepts/backend_provider.hpp"
#include "eredu/core/concepts/completion.hpp"
#include "eredu/core/concepts/diagnose.hpp"
#include "eredu/core/planning_fwd.hpp"
#include "eredu/core/result.hpp"
#include "eredu/core/text_generation.hpp"

namespace eredu {

// A sampled token that may still be in flight: token_id() waits only as needed.
template <typename T, typename E>
concept TokenOutput = std::is_object_v<T> && std::move_constructible<T> && requires(const T& t) {
  { t.token_id() } -> std::same_as<Result<std::uint32_t, E>>;
};

}  // namespace eredu

namespace eredu::text_generation_backend_requirements {

template <typename B>
concept has_text_prompt = requires {
  typename B::text_prompt;
};
template <typename B>
concept has_text_token = requires {
  typename B::text_token;
};
template <typename B>
concept has_text_state = requires {
  typename B::text_state;
};
template <typename B>
concept has_text_completion = requires {
  typename B::text_completion;
};
template <typename B>
concept text_token_is_token_output = has_text_token<B> && requires {
  typename B::error;
} && TokenOutput<typename B::text_token, typename B::error>;
template <typename B>
concept text_completion_is_completion = has_text_completion<B> && requires {
  typename B::error;
} && Completion<typename B::text_completion> &&
    std::same_as<typename B::text_completion::error_type, typename B::error>;
template <typename B>
concept has_text_limits = requires(const runtime::ModelRuntime<B>& runtime) {
  { B::text_limits(runtime) } -> std::same_as<TextGenerationLimits>;
};
template <typename B>
concept has_start_text_generation = has_text_state<B> && requires {
  typename B::error;
} && requires(const B& b, const generation::SamplingConfig& config) {
  {
    B::start_text_generation(b, config)
    } -> std::same_as<Result<typename B::text_state, typename B::error>>;
};
template <typename B>
concept has_prepare_text_prompt = has_text_prompt<B> && requires {
  typename B::error;
} && requires(const B& b, std::span<const std::uint32_t> tokens) {
  {
    B::prepare_text_prompt(b, tokens)
    } -> std::same_as<Result<typename B::text_prompt, typename B::error>>;
};
template <typename B>
concept has_submit_text_prefill = has_text_prompt<B> && has_text_state<B> &&
    text_token_is_token_output<B> && text_completion_is_completion<B> &&
    requires(runtime::ModelRuntime<B>& runtime, typename B::text_prompt&& prompt,
             typename B::text_state& state) {
  {
    B::submit_text_prefill(runtime, std::move(prompt), state)
    } -> std::same_as<
        Result<Submission<typename B::text_token, typename B::text_completion>, typename B::error>>;
};
// The decode takes the token handle as an rvalue: it consumes the handle (which may still be in
// flight) rather than a host copy of its id.
template <typename B>
concept has_submit_text_decode = has_text_state<B> && text_token_is_token_output<B> &&
    text_completion_is_completion<B> &&
    requires(runtime::ModelRuntime<B>& runtime, typename B::text_token&& token,
             typename B::text_state& state) {
  {
    B::submit_text_decode(runtime, std::move(token), state)
    } -> std::same_as<
        Result<Submission<typename B::text_token, typename B::text_completion>, typename B::error>>;
};

}  // namespace eredu::text_generation_backend_requirements

// clang-format off
#define EREDU_TEXT_GENERATION_BACKEND_REQUIREMENTS(X)                                            \
  X(::eredu::BackendProvider<B>,                                                                  \
    "TextGenerationBackend: B must satisfy BackendProvider; see "                                 \
    "eredu::diagnose::backend_provider<B>()")                                                     \
  X(::eredu::text_generation_backend_requirements::has_text_prompt<B>,                            \
    "TextGenerationBackend: missing associated type text_prompt")                                 \
  X(::eredu::text_generation_backend_requirements::has_text_token<B>,                             \
    "TextGenerationBackend: missing associated type text_token")                                  \
  X(::eredu::text_generation_backend_requirements::has_text_state<B>,                             \
    "TextGenerationBackend: missing associated type text_state")                                  \
  X(::eredu::text_generation_backend_requirements::has_text_completion<B>,                        \
    "TextGenerationBackend: missing associated type text_completion")                             \
  X(::eredu::text_generation_backend_requirements::text_token_is_token_output<B>,                 \
    "TextGenerationBackend: text_token must be a movable object with "                            \
    "token_id() const -> Result<std::uint32_t, error>")                                           \
  X(::eredu::text_generation_backend_requirements::text_completion_is_completion<B>,              \
    "TextGenerationBackend: text_completion must satisfy Completion with error_type == error; "   \
    "see eredu::diagnose::completion<text_completion>()")                                         \
  X(::eredu::text_generation_backend_requirements::has_text_limits<B>,                            \
    "TextGenerationBackend: missing static text_limits(const runtime::ModelRuntime<B>&) -> "      \
    "TextGenerationLimits")                                                                       \
  X(::eredu::text_generation_backend_requirements::has_start_text_generation<B>,                  \
    "TextGenerationBackend: missing static start_text_generation(const B&, "                      \
    "const generation::SamplingConfig&) -> Result<text_state, error>")                            \
  X(::eredu::text_generation_backend_requirements::has_prepare_text_prompt<B>,                    \
    "TextGenerationBackend: missing static prepare_text_prompt(const B&, "                        \
    "std::span<const std::uint32_t>) -> Result<text_prompt, error>")                              \
  X(::eredu::text_generation_backend_requirements::has_submit_text_prefill<B>,                    \
    "TextGenerationBackend: missing static submit_text_prefill(runtime::ModelRuntime<B>&, "       \
    "text_prompt&&, text_state&) -> Result<Submission<text_token, text_completion>, error>")      \
  X(::eredu::text_generation_backend_requirements::has_submit_text_decode<B>,                     \
    "TextGenerationBackend: missing static submit_text_decode(runtime::ModelRuntime<B>&, "        \
    "text_token&&, text_state&) -> Result<Submission<text_token, text_completion>, error>")
// clang-format on

namespace eredu {

template <typename B>
concept TextGenerationBackend =
    true EREDU_TEXT_GENERATION_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_CONJUNCTION);

namespace diagnose {
template <typename B>
constexpr std::string_view text_generation_backend_unmet() noexcept {
  EREDU_TEXT_GENERATION_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_FIRST_UNMET)
  return {};
}
template <typename B>
consteval bool text_generation_backend() {
  using diagnosed_type [[maybe_unused]] = B;
  EREDU_TEXT_GENERATION_BACKEND_REQUIREMENTS(EREDU_DETAIL_REQUIREMENT_ASSERT)
  return true;
}
}  // namespace diagnose

}  // namespace eredu
