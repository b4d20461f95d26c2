#pragma once
// Token ids, token types and the special-token table shared by every tokenizer kind.

#include <cstdint>
#include <optional>
#include <string_view>

namespace eredu::text {

// A token id: an index into the vocabulary, signed 32-bit like llama.cpp's llama_token so that
// ids cross the C boundary and GGUF metadata unchanged. Valid ids are 0 <= id < vocab_size().
using TokenId = std::int32_t;

// The kind of a vocabulary entry. The numeric values are GGUF's `tokenizer.ggml.token_type`
// (llama.cpp's llama_token_type) and are the file format.
enum class TokenType : std::int32_t {
  kUndefined = 0,    // rendered as nothing
  kNormal = 1,       // text; U+2581 stands for a space in SentencePiece vocabularies
  kUnknown = 2,      // the <unk> token
  kControl = 3,      // <s>, </s>, ...: never produced from plain text, rendered on request
  kUserDefined = 4,  // always matched verbatim in the input, rendered verbatim
  kUnused = 5,       // rendered as nothing
  kByte = 6,         // <0xNN>: stands for one raw byte
};

// "normal", "control", "byte", ...
[[nodiscard]] constexpr std::string_view to_string(TokenType type) noexcept {
  switch (type) {
    case TokenType::kUndefined:
      return "undefined";
    case TokenType::kNormal:
      return "normal";
    case TokenType::kUnknown:
      return "unknown";
    case TokenType::kControl:
      return "control";
    case TokenType::kUserDefined:
      return "user-defined";
    case TokenType::kUnused:
      return "unused";
    case TokenType::kByte:
      return "byte";
  }
  return "invalid";
}

// The TokenType for a GGUF token_type value, or nullopt when the value is not one of 0..6.
[[nodiscard]] constexpr std::optional<TokenType> token_type_from_int(std::int32_t value) noexcept {
  if (value < 0 || value > 6) return std::nullopt;
  return static_cast<TokenType>(value);
}

// The special tokens a vocabulary names. Each is optional: an absent id means the vocabulary
// has no such token. End of generation (Tokenizer::is_eog) is eos, eot or eom.
struct SpecialTokenIds {
  std::optional<TokenId> bos;  // beginning of sequence
  std::optional<TokenId> eos;  // end of sequence
  std::optional<TokenId> unk;  // unknown
  std::optional<TokenId> pad;  // padding
  std::optional<TokenId> eot;  // end of turn (chat models)
  std::optional<TokenId> eom;  // end of message (tool calls)

  friend bool operator==(const SpecialTokenIds&, const SpecialTokenIds&) = default;
};

}  // namespace eredu::text
