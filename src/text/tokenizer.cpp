// The parts of the Tokenizer contract that every kind shares.

#include "eredu/text/tokenizer.hpp"

#include <new>

namespace eredu::text {

Result<void> Tokenizer::check_token(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= vocab_size()) {
    return fail(ErrorCode::kInvalidArgument, "token id " + std::to_string(id) +
                                                 " is out of range [0, " +
                                                 std::to_string(vocab_size()) + ")");
  }
  return ok();
}

Result<std::string> Tokenizer::decode(std::span<const TokenId> ids,
                                      const DecodeOptions& options) const {
  try {
    std::string out;
    bool produced_text = false;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      auto piece = token_to_piece(ids[i], options.render_special);
      if (!piece) {
        return fail(std::move(piece).error().with_subject("token " + std::to_string(i)));
      }
      std::string_view text = *piece;
      if (text.empty()) continue;
      // Strip from the first piece that has text (a leading BOS renders as nothing).
      if (options.strip_leading_space && !produced_text && text.front() == ' ') {
        text.remove_prefix(1);
      }
      produced_text = true;
      out += text;
    }
    return out;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded,
                "out of memory while decoding " + std::to_string(ids.size()) + " tokens");
  }
}

bool Tokenizer::is_control(TokenId id) const {
  const auto type = token_type(id);
  return type.has_value() && *type == TokenType::kControl;
}

bool Tokenizer::is_eog(TokenId id) const {
  if (!check_token(id)) return false;
  const SpecialTokenIds& special = special_tokens();
  return id == special.eos || id == special.eot || id == special.eom;
}

}  // namespace eredu::text
