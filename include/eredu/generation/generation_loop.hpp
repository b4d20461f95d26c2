#pragma once
// A backend-neutral streaming loop around GenerationSequence. The model side is supplied as
// callables, so this works with any TextGenerationBackend (the CPU backend's session wraps its
// decode + sample step into `next_token`).
//
//   next_token(std::optional<TokenId> previous) -> Result<TokenId>
//       Produce the next token. `previous` is the token committed last step, which must be
//       decoded first; it is empty on the first call (the prompt's logits are ready). The final
//       committed token is never passed back, so no compute is spent after the finish.
//   piece_of(TokenId) -> Result<std::string>      the bytes the detokenizer gives for the token
//   on_text(std::string_view)                     streaming callback; called only with
//                                                 non-empty, well-formed UTF-8
//
// Cancellation is checked before each token (poll). An exception thrown by a callable is caught
// here and returned as an error (kInternal), the sequence left unfinished; nothing escapes.

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "eredu/core/result.hpp"
#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/generation_sequence.hpp"
#include "eredu/generation/token.hpp"

namespace eredu::generation {

struct GenerationOutcome {
  FinishReason finish_reason;
  std::int64_t generated_tokens;
};

namespace detail {

template <typename OnText>
void emit(OnText& on_text, const std::string& text) {
  if (!text.empty()) on_text(std::string_view(text));
}

template <typename NextToken, typename PieceOf, typename OnText>
Result<GenerationOutcome> run_generation_unguarded(GenerationSequence& sequence,
                                                   const CancellationToken& cancel,
                                                   NextToken& next_token, PieceOf& piece_of,
                                                   OnText& on_text) {
  std::optional<TokenId> previous;
  while (true) {
    EREDU_TRY(StepOutput before, sequence.poll(cancel));
    emit(on_text, before.text);
    if (before.finished()) break;
    EREDU_TRY(const TokenId token, next_token(previous));
    EREDU_TRY(const std::string piece, piece_of(token));
    EREDU_TRY(StepOutput after, sequence.commit(token, piece));
    emit(on_text, after.text);
    if (after.finished()) break;
    previous = token;
  }
  return GenerationOutcome{*sequence.finish_reason(), sequence.generated_tokens()};
}

}  // namespace detail

template <typename NextToken, typename PieceOf, typename OnText>
[[nodiscard]] Result<GenerationOutcome> run_generation(GenerationSequence& sequence,
                                                       const CancellationToken& cancel,
                                                       NextToken&& next_token, PieceOf&& piece_of,
                                                       OnText&& on_text) {
  try {
    return detail::run_generation_unguarded(sequence, cancel, next_token, piece_of, on_text);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("generation callback threw: ") + e.what());
  } catch (...) {
    return fail(ErrorCode::kInternal, "generation callback threw a non-standard exception");
  }
}

}  // namespace eredu::generation
