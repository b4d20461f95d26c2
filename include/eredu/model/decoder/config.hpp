#pragma once
// DecoderConfig: the hyper-parameters of a pre-norm decoder-only transformer (RMS norm, rotary
// attention with grouped KV heads, SwiGLU feed-forward), the block the llama, mistral, qwen2 and
// qwen3 families share. A family fixes its DecoderTraits (rotary layout, biases, per-head q/k
// norms, rotary factors) and reads the rest from GGUF metadata with read_decoder_config.
//
// Keys read (p = "<architecture>."):
//   p.block_count, p.embedding_length, p.feed_forward_length, p.attention.head_count,
//   p.attention.head_count_kv (default head_count), p.attention.key_length (default
//   embedding_length / head_count) and p.attention.value_length (default key_length; must equal
//   it), p.attention.layer_norm_rms_epsilon, p.context_length, p.rope.dimension_count (default
//   the head dimension), p.rope.freq_base (default 10000), p.rope.scaling.type ("none" |
//   "linear") with p.rope.scaling.factor, p.vocab_size or the length of tokenizer.ggml.tokens or
//   token_embd's row count.

#include <cstdint>
#include <string>
#include <string_view>

#include "eredu/core/neural_specs.hpp"
#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/geometry.hpp"

namespace eredu::checkpoint {
class GgufContents;
class TensorCatalog;
}  // namespace eredu::checkpoint

namespace eredu::model::decoder {

// What a family fixes about the decoder block.
struct DecoderTraits {
  // How the checkpoint's Q/K rows pair rotary dimensions: GGUF llama/mistral files store them
  // permuted to consecutive pairs (llama.cpp rope type NORM); qwen2/qwen3 keep HF's half split.
  RotaryLayout rotary_layout = RotaryLayout::kInterleaved;
  bool qkv_bias = false;        // blk.N.attn_{q,k,v}.bias are part of the schema
  bool qk_norm = false;         // blk.N.attn_{q,k}_norm.weight: per-head RMS norms before rope
  bool rotary_factors = false;  // rope_freqs.weight is read when the file has it (Llama 3.x)
};

struct DecoderConfig {
  std::string architecture;  // general.architecture
  std::uint32_t n_layer = 0;
  std::uint32_t n_embd = 0;
  std::uint32_t n_ff = 0;
  std::uint32_t n_head = 0;
  std::uint32_t n_head_kv = 0;
  std::uint32_t head_dim = 0;  // key (= value) length per head; n_embd / n_head by default
  std::uint32_t n_rot = 0;     // rotated dimensions per head
  std::uint32_t n_ctx_train = 0;
  std::uint32_t n_vocab = 0;
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
  RotaryLayout rotary_layout = RotaryLayout::kInterleaved;
  bool qkv_bias = false;
  bool qk_norm = false;
  bool rotary_factors = false;  // the checkpoint has rope_freqs.weight and the family reads it
  bool tied_output = false;     // no output.weight: the output matrix is token_embd.weight

  [[nodiscard]] std::uint32_t n_q() const noexcept { return n_head * head_dim; }
  [[nodiscard]] std::uint32_t n_embd_kv() const noexcept { return n_head_kv * head_dim; }
};

// Reads and validates the configuration of `architecture` with `traits` from a GGUF file's
// metadata and its tensor catalog (which says whether output.weight / rope_freqs.weight exist).
// Errors: kUnsupported for an unsupported rope scaling type or value_length != key_length;
// kInvalidModel for a missing, mistyped or absurd hyper-parameter (subject = the key).
[[nodiscard]] Result<DecoderConfig> read_decoder_config(const checkpoint::GgufContents& gguf,
                                                        const checkpoint::TensorCatalog& catalog,
                                                        std::string_view architecture,
                                                        const DecoderTraits& traits);

// read_decoder_config for a family: first checks that the file's general.architecture is
// `architecture` (kUnsupported naming both otherwise).
[[nodiscard]] Result<DecoderConfig> read_family_config(const checkpoint::GgufContents& gguf,
                                                       const checkpoint::TensorCatalog& catalog,
                                                       std::string_view architecture,
                                                       const DecoderTraits& traits);

// The cross-parameter invariants of an already filled config (read_decoder_config calls it;
// public so tests and other loaders can check a hand-made config).
[[nodiscard]] Result<void> validate_decoder_config(const DecoderConfig& config);

// The optional operators a model of this config calls.
[[nodiscard]] OperatorCapabilities required_operators(const DecoderConfig& config) noexcept;

[[nodiscard]] inline ModelGeometry geometry(const DecoderConfig& c) noexcept {
  return ModelGeometry{c.n_layer,     c.n_head_kv, c.head_dim, c.n_vocab,
                       c.n_ctx_train, c.n_embd,    c.n_head,   c.n_ff};
}

}  // namespace eredu::model::decoder
