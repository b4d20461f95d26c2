// SentencePieceTokenizer: vocabulary validation, lookup tables and token-to-text rendering.
// The encoder (merging) lives in sentencepiece_encode.cpp.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>

#include "eredu/core/log.hpp"
#include "eredu/text/sentencepiece_tokenizer.hpp"
#include "text_util.hpp"

namespace eredu::text {
namespace {

constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";

Unexpected<Error> vocab_error(ErrorCode code, std::string_view key, std::string message) {
  return Unexpected<Error>(Error(code, std::move(message)).with_subject(std::string(key)));
}

// An optional special id must name an existing token.
Result<void> check_special(const std::optional<TokenId>& id, std::string_view key,
                           std::size_t n_tokens) {
  if (!id) return ok();
  if (*id < 0 || static_cast<std::size_t>(*id) >= n_tokens) {
    return vocab_error(ErrorCode::kInvalidModel, key,
                       "special token id " + std::to_string(*id) + " is out of range [0, " +
                           std::to_string(n_tokens) + ")");
  }
  return ok();
}

}  // namespace

Result<std::shared_ptr<const SentencePieceTokenizer>> SentencePieceTokenizer::create(
    SentencePieceVocabulary vocabulary) {
  try {
    const std::size_t n = vocabulary.tokens.size();
    if (n == 0) return vocab_error(ErrorCode::kInvalidModel, kTokensKey, "the vocabulary is empty");
    if (n > static_cast<std::size_t>(std::numeric_limits<TokenId>::max())) {
      return vocab_error(ErrorCode::kLimitExceeded, kTokensKey,
                         std::to_string(n) + " tokens do not fit 32-bit token ids");
    }
    if (!vocabulary.scores.empty() && vocabulary.scores.size() != n) {
      return vocab_error(ErrorCode::kInvalidModel, kScoresKey,
                         std::to_string(vocabulary.scores.size()) + " scores for " +
                             std::to_string(n) + " tokens; the lengths must match");
    }
    if (!vocabulary.token_types.empty() && vocabulary.token_types.size() != n) {
      return vocab_error(ErrorCode::kInvalidModel, kTypesKey,
                         std::to_string(vocabulary.token_types.size()) + " token types for " +
                             std::to_string(n) + " tokens; the lengths must match");
    }
    for (std::size_t i = 0; i < vocabulary.scores.size(); ++i) {
      // NaN has no order, and the merge queue needs one. Infinities order fine.
      if (std::isnan(vocabulary.scores[i])) {
        return vocab_error(ErrorCode::kInvalidModel, kScoresKey,
                           "score of token " + std::to_string(i) + " is NaN");
      }
    }
    for (std::size_t i = 0; i < vocabulary.token_types.size(); ++i) {
      if (!token_type_from_int(vocabulary.token_types[i])) {
        return vocab_error(ErrorCode::kInvalidModel, kTypesKey,
                           "token " + std::to_string(i) + " has type " +
                               std::to_string(vocabulary.token_types[i]) +
                               "; expected 0..6 (undefined, normal, unknown, control, "
                               "user-defined, unused, byte)");
      }
    }
    const SpecialTokenIds& s = vocabulary.special;
    EREDU_TRY_VOID(check_special(s.bos, "tokenizer.ggml.bos_token_id", n));
    EREDU_TRY_VOID(check_special(s.eos, "tokenizer.ggml.eos_token_id", n));
    EREDU_TRY_VOID(check_special(s.unk, "tokenizer.ggml.unknown_token_id", n));
    EREDU_TRY_VOID(check_special(s.pad, "tokenizer.ggml.padding_token_id", n));
    EREDU_TRY_VOID(check_special(s.eot, "tokenizer.ggml.eot_token_id", n));
    EREDU_TRY_VOID(check_special(s.eom, "tokenizer.ggml.eom_token_id", n));
    if (vocabulary.add_bos && !s.bos) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.add_bos_token",
                         "the vocabulary asks for a BOS token but names no BOS id");
    }
    if (vocabulary.add_eos && !s.eos) {
      return vocab_error(ErrorCode::kInvalidModel, "tokenizer.ggml.add_eos_token",
                         "the vocabulary asks for an EOS token but names no EOS id");
    }
    const bool allow_duplicates = vocabulary.allow_duplicate_tokens;
    auto tokenizer = std::make_shared<SentencePieceTokenizer>(PrivateTag{}, std::move(vocabulary));
    EREDU_TRY_VOID(tokenizer->build_indexes(allow_duplicates));
    tokenizer->init_eog_tokens();
    return std::shared_ptr<const SentencePieceTokenizer>(std::move(tokenizer));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while building the vocabulary");
  }
}

