#pragma once
// The tensor schema of a decoder checkpoint (GGUF names): every parameter the forward pass binds,
// its expected shape derived from the DecoderConfig, and whether it is an alias (tied output).
//
//   token_embd.weight [vocab, embd]   output_norm.weight [embd]   output.weight [vocab, embd]
//   rope_freqs.weight [n_rot / 2]                                 (config.rotary_factors)
//   blk.N.attn_norm.weight [embd]
//   blk.N.attn_q.weight [n_head * head_dim, embd]   blk.N.attn_q.bias [n_head * head_dim]
//   blk.N.attn_k.weight [kv, embd]                  blk.N.attn_k.bias [kv]      (qkv_bias)
//   blk.N.attn_v.weight [kv, embd]                  blk.N.attn_v.bias [kv]
//   blk.N.attn_q_norm.weight [head_dim]  blk.N.attn_k_norm.weight [head_dim]    (qk_norm)
//   blk.N.attn_output.weight [embd, n_head * head_dim]
//   blk.N.ffn_norm.weight [embd]   blk.N.ffn_gate.weight / ffn_up.weight [ff, embd]
//   blk.N.ffn_down.weight [embd, ff]
// (kv = n_head_kv * head_dim.)

#include <cstdint>
#include <string>
#include <vector>

#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/decoder/config.hpp"
#include "eredu/model/parameter_schema.hpp"

namespace eredu::model::decoder {

inline constexpr const char* kTokenEmbd = "token_embd.weight";
inline constexpr const char* kOutputNorm = "output_norm.weight";
inline constexpr const char* kOutput = "output.weight";
inline constexpr const char* kRopeFreqs = "rope_freqs.weight";

// Parameter ids of layer `layer`.
struct LayerNames {
  std::string attn_norm, attn_q, attn_k, attn_v, attn_q_bias, attn_k_bias, attn_v_bias, attn_q_norm,
      attn_k_norm, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down;
};
[[nodiscard]] LayerNames layer_names(std::uint32_t layer);

// Builds the schema, checking each stored tensor's presence, shape and (for vectors) encoding.
// Errors name the tensor (subject) and, for a shape mismatch, both shapes.
[[nodiscard]] Result<std::vector<ParameterSchema>> decoder_schema(
    const DecoderConfig& config, const checkpoint::TensorCatalog& catalog);

}  // namespace eredu::model::decoder
