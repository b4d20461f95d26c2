#pragma once
// The SentencePiece-style tokenizer of GGUF `tokenizer.ggml.model = "llama"` (Llama 1/2, Mistral,
// TinyLlama, llama2.c models), reproducing llama.cpp's SPM tokenizer token for token:
//  - the input is split at special tokens first (user-defined always; control and unknown only
//    with EncodeOptions::parse_special); each text fragment at the start or after a special token
//    gets a space prefix (when add_space_prefix), and spaces become U+2581 "▁";
//  - each fragment starts as one symbol per UTF-8 character; adjacent symbols whose concatenation
//    is a vocabulary entry are merged, highest score first (ties: leftmost first), until no pair
//    merges;
//  - a final symbol that is not a vocabulary entry is emitted as its bytes through the <0xNN>
//    byte tokens (else a single-byte entry, else the unknown token).
//
// Vocabulary rules checked at construction (reliability.md G50-G54, G57): the per-token arrays
// have one entry per token; token types are 0..6; scores are not NaN; special ids are in range;
// token strings are unique (or, with allow_duplicate_tokens, the FIRST id of a repeated string is
// the one text maps to); byte tokens read exactly "<0xHH>" with two hex digits; add_bos / add_eos
// need a BOS / EOS id.

#include <array>
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

// A SentencePiece vocabulary as plain data (what GGUF's tokenizer.ggml.* keys hold).
struct SentencePieceVocabulary {
  std::vector<std::string> tokens;        // tokenizer.ggml.tokens
  std::vector<float> scores;              // tokenizer.ggml.scores; empty: every score is 0
  std::vector<std::int32_t> token_types;  // tokenizer.ggml.token_type; empty: all normal
  SpecialTokenIds special;                // tokenizer.ggml.{bos,eos,unknown,padding,...}_token_id
  bool add_bos = true;                    // tokenizer.ggml.add_bos_token
  bool add_eos = false;                   // tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;           // tokenizer.ggml.add_space_prefix
  // A repeated token string is an error unless this is set; then text maps to the lowest id
  // holding it (first wins) and a warning is logged. Every id still decodes to its own string.
  bool allow_duplicate_tokens = false;
};

class SentencePieceTokenizer final : public Tokenizer {
  struct PrivateTag {};

 public:
  // Validates `vocabulary` and builds the tokenizer. Errors are kInvalidModel (kDuplicate for a
  // repeated token string, kLimitExceeded for more than 2^31 - 1 tokens), with the GGUF key as
  // subject and the offending index in the message.
  [[nodiscard]] static Result<std::shared_ptr<const SentencePieceTokenizer>> create(
      SentencePieceVocabulary vocabulary);

  [[nodiscard]] TokenizerKind kind() const noexcept override {
    return TokenizerKind::kSentencePiece;
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

  [[nodiscard]] bool adds_space_prefix() const noexcept { return add_space_prefix_; }
  [[nodiscard]] float score(TokenId id) const noexcept;

  // Use create(); public only for std::make_shared.
  SentencePieceTokenizer(PrivateTag, SentencePieceVocabulary&& vocabulary);

 private:
  struct Fragment;
  class MergeSession;

  [[nodiscard]] Result<void> build_indexes(bool allow_duplicates);
  [[nodiscard]] std::vector<Fragment> split_special(std::string_view text,
                                                    bool parse_special) const;
  [[nodiscard]] Result<void> encode_fragment(std::string_view escaped,
                                             std::vector<TokenId>& out) const;
  [[nodiscard]] Result<void> emit_bytes(std::string_view bytes, std::vector<TokenId>& out) const;

  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  SpecialTokenIds special_;
  bool add_bos_;
  bool add_eos_;
  bool add_space_prefix_;

  // Views into tokens_ (which never changes after construction, and this object never moves).
  std::unordered_map<std::string_view, TokenId> ids_by_text_;
  // Token for each byte value when a symbol falls back to bytes; -1: none (then unk, or error).
  std::array<TokenId, 256> byte_fallback_{};
  // The byte each kByte token stands for (indexed by id; meaningful only for byte tokens).
  std::vector<std::uint8_t> byte_value_;
  // Tokens matched verbatim before merging (control, unknown, user-defined), longest first.
  std::vector<TokenId> special_by_length_;
};

}  // namespace eredu::text