SentencePieceTokenizer::SentencePieceTokenizer(PrivateTag, SentencePieceVocabulary&& vocabulary)
    : tokens_(std::move(vocabulary.tokens)),
      scores_(std::move(vocabulary.scores)),
      special_(vocabulary.special),
      add_bos_(vocabulary.add_bos),
      add_eos_(vocabulary.add_eos),
      add_space_prefix_(vocabulary.add_space_prefix) {
  if (scores_.empty()) scores_.assign(tokens_.size(), 0.0F);
  types_.reserve(tokens_.size());
  if (vocabulary.token_types.empty()) {
    types_.assign(tokens_.size(), TokenType::kNormal);
  } else {
    for (std::int32_t t : vocabulary.token_types)
      types_.push_back(*token_type_from_int(t));
  }
}

Result<void> SentencePieceTokenizer::build_indexes(bool allow_duplicates) {
  const std::size_t n = tokens_.size();
  byte_value_.assign(n, 0);
  ids_by_text_.reserve(n);
  std::size_t duplicates = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    const std::string& text = tokens_[i];
    if (types_[i] == TokenType::kByte) {
      const auto byte = parse_byte_token(text);
      if (!byte) {
        return vocab_error(ErrorCode::kInvalidModel, kTokensKey,
                           "byte token " + std::to_string(i) + " is '" + printable(text) +
                               "'; expected <0xHH> with two hex digits");
      }
      byte_value_[i] = *byte;
    }
    // An empty string can never be matched in text; it still decodes (to nothing).
    if (text.empty()) continue;
    const auto [it, inserted] = ids_by_text_.emplace(std::string_view(text), id);
    if (!inserted) {
      if (!allow_duplicates) {
        return vocab_error(ErrorCode::kDuplicate, kTokensKey,
                           "token string '" + printable(text) + "' appears at ids " +
                               std::to_string(it->second) + " and " + std::to_string(i));
      }
      ++duplicates;  // first wins: the map keeps the lower id
    }
  }
  if (duplicates > 0) {
    log::warn("tokenizer: {} repeated token strings; text maps to the first id of each",
              duplicates);
  }

  // Byte fallback as llama.cpp resolves it: "<0xHH>" (upper-case hex), else the byte itself as a
  // one-character entry, else none (the encoder then uses the unknown token).
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto found = find_token(name);
    if (!found) found = find_token(std::string(1, static_cast<char>(b)));
    byte_fallback_[static_cast<std::size_t>(b)] = found.value_or(-1);
  }

  for (std::size_t i = 0; i < n; ++i) {
    const TokenType t = types_[i];
    if ((t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUserDefined) &&
        !tokens_[i].empty()) {
      special_by_length_.push_back(static_cast<TokenId>(i));
    }
  }
  // Longest first so that "<|end|>" wins over "<|e"; equal lengths keep id order (stable).
  std::stable_sort(special_by_length_.begin(), special_by_length_.end(),
                   [this](TokenId a, TokenId b) {
                     return tokens_[static_cast<std::size_t>(a)].size() >
                            tokens_[static_cast<std::size_t>(b)].size();
                   });
  return ok();
}

Result<std::string> SentencePieceTokenizer::token_to_piece(TokenId id, bool render_special) const {
  EREDU_TRY_VOID(check_token(id));
  const auto i = static_cast<std::size_t>(id);
  try {
    switch (types_[i]) {
      case TokenType::kControl:
      case TokenType::kUnknown:
        return render_special ? tokens_[i] : std::string();
      case TokenType::kUserDefined:
        return tokens_[i];  // verbatim, as it was matched in the input
      case TokenType::kNormal:
        return unescape_spaces(tokens_[i]);
      case TokenType::kByte:
        return std::string(1, static_cast<char>(byte_value_[i]));
      case TokenType::kUnused:
      case TokenType::kUndefined:
        return std::string();
    }
    return std::string();
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory while rendering a token");
  }
}

Result<std::string_view> SentencePieceTokenizer::token_text(TokenId id) const {
  EREDU_TRY_VOID(check_token(id));
  return std::string_view(tokens_[static_cast<std::size_t>(id)]);
}

std::optional<TokenId> SentencePieceTokenizer::find_token(std::string_view text) const {
  const auto it = ids_by_text_.find(text);
  if (it == ids_by_text_.end()) return std::nullopt;
  return it->second;
}

Result<TokenType> SentencePieceTokenizer::token_type(TokenId id) const {
  EREDU_TRY_VOID(check_token(id));
  return types_[static_cast<std::size_t>(id)];
}

float SentencePieceTokenizer::score(TokenId id) const noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= scores_.size()) return 0.0F;
  return scores_[static_cast<std::size_t>(id)];
}

}  // namespace eredu::text
