#pragma once
// The WordPiece tokenizer of GGUF `tokenizer.ggml.model = "bert"` (BERT, BGE, MiniLM, ...),
// reproducing Hugging Face's BertNormalizer + BertPreTokenizer + WordPiece:
//  - special tokens are split off first (control ones only with EncodeOptions::parse_special);
//  - normalizer: control characters, U+0000 and U+FFFD are removed and whitespace becomes ' ';
//    CJK ideographs get a space on each side; accents are stripped (NFD, then nonspacing marks
//    dropped) and the text lower-cased;
//  - pre-tokenizer: split at whitespace, every punctuation character (Unicode P* or ASCII
//    punctuation) a word of its own;
//  - each word of at most 100 characters becomes the longest vocabulary entries from the left;
//    a word that cannot be covered becomes the unknown token.
// GGUF stores a word-initial piece as "▁word" and a continuation ("##ing" in BERT's vocab.txt)
// as "ing"; decoding renders "▁" as a space.
//
// Encoding with add_bos puts the [CLS] token (special_tokens().bos) in front; with add_eos the
// [SEP] token (sep_token()) goes at the end, as llama.cpp does for BERT (adds_eos() then says
// whether there is one).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/text/token.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::text {

struct WordPieceVocabulary {
  std::vector<std::string> tokens;        // tokenizer.ggml.tokens
  std::vector<std::int32_t> token_types;  // tokenizer.ggml.token_type; empty: all normal
  SpecialTokenIds special;                // bos = [CLS], unk = [UNK] (required)
  std::optional<TokenId> sep;             // tokenizer.ggml.seperator_token_id ([SEP])
  bool add_bos = true;                    // [CLS] in front
  bool add_eos = false;                   // an EOS id at the end (rare for BERT)
  bool allow_duplicate_tokens = false;
};

class WordPieceTokenizer final : public Tokenizer {
  struct PrivateTag {};

 public:
  // Maximum characters of one word; a longer word is the unknown token (Hugging Face's
  // max_input_chars_per_word).
  static constexpr std::size_t kMaxWordChars = 100;

  [[nodiscard]] static Result<std::shared_ptr<const WordPieceTokenizer>> create(
      WordPieceVocabulary vocabulary);

  [[nodiscard]] TokenizerKind kind() const noexcept override { return TokenizerKind::kWordPiece; }
  [[nodiscard]] std::size_t vocab_size() const noexcept override { return tokens_.size(); }
  [[nodiscard]] Result<std::vector<TokenId>> encode(
      std::string_view text, const EncodeOptions& options = {}) const override;
  [[nodiscard]] Result<std::string> token_to_piece(TokenId id,
                                                   bool render_special = false) const override;
  [[nodiscard]] Result<std::string_view> token_text(TokenId id) const override;
  [[nodiscard]] std::optional<TokenId> find_token(std::string_view text) const override;
  [[nodiscard]] Result<TokenType> token_type(TokenId id) const override;
  [[nodiscard]] const SpecialTokenIds& special_tokens() const noexcept override { return special_; }
  [[nodiscard]] bool adds_bos() const noexcept override { return add_bos_; }
  [[nodiscard]] bool adds_eos() const noexcept override { return add_eos_ || sep_.has_value(); }
  [[nodiscard]] bool cleans_spaces() const noexcept override { return true; }
  [[nodiscard]] std::optional<TokenId> sep_token() const noexcept { return sep_; }

  // The BERT normalizer and pre-tokenizer alone: the words of `text` (for tests and tools).
  [[nodiscard]] static std::vector<std::string> normalize_and_split(std::string_view text);

  WordPieceTokenizer(PrivateTag, WordPieceVocabulary&& vocabulary);

 private:
  void encode_word(std::string_view word, std::size_t chars, std::vector<TokenId>& out) const;

  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  SpecialTokenIds special_;
  std::optional<TokenId> sep_;
  bool add_bos_;
  bool add_eos_;
  std::size_t max_token_bytes_ = 0;
  std::unordered_map<std::string_view, TokenId> ids_by_text_;
  std::vector<TokenId> special_by_length_;
};

}  // namespace eredu::text
