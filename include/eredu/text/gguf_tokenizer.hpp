#pragma once
// Builds a Tokenizer from GGUF metadata (the tokenizer.ggml.* keys).
//
// Keys read (as llama.cpp reads them):
//   tokenizer.ggml.model             string, required: "llama" (SentencePiece), "gpt2" (byte-level
//                                    BPE) or "bert" (WordPiece). Others are kUnsupported.
//   tokenizer.ggml.tokens            array of string, required
//   tokenizer.ggml.scores            array of f32, optional (all 0 when absent; "llama" only)
//   tokenizer.ggml.token_type        array of i32, optional (all normal when absent)
//   tokenizer.ggml.merges            array of string "LEFT RIGHT", required for "gpt2"; rank =
//                                    index
//   tokenizer.ggml.pre               string, optional ("gpt2"): the pre-tokenizer regex list
//                                    (Pretokenizer::known_names; absent: "default"; unknown: an
//                                    error listing the known ones)
//   tokenizer.ggml.{bos,eos,unknown,padding,eot,eom}_token_id
//                                    any integer type; optional. 0xFFFFFFFF (u32) and -1 mean
//                                    "none" (converters write them so); any other value outside
//                                    [0, n_vocab) is an error. Defaults as in llama.cpp: "llama"
//                                    bos 1, eos 2, unk 0; "gpt2" bos = eos = 11; "bert" bos
//                                    ([CLS]) 101, unk 100, pad 0.
//   tokenizer.ggml.seperator_token_id  ("bert", spelt so by the converters) [SEP], default 102
//   tokenizer.ggml.add_bos_token     bool, optional (default true for "llama" and "bert"; for
//                                    "gpt2" llama.cpp's per-pre value: true for llama-bpe, tekken)
//   tokenizer.ggml.add_eos_token     bool, optional (default false)
//   tokenizer.ggml.add_space_prefix  bool, optional (default true for "llama", false otherwise)
//   tokenizer.ggml.ignore_merges     bool, optional ("gpt2"; default per pre: true for
//                                    llama-bpe and tekken)
// clean_spaces (DecodeOptions::clean_up_spaces) has no key: llama.cpp decides it per pre.
// An array of the wrong element type (scores as u8, tokens as i32) is an error naming the key and
// both types, raised before any element is read (reliability.md G51). Every error carries the
// file path and the key.

#include <memory>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/result.hpp"
#include "eredu/text/bpe_tokenizer.hpp"
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

// The byte-level BPE vocabulary held in `gguf` (tokenizer.ggml.model must be "gpt2"), with
// llama.cpp's per-pre defaults applied and the GGUF flags over them; not yet validated
// (BpeTokenizer::create does that).
[[nodiscard]] Result<BpeVocabulary> read_bpe_vocabulary(const checkpoint::GgufContents& gguf,
                                                        const GgufTokenizerOptions& options = {});

// The tokenizer of the kind `tokenizer.ggml.model` names, built and validated.
[[nodiscard]] Result<std::shared_ptr<const Tokenizer>> make_tokenizer_from_gguf(
    const checkpoint::GgufContents& gguf, const GgufTokenizerOptions& options = {});

}  // namespace eredu::text
