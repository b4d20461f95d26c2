#pragma once
// TextGeneration<B>: the backend-generic driver of one text generation request on a
// TextGenerationBackend: prompt -> prefill-and-sample -> decode-and-sample ... with the terminal
// policy of GenerationSequence (stop string > EOS > max tokens > context full, cancellation).
//
// Everything is checked before any compute: the sampling parameters (errors name the parameter),
// the prompt (empty, an id outside the vocabulary, or too long for the context: errors carry the
// index and value, or n_prompt and n_ctx), and the sequence options. The sampled token stays the
// backend's handle: each decode consumes the previous token's handle; the host reads its id only
// to detokenize and to apply the terminal policy.
//
// The detokenizer is a callable (generation never depends on text/):
//   piece_of(TokenId) -> Result<std::string>   the bytes the token contributes
//   on_text(std::string_view)                  streamed, well-formed UTF-8, never empty
// A callable that throws ends the request with kInternal; nothing escapes.
//
// Each request starts a new sequence on the session (submit_text_prefill discards the cache), so
// after a cancelled or failed request the runtime serves the next one normally; a request with
// `cached_prefix` instead keeps that many cached positions (submit_text_continuation) and
// evaluates the rest of its prompt. After a request the cache holds its prompt and every
// generated token but the last (which was sampled, never evaluated).

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/core/concepts/text_generation_backend.hpp"
#include "eredu/core/result.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/generation_sequence.hpp"
#include "eredu/generation/prompt_checks.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/generation/token.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::generation {

struct TextGenerationRequest {
  std::vector<TokenId> prompt{};  // token ids, BOS included when the model wants one
  SamplingConfig sampling = SamplingConfig::greedy();
  std::vector<std::string> stop_strings{};
  // End-of-generation ids besides those the backend reports (e.g. the tokenizer's EOS and EOT).
  std::vector<TokenId> eos_ids{};
  bool ignore_eos = false;  // keep generating past EOS ids
  std::int64_t max_tokens =
      SequenceOptions::kUnlimited;  // 0 = none, -1 = until the context is full
  // How many of the prompt's first tokens the session's cache already holds, at the same
  // positions, from the previous request (a chat turn that extends its conversation): only the
  // rest is evaluated. 0 starts a new sequence. The caller vouches for the cached tokens; on a
  // backend without submit_text_continuation the whole prompt is evaluated again.
  std::uint32_t cached_prefix = 0;
};

// A backend that can keep a prefix of its session's cache and evaluate only the rest of a prompt.
template <typename B>
concept ContinuesTextPrefill = TextGenerationBackend<B> &&
    requires(runtime::ModelRuntime<B>& runtime, typename B::text_prompt&& prompt,
             std::uint32_t cached, typename B::text_state& state) {
  {
    B::submit_text_continuation(runtime, std::move(prompt), cached, state)
    } -> std::same_as<
        Result<Submission<typename B::text_token, typename B::text_completion>, typename B::error>>;
};

struct TextGenerationTimings {
  double prompt_seconds = 0.0;      // prefill of the prompt and the first sample
  double generation_seconds = 0.0;  // every decode-and-sample after that
  std::int64_t decoded_tokens = 0;  // decodes run (the generated tokens after the first)

  [[nodiscard]] double prompt_tokens_per_second(std::int64_t prompt_tokens) const noexcept {
    return prompt_seconds > 0.0 ? static_cast<double>(prompt_tokens) / prompt_seconds : 0.0;
  }
  [[nodiscard]] double generation_tokens_per_second() const noexcept {
    return generation_seconds > 0.0 ? static_cast<double>(decoded_tokens) / generation_seconds
                                    : 0.0;
  }
};

struct TextGenerationResult {
  FinishReason finish_reason = FinishReason::kMaxTokens;
  std::int64_t prompt_tokens = 0;
  std::vector<TokenId> tokens;  // every committed token, in order (EOS included when committed)
  std::string text;             // everything streamed to on_text
  TextGenerationTimings timings;
};

namespace detail {
template <typename E>
Error to_error(E&& error) {
  if constexpr (std::same_as<std::remove_cvref_t<E>, Error>) {
    return std::forward<E>(error);
  } else {
    return Error(ErrorCode::kBackend, error.what());
  }
}
}  // namespace detail

// Checks `request` against `limits` (sampling parameters, prompt, cached_prefix, sequence
// options) and builds its terminal policy; no compute is done. Every driver of a request
// (TextGeneration, SpeculativeGeneration) starts here, so they finish alike.
[[nodiscard]] inline Result<GenerationSequence> make_request_sequence(
    const TextGenerationRequest& request, const TextGenerationLimits& limits) {
  EREDU_TRY_VOID(request.sampling.validate());
  const auto n_vocab = static_cast<std::int32_t>(
      std::min<std::uint32_t>(limits.vocab_size, static_cast<std::uint32_t>(INT32_MAX)));
  const auto n_prompt = static_cast<std::int64_t>(request.prompt.size());
  EREDU_TRY_VOID(validate_prompt_tokens(request.prompt, n_vocab, limits.context_length));
  if (request.cached_prefix >= request.prompt.size() && request.cached_prefix != 0) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "cached_prefix " + std::to_string(request.cached_prefix) +
                          " must be shorter than the prompt (" +
                          std::to_string(request.prompt.size()) + " tokens)")
                    .with_subject("cached_prefix"));
  }
  SequenceOptions options;
  options.stop_strings = request.stop_strings;
  if (!request.ignore_eos) {
    for (const std::uint32_t id : limits.end_of_generation_ids) {
      options.eos_ids.push_back(static_cast<TokenId>(id));
    }
    for (const TokenId id : request.eos_ids) {
      if (std::find(options.eos_ids.begin(), options.eos_ids.end(), id) == options.eos_ids.end()) {
        options.eos_ids.push_back(id);
      }
    }
  }
  options.max_tokens = request.max_tokens;
  options.context_room = generation_room(n_prompt, limits.context_length);
  options.n_vocab = n_vocab;
  return GenerationSequence::create(std::move(options));
}

