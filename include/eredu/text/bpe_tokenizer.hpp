#pragma once
// The byte-level BPE tokenizer of GGUF `tokenizer.ggml.model = "gpt2"` (GPT-2, Llama 3, Qwen 2,
// DeepSeek, StarCoder, MPT, ...), reproducing llama.cpp's / Hugging Face's BPE token for token:
//  - the input must be valid UTF-8 (else kInvalidArgument naming the byte offset);
//  - it is split at special tokens first (user-defined always; control and unknown only with
//    EncodeOptions::parse_special), which are never merged;
//  - each text fragment is split into words by the pre-tokenizer regexes that
//    `tokenizer.ggml.pre` names (Pretokenizer);
//  - each word's bytes become GPT-2's printable stand-ins (byte_to_unicode: '!'..'~', '¡'..'¬',
//    '®'..'ÿ' stand for themselves, the other 68 bytes for U+0100..U+0143), one symbol each;
//  - adjacent symbols merge by `tokenizer.ggml.merges` rank, lowest rank first (ties: leftmost),
//    until no ranked pair is left. With ignore_merges a word that is itself a vocabulary entry
//    is emitted whole (Llama 3, Tekken).
// Decoding maps the stand-ins back to raw bytes, so a piece may be part of a UTF-8 character.
//
// Vocabulary rules checked at construction: the per-token arrays have one entry per token;
// token types are 0..6; special ids are in range; token strings are unique (unless
// allow_duplicate_tokens: first id wins); add_bos / add_eos need a BOS / EOS id; every merge reads
// "LEFT RIGHT" (merges whose parts or result are not vocabulary entries can never apply and are
// dropped, as Hugging Face refuses them).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/text/pretokenizer.hpp"
#include "eredu/text/token.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::text {

// A byte-level BPE vocabulary as plain data (what GGUF's tokenizer.ggml.* keys hold).
struct BpeVocabulary {
  std::vector<std::string> tokens;        // tokenizer.ggml.tokens (byte-level stand-in text)
  std::vector<std::string> merges;        // tokenizer.ggml.merges, rank = index ("Ġ t")
  std::vector<std::int32_t> token_types;  // tokenizer.ggml.token_type; empty: all normal
  SpecialTokenIds special;
  std::string pre = "default";    // tokenizer.ggml.pre
  bool add_bos = false;           // tokenizer.ggml.add_bos_token
  bool add_eos = false;           // tokenizer.ggml.add_eos_token
  bool ignore_merges = false;     // tokenizer.ggml.ignore_merges (llama.cpp: true for llama-bpe)
  bool clean_spaces = true;       // decoding clean-up (DecodeOptions::clean_up_spaces)
  bool add_space_prefix = false;  // tokenizer.ggml.add_space_prefix: " " before the first word
  bool allow_duplicate_tokens = false;
};

// llama.cpp's per-`pre` defaults for a "gpt2" vocabulary, before the GGUF flags override them.
struct BpePreDefaults {
  bool add_bos = false;
  bool ignore_merges = false;
  bool clean_spaces = true;
};
[[nodiscard]] BpePreDefaults bpe_pre_defaults(std::string_view pre) noexcept;

// GPT-2's byte -> printable code point mapping (bytes_to_unicode), as UTF-8.
[[nodiscard]] std::string_view byte_to_unicode(std::uint8_t byte) noexcept;
// The byte a stand-in code point means, or nullopt for a code point that is no stand-in.
[[nodiscard]] std::optional<std::uint8_t> unicode_to_byte(char32_t code_point) noexcept;

class BpeTokenizer final : public Tokenizer {
  struct PrivateTag {};

 public:
  // Validates `vocabulary`, compiles its pre-tokenizer and builds the tokenizer. Errors are
  // kInvalidModel (kUnsupported for an unknown pre, kDuplicate for a repeated token string) with
  // the GGUF key as subject and the offending index in the message.
  [[nodiscard]] static Result<std::shared_ptr<const BpeTokenizer>> create(BpeVocabulary vocabulary);

  [[nodiscard]] TokenizerKind kind() const noexcept override {
    return TokenizerKind::kBytePairEncoding;
  }
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
  [[nodiscard]] bool adds_eos() const noexcept override { return add_eos_; }
  [[nodiscard]] bool cleans_spaces() const noexcept override { return clean_spaces_; }

  [[nodiscard]] const Pretokenizer& pretokenizer() const noexcept { return *pretokenizer_; }
  [[nodiscard]] bool ignores_merges() const noexcept { return ignore_merges_; }
  [[nodiscard]] std::size_t merge_count() const noexcept { return merges_.size(); }

  // Use create(); public only for std::make_shared.
  BpeTokenizer(PrivateTag, BpeVocabulary&& vocabulary);

 private:
  class WordEncoder;
  struct Merge {
    std::int32_t rank;
    TokenId result;
  };

  [[nodiscard]] Result<void> build_indexes(bool allow_duplicates,
                                           const std::vector<std::string>& merges);
  void encode_word(std::string_view word, std::vector<TokenId>& out,
                   std::vector<TokenId>& scratch) const;
  [[nodiscard]] const Merge* find_merge(TokenId left, TokenId right) const noexcept;

  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  std::vector<std::string> pieces_;  // decoded bytes of each token (control: its text)
  SpecialTokenIds special_;
  bool add_bos_;
  bool add_eos_;
  bool ignore_merges_;
  bool clean_spaces_;
  bool add_space_prefix_;
  std::shared_ptr<const Pretokenizer> pretokenizer_;

  std::unordered_map<std::string_view, TokenId> ids_by_text_;  // views into tokens_
  std::unordered_map<std::uint64_t, Merge> merges_;            // (left id << 32 | right id)
  std::array<TokenId, 256> byte_tokens_{};                     // stand-in of each byte; -1: none
  std::vector<TokenId> special_by_length_;  // control, unknown, user-defined; longest first
};

}  // namespace eredu::text
