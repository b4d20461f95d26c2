#pragma once
// Checks a prompt must pass before any compute is spent on it. Nothing is ever truncated
// silently: a prompt that does not fit is an error carrying both numbers.

#include <cstdint>
#include <span>

#include "eredu/core/result.hpp"
#include "eredu/generation/token.hpp"

namespace eredu::generation {

// kInvalidArgument (subject "prompt") when the prompt is empty, or when it leaves no room to
// generate: n_prompt >= n_ctx (llama-server's rule; the message names n_prompt and n_ctx).
[[nodiscard]] Result<void> validate_prompt_fits(std::int64_t n_prompt, std::int64_t n_ctx);

// The above for the prompt's length, plus every id in [0, n_vocab): kInvalidArgument naming the
// index and the value of the first bad token.
[[nodiscard]] Result<void> validate_prompt_tokens(std::span<const TokenId> prompt,
                                                  std::int32_t n_vocab, std::int64_t n_ctx);

// Tokens that can be generated after an admitted prompt before the context is full, each one
// keeping a KV slot: n_ctx - n_prompt (0 when the prompt does not fit). This is the value for
// SequenceOptions::context_room.
[[nodiscard]] constexpr std::int64_t generation_room(std::int64_t n_prompt,
                                                     std::int64_t n_ctx) noexcept {
  return n_prompt >= 0 && n_prompt < n_ctx ? n_ctx - n_prompt : 0;
}

}  // namespace eredu::generation
