#pragma once
// Builds a Tokenizer from GGUF metadata (the tokenizer.ggml.* keys).
//
// Keys read (as llama.cpp reads them):
//   tokenizer.ggml.model             string, required: "llama" (SentencePiece). Other models
//                                    ("gpt2", "bert", ...) are kUnsupported for now.
//   tokenizer.ggml.tokens            array of string, required
//   tokenizer.ggml.scores            array of f32, optional (all 0 when absent)
//   tokenizer.ggml.token_type        array of i32, optional (all normal when absent)
//   tokenizer.ggml.{bos,eos,unknown,padding,eot,eom}_token_id
//                                    any integer type; optional. 0xFFFFFFFF (u32) and -1 mean
//                                    "none" (converters write them so); any other value outside
//                                    [0, n_vocab) is an error. Defaults for "llama" as in
//                                    llama.cpp: bos 1, eos 2, unk 0.
//   tokenizer.ggml.add_bos_token     bool, optional (default true for "llama")
//   tokenizer.ggml.add_eos_token     bool, optional (default false)
//   tokenizer.ggml.add_space_prefix  bool, optional (default true)
// An array of the wrong element type (scores as u8, tokens as i32) is an error naming the key and
// both types, raised before any element is read (reliability.md G51). Every error carries the
// file path and the key.

#include <memory>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/result.hpp"
#include "eredu/text/sentencepiece_tokenizer.hpp"
#include "eredu/text/tokenizer.hpp"

namespace eredu::text {

struct GgufTokenizerOptions {
  // See SentencePieceVocabulary::allow_duplicate_tokens (default: a repeated string is an error).
  bool allow_duplicate_tokens = false;
};

// The SentencePiece vocabulary held in `gguf` (tokenizer.ggml.model must be "llama"), not yet
// validated as a whole (SentencePieceTokenizer::create does that).
[[nodiscard]] Result<SentencePieceVocabulary> read_sentencepiece_vocabulary(
    const checkpoint::GgufContents& gguf, const GgufTokenizerOptions& options = {});

// The tokenizer of the kind `tokenizer.ggml.model` names, built and validated.
[[nodiscard]] Result<std::shared_ptr<const Tokenizer>> make_tokenizer_from_gguf(
    const checkpoint::GgufContents& gguf, const GgufTokenizerOptions& options = {});

}  // namespace eredu::text
