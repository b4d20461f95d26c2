#pragma once
// LlamaConfig: the hyper-parameters of a GGUF `llama` / `mistral` checkpoint, normalized from its
// metadata and validated before any payload byte is read (reliability.md G44-G47).
//
// Keys read (prefix = general.architecture, i.e. "llama." or "mistral."):
//   <arch>.block_count, <arch>.embedding_length, <arch>.feed_forward_length,
//   <arch>.attention.head_count, <arch>.attention.head_count_kv (default: head_count),
//   <arch>.attention.layer_norm_rms_epsilon, <arch>.context_length,
//   <arch>.rope.dimension_count (default: head_dim), <arch>.rope.freq_base (default 10000),
//   <arch>.rope.scaling.type ("none" | "linear"; others are unsupported) with
//   <arch>.rope.scaling.factor (linear: positions are multiplied by 1/factor),
//   <arch>.vocab_size or the length of tokenizer.ggml.tokens or token_embd's row count.
// Every error names the offending key (Error::subject) and says what was expected.
//
// Rotary layout: GGUF llama/mistral checkpoints store attn_q / attn_k with their rows permuted by
// the converter so that the rotation pairs are consecutive dimensions (llama.cpp rope type NORM,
// eredu RotaryLayout::kInterleaved); the loader uses them as stored.

#include <cstdint>
#include <string>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {
class GgufContents;
}

namespace eredu::model::llama {

// Upper bounds far above any real model: a value beyond one is treated as corrupt metadata, and
// they keep every product of hyper-parameters well inside 64 bits.
inline constexpr std::uint64_t kMaxLayers = 4096;
inline constexpr std::uint64_t kMaxEmbedding = 1u << 20;
inline constexpr std::uint64_t kMaxFeedForward = 1u << 22;
inline constexpr std::uint64_t kMaxHeads = 4096;
inline constexpr std::uint64_t kMaxContext = 1u << 24;
inline constexpr std::uint64_t kMaxVocab = 1u << 24;

struct LlamaConfig {
  std::string architecture;  // "llama" or "mistral"
  std::uint32_t n_layer = 0;
  std::uint32_t n_embd = 0;
  std::uint32_t n_ff = 0;
  std::uint32_t n_head = 0;
  std::uint32_t n_head_kv = 0;
  std::uint32_t head_dim = 0;  // n_embd / n_head
  std::uint32_t n_rot = 0;     // rotated dimensions per head
  std::uint32_t n_ctx_train = 0;
  std::uint32_t n_vocab = 0;
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / linear scaling factor

  [[nodiscard]] std::uint32_t n_embd_kv() const noexcept { return n_head_kv * head_dim; }
};

// True for the GGUF architecture names this family reads.
[[nodiscard]] bool is_llama_architecture(std::string_view architecture) noexcept;

// Reads and validates the configuration from a GGUF file's metadata. `token_embd_rows` (when
// non-zero) is the vocabulary size taken from token_embd's shape, used when no metadata states it.
// Errors: kUnsupported for an architecture outside this family or an unsupported rope scaling
// type; kInvalidModel for a missing, mistyped or absurd hyper-parameter (subject = the key).
[[nodiscard]] Result<LlamaConfig> read_llama_config(const checkpoint::GgufContents& gguf,
                                                    std::uint64_t token_embd_rows = 0);

// Checks the cross-parameter invariants of an already filled config (used by read_llama_config;
// public so tests and other loaders can check a hand-made config).
[[nodiscard]] Result<void> validate_llama_config(const LlamaConfig& config);

}  // namespace eredu::model::llama
