#pragma once
// A synthesized SentencePiece-style vocabulary in the layout of llama.cpp's "llama" tokenizer
// model (as in stories260K.gguf):
//   0 "<unk>" (type 2, unknown), 1 "<s>" and 2 "</s>" (type 3, control),
//   3..258 "<0x00>".."<0xFF>" (type 6, byte), all with score 0;
//   then normal pieces (type 1) with strictly descending scores 0, -1, -2, ...: the single
//   characters "▁" (U+2581, SentencePiece's space), a-z, A-Z, 0-9 and some punctuation; then for
//   each length L = 2, 3, ...: "▁" followed by every lower-case word of length L-1, then every
//   lower-case word of length L, in lexicographic order — until the vocabulary is full.
// Every piece of length L > 1 is a piece of length L-1 plus one character, so SentencePiece's
// pairwise merges can reach it; text outside the pieces falls back to the byte tokens.

#include <cstdint>
#include <string>
#include <vector>

namespace eredu::synth {

// llama_token_type values as GGUF stores them (tokenizer.ggml.token_type).
inline constexpr std::int32_t kTokenNormal = 1;
inline constexpr std::int32_t kTokenUnknown = 2;
inline constexpr std::int32_t kTokenControl = 3;
inline constexpr std::int32_t kTokenByte = 6;

struct SynthVocabulary {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
};

// The vocabulary of `size` entries (size >= 259, see kReservedTokens).
[[nodiscard]] SynthVocabulary make_vocabulary(std::uint32_t size);

}  // namespace eredu::synth
