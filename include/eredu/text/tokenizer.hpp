#pragma once
// The tokenizer contract: text to token ids and back. One abstract class for every tokenizer
// kind (SentencePiece now; byte-level BPE and WordPiece later), so that callers (generation,
// examples, servers) never depend on which one a model uses. Tokenization is the cold path of
// inference, so a virtual call per encode/decode is immaterial.
//
// A Tokenizer is immutable after construction and safe to use from several threads at once.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/result.hpp"
#include "eredu/text/token.hpp"

namespace eredu::text {

// Which algorithm a tokenizer runs (GGUF `tokenizer.ggml.model`).
enum class TokenizerKind {
  kSentencePiece,     // "llama": score-driven merges, byte fallback, U+2581 for spaces
  kBytePairEncoding,  // "gpt2": byte-level BPE with ranked merges
  kWordPiece,         // "bert": BERT normalizer, greedy longest-match WordPiece
};

[[nodiscard]] constexpr std::string_view to_string(TokenizerKind kind) noexcept {
  switch (kind) {
    case TokenizerKind::kSentencePiece:
      return "sentencepiece";
    case TokenizerKind::kBytePairEncoding:
      return "bpe";
    case TokenizerKind::kWordPiece:
      return "wordpiece";
  }
  return "unknown";
}

struct EncodeOptions {
  // Prepend BOS when the vocabulary asks for it (GGUF `tokenizer.ggml.add_bos_token`). Set to
  // false to tokenize a fragment that continues a sequence.
  bool add_bos = true;
  // Append EOS when the vocabulary asks for it (GGUF `tokenizer.ggml.add_eos_token`).
  bool add_eos = true;
  // Recognise the text of control and unknown tokens ("<s>", "</s>", "<unk>") in the input and
  // emit their ids. User-defined tokens are always recognised, as in llama.cpp and Hugging Face.
  // Leave false for untrusted text, so that a user cannot inject control tokens.
  bool parse_special = false;
};

struct DecodeOptions {
  // Render control and unknown tokens as their text ("<s>"); by default they render as nothing.
  bool render_special = false;
  // Drop one leading space from the first piece that produces text (SentencePiece decodes a
  // sequence that way, undoing the space prefix the encoder added). Off by default, so that
  // decoding a sequence piece by piece equals decoding it at once.
  bool strip_leading_space = false;
  // llama.cpp's clean_up_tokenization_spaces, for vocabularies that ask for it
  // (Tokenizer::cleans_spaces): " ." " ," " !" " ?" lose the space, " ' " becomes "'", and " 's",
  // " 'm", " 're", " 've" lose the space. Off by default (it is not piecewise).
  bool clean_up_spaces = false;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  [[nodiscard]] virtual TokenizerKind kind() const noexcept = 0;
  // Number of entries in the vocabulary; valid ids are [0, vocab_size()).
  [[nodiscard]] virtual std::size_t vocab_size() const noexcept = 0;

  // Text (raw bytes, normally UTF-8) to token ids. Fails only when the vocabulary cannot
  // represent some input (no byte token and no unknown token) or memory runs out.
  [[nodiscard]] virtual Result<std::vector<TokenId>> encode(
      std::string_view text, const EncodeOptions& options = {}) const = 0;

  // The bytes one token contributes to the output. May be part of a UTF-8 sequence (a byte
  // token), so concatenate pieces before interpreting them, or use StreamingDetokenizer.
  // Control and unknown tokens render as nothing unless `render_special`.
  [[nodiscard]] virtual Result<std::string> token_to_piece(TokenId id,
                                                           bool render_special = false) const = 0;

  // Token ids to bytes: the concatenation of the pieces, with the options applied. The result is
  // what the model produced and may hold invalid UTF-8 (a lone byte token); a stream that must
  // stay valid UTF-8 goes through StreamingDetokenizer. Fails on an id out of range.
  [[nodiscard]] virtual Result<std::string> decode(std::span<const TokenId> ids,
                                                   const DecodeOptions& options = {}) const;

  // The vocabulary entry of `id` exactly as stored (e.g. "▁Hello", "<0x0A>", "<s>").
  [[nodiscard]] virtual Result<std::string_view> token_text(TokenId id) const = 0;
  // The id whose vocabulary entry is exactly `text`, if any.
  [[nodiscard]] virtual std::optional<TokenId> find_token(std::string_view text) const = 0;
  [[nodiscard]] virtual Result<TokenType> token_type(TokenId id) const = 0;

  [[nodiscard]] virtual const SpecialTokenIds& special_tokens() const noexcept = 0;
  // Whether encode() adds BOS / EOS (when EncodeOptions allow it).
  [[nodiscard]] virtual bool adds_bos() const noexcept = 0;
  [[nodiscard]] virtual bool adds_eos() const noexcept = 0;
  // Whether DecodeOptions::clean_up_spaces applies to this vocabulary (llama.cpp's clean_spaces).
  [[nodiscard]] virtual bool cleans_spaces() const noexcept { return false; }

  // Success when 0 <= id < vocab_size(); otherwise an kInvalidArgument error naming the id.
  [[nodiscard]] Result<void> check_token(TokenId id) const;
  // True for control tokens (<s>, </s>, ...). False for ids out of range.
  [[nodiscard]] bool is_control(TokenId id) const;
  // True when `id` ends generation: EOS, EOT, EOM, or a token whose text is a known end-of-turn
  // marker ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", ...), as
  // llama.cpp decides. False for ids out of range.
  [[nodiscard]] bool is_eog(TokenId id) const;
  // Every id is_eog() accepts, ascending (for a chat layer to report or stop on).
  [[nodiscard]] std::span<const TokenId> eog_tokens() const noexcept { return eog_ids_; }

 protected:
  Tokenizer() = default;
  // Fills the end-of-generation set from special_tokens() and the token texts; each kind's
  // create() calls it once its tables are built.
  void init_eog_tokens();

 private:
  std::vector<TokenId> eog_ids_;
};

}  // namespace eredu::text
