#pragma once
// Splitting text at special tokens, shared by the BPE and WordPiece tokenizers: the same rule as
// SentencePieceTokenizer::split_special (and llama.cpp's tokenizer_st_partition).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/text/token.hpp"

namespace eredu::text {

struct TextFragment {
  bool is_token;
  TokenId token;  // when is_token
  std::size_t begin;
  std::size_t length;
};

// Control, unknown and user-defined tokens with text, longest first (equal lengths: id order).
std::vector<TokenId> special_tokens_by_length(const std::vector<std::string>& tokens,
                                              const std::vector<TokenType>& types);

// `text` as raw fragments and recognised tokens, in order. User-defined tokens are always
// matched; control and unknown ones only with `parse_special`. Longer tokens are matched first.
std::vector<TextFragment> split_at_special_tokens(std::string_view text,
                                                  std::span<const TokenId> by_length,
                                                  const std::vector<std::string>& tokens,
                                                  const std::vector<TokenType>& types,
                                                  bool parse_special);

}  // namespace eredu::text
