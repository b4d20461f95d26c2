#include "eredu/generation/prompt_checks.hpp"

#include <fmt/format.h>

namespace eredu::generation {
namespace {

Unexpected<Error> invalid_prompt(std::string message) {
  return fail(Error(ErrorCode::kInvalidArgument, std::move(message)).with_subject("prompt"));
}

}  // namespace

Result<void> validate_prompt_fits(std::int64_t n_prompt, std::int64_t n_ctx) {
  if (n_ctx <= 0) {
    return fail(
        Error(ErrorCode::kInvalidArgument, fmt::format("context size is {}; expected > 0", n_ctx))
            .with_subject("n_ctx"));
  }
  if (n_prompt <= 0) {
    return invalid_prompt(
        fmt::format("empty prompt (n_prompt = {}); at least one token is needed", n_prompt));
  }
  if (n_prompt >= n_ctx) {
    return invalid_prompt(
        fmt::format("prompt of {} tokens does not fit a context of {} tokens with room to generate "
                    "(n_prompt = {}, n_ctx = {}); shorten the prompt or raise the context size",
                    n_prompt, n_ctx, n_prompt, n_ctx));
  }
  return ok();
}

Result<void> validate_prompt_tokens(std::span<const TokenId> prompt, std::int32_t n_vocab,
                                    std::int64_t n_ctx) {
  EREDU_TRY_VOID(validate_prompt_fits(static_cast<std::int64_t>(prompt.size()), n_ctx));
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    if (prompt[i] < 0 || prompt[i] >= n_vocab) {
      return invalid_prompt(fmt::format("prompt token {} has id {}, outside the vocabulary [0, {})",
                                        i, prompt[i], n_vocab));
    }
  }
  return ok();
}

}  // namespace eredu::generation
