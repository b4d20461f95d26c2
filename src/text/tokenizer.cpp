// The parts of the Tokenizer contract that every kind shares.

#include "eredu/text/tokenizer.hpp"

#include <algorithm>
#include <array>
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

namespace {

// llama.cpp's end-of-generation texts (llama-vocab.cpp), matched against every vocabulary entry.
constexpr std::array<std::string_view, 14> kEogTexts = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<｜end▁of▁sentence｜>",  // DeepSeek (full-width bars, U+2581)
    "<|end_of_turn|>",
};

// llama.cpp's detokenize clean-up (clean_spaces), three passes over the bytes.
std::string clean_up_spaces(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {  // " ?", " !", " .", " ,"
    const char x = text[i];
    if (i > 0 && text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') &&
        !out.empty()) {
      out.pop_back();
    }
    out += x;
  }
  text.swap(out);
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {  // " ' " -> "'"
    const char x = text[i];
    if (x == '\'' && i > 0 && i + 1 < text.size() && text[i - 1] == ' ' && text[i + 1] == ' ') {
      if (!out.empty()) out.pop_back();
      out += x;
      ++i;  // drop the space after
      continue;
    }
    out += x;
  }
  text.swap(out);
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {  // " 's", " 'm", " 're", " 've"
    const char x = text[i];
    if (i > 0 && text[i - 1] == ' ' && x == '\'' && i + 1 < text.size()) {
      const char x1 = text[i + 1];
      const char x2 = i + 2 < text.size() ? text[i + 2] : '\0';
      if (x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) {
        if (!out.empty()) out.pop_back();
      }
    }
    out += x;
  }
  return out;
}

}  // namespace

void Tokenizer::init_eog_tokens() {
  eog_ids_.clear();
  const SpecialTokenIds& special = special_tokens();
  for (const auto& id : {special.eos, special.eot, special.eom}) {
    if (id && check_token(*id)) eog_ids_.push_back(*id);
  }
  for (const std::string_view text : kEogTexts) {
    if (const auto id = find_token(text)) eog_ids_.push_back(*id);
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
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
    if (options.clean_up_spaces && cleans_spaces()) return clean_up_spaces(std::move(out));
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
  return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

}  // namespace eredu::text