template <TextGenerationBackend B>
class TextGeneration {
 public:
  using runtime_type = runtime::ModelRuntime<B>;

  // Validates the request against the runtime's limits; no compute is done.
  [[nodiscard]] static Result<TextGeneration> create(runtime_type& runtime,
                                                     TextGenerationRequest request) {
    EREDU_TRY(GenerationSequence sequence, make_request_sequence(request, B::text_limits(runtime)));
    return TextGeneration(runtime, std::move(request), std::move(sequence));
  }

  // Runs the request to its finish. Call once.
  template <typename PieceOf, typename OnText>
  [[nodiscard]] Result<TextGenerationResult> run(const CancellationToken& cancel,
                                                 PieceOf&& piece_of, OnText&& on_text) {
    if (ran_) return fail(ErrorCode::kInvalidArgument, "a TextGeneration runs only once");
    ran_ = true;
    try {
      return run_unguarded(cancel, piece_of, on_text);
    } catch (const std::exception& e) {
      return fail(ErrorCode::kInternal, std::string("text generation callback threw: ") + e.what());
    } catch (...) {
      return fail(ErrorCode::kInternal, "text generation callback threw a non-standard exception");
    }
  }

 private:
  using clock = std::chrono::steady_clock;
  using token_submission =
      Result<Submission<typename B::text_token, typename B::text_completion>, typename B::error>;

  TextGeneration(runtime_type& runtime, TextGenerationRequest request, GenerationSequence sequence)
      : runtime_(&runtime), request_(std::move(request)), sequence_(std::move(sequence)) {}

  template <typename OnText>
  static void emit(TextGenerationResult& result, OnText& on_text, const std::string& text) {
    if (text.empty()) return;
    result.text += text;
    on_text(std::string_view(text));
  }

  template <typename PieceOf, typename OnText>
  Result<TextGenerationResult> run_unguarded(const CancellationToken& cancel, PieceOf& piece_of,
                                             OnText& on_text) {
    TextGenerationResult result;
    result.prompt_tokens = static_cast<std::int64_t>(request_.prompt.size());
    const B& backend = runtime_->backend();

    auto state = B::start_text_generation(backend, request_.sampling);
    if (!state) return fail(detail::to_error(std::move(state).error()));
    std::vector<std::uint32_t> ids(request_.prompt.begin(), request_.prompt.end());
    auto prompt = B::prepare_text_prompt(backend, std::span<const std::uint32_t>(ids));
    if (!prompt) return fail(detail::to_error(std::move(prompt).error()));

    std::optional<typename B::text_token> previous;
    while (true) {
      EREDU_TRY(StepOutput before, sequence_.poll(cancel));
      emit(result, on_text, before.text);
      if (before.finished()) break;

      const auto started = clock::now();
      token_submission submission =
          previous ? B::submit_text_decode(*runtime_, std::move(*previous), *state)
                   : submit_prompt(std::move(*prompt), *state);
      if (!submission) return fail(detail::to_error(std::move(submission).error()));
      auto id = submission->output.token_id();
      if (!id) return fail(detail::to_error(std::move(id).error()));
      auto done = submission->completion.wait();
      if (!done) return fail(detail::to_error(std::move(done).error()));
      const double seconds = std::chrono::duration<double>(clock::now() - started).count();
      if (previous) {
        result.timings.generation_seconds += seconds;
        ++result.timings.decoded_tokens;
      } else {
        result.timings.prompt_seconds += seconds;
      }

      const auto token = static_cast<TokenId>(*id);
      EREDU_TRY(const std::string piece, piece_of(token));
      EREDU_TRY(StepOutput after, sequence_.commit(token, piece));
      result.tokens.push_back(token);
      emit(result, on_text, after.text);
      if (after.finished()) break;
      previous.emplace(std::move(submission->output));
    }
    result.finish_reason = *sequence_.finish_reason();
    return result;
  }

  token_submission submit_prompt(typename B::text_prompt&& prompt, typename B::text_state& state) {
    if constexpr (ContinuesTextPrefill<B>) {
      if (request_.cached_prefix != 0) {
        return B::submit_text_continuation(*runtime_, std::move(prompt), request_.cached_prefix,
                                           state);
      }
    }
    return B::submit_text_prefill(*runtime_, std::move(prompt), state);
  }

  runtime_type* runtime_;
  TextGenerationRequest request_;
  GenerationSequence sequence_;
  bool ran_ = false;
};

}  // namespace eredu::generation
