// The decoder tensor schema (see schema.hpp).
#include "eredu/model/decoder/schema.hpp"

#include <string>
#include <utility>

namespace eredu::model::decoder {

LayerNames layer_names(std::uint32_t layer) {
  const std::string b = "blk." + std::to_string(layer) + ".";
  LayerNames n;
  n.attn_norm = b + "attn_norm.weight";
  n.attn_q = b + "attn_q.weight";
  n.attn_k = b + "attn_k.weight";
  n.attn_v = b + "attn_v.weight";
  n.attn_q_bias = b + "attn_q.bias";
  n.attn_k_bias = b + "attn_k.bias";
  n.attn_v_bias = b + "attn_v.bias";
  n.attn_q_norm = b + "attn_q_norm.weight";
  n.attn_k_norm = b + "attn_k_norm.weight";
  n.attn_output = b + "attn_output.weight";
  n.ffn_norm = b + "ffn_norm.weight";
  n.ffn_gate = b + "ffn_gate.weight";
  n.ffn_up = b + "ffn_up.weight";
  n.ffn_down = b + "ffn_down.weight";
  return n;
}

Result<std::vector<ParameterSchema>> decoder_schema(const DecoderConfig& c,
                                                    const checkpoint::TensorCatalog& catalog) {
  using V = std::vector<std::uint64_t>;
  const std::uint64_t embd = c.n_embd, q = c.n_q(), kv = c.n_embd_kv(), ff = c.n_ff,
                      vocab = c.n_vocab, hd = c.head_dim;
  std::vector<ParameterSchema> out;
  auto add = [&](const std::string& id, V shape, TensorClass cls) -> Result<void> {
    EREDU_TRY(ParameterSchema p, stored_parameter(catalog, id, std::move(shape), cls));
    out.push_back(std::move(p));
    return ok();
  };
  // Tied, token_embd is also the output matrix; otherwise only its rows are read.
  EREDU_TRY_VOID(
      add(kTokenEmbd, V{vocab, embd}, c.tied_output ? TensorClass::kMatrix : TensorClass::kTable));
  EREDU_TRY_VOID(add(kOutputNorm, V{embd}, TensorClass::kVector));
  if (c.tied_output) {
    out.push_back(aliased_parameter(kOutput, V{vocab, embd}, kTokenEmbd));
  } else {
    EREDU_TRY_VOID(add(kOutput, V{vocab, embd}, TensorClass::kMatrix));
  }
  if (c.rotary_factors) EREDU_TRY_VOID(add(kRopeFreqs, V{c.n_rot / 2}, TensorClass::kVector));
  for (std::uint32_t layer = 0; layer < c.n_layer; ++layer) {
    const LayerNames n = layer_names(layer);
    EREDU_TRY_VOID(add(n.attn_norm, V{embd}, TensorClass::kVector));
    EREDU_TRY_VOID(add(n.attn_q, V{q, embd}, TensorClass::kMatrix));
    EREDU_TRY_VOID(add(n.attn_k, V{kv, embd}, TensorClass::kMatrix));
    EREDU_TRY_VOID(add(n.attn_v, V{kv, embd}, TensorClass::kMatrix));
    if (c.qkv_bias) {
      EREDU_TRY_VOID(add(n.attn_q_bias, V{q}, TensorClass::kVector));
      EREDU_TRY_VOID(add(n.attn_k_bias, V{kv}, TensorClass::kVector));
      EREDU_TRY_VOID(add(n.attn_v_bias, V{kv}, TensorClass::kVector));
    }
    if (c.qk_norm) {
      EREDU_TRY_VOID(add(n.attn_q_norm, V{hd}, TensorClass::kVector));
      EREDU_TRY_VOID(add(n.attn_k_norm, V{hd}, TensorClass::kVector));
    }
    EREDU_TRY_VOID(add(n.attn_output, V{embd, q}, TensorClass::kMatrix));
    EREDU_TRY_VOID(add(n.ffn_norm, V{embd}, TensorClass::kVector));
    EREDU_TRY_VOID(add(n.ffn_gate, V{ff, embd}, TensorClass::kMatrix));
    EREDU_TRY_VOID(add(n.ffn_up, V{ff, embd}, TensorClass::kMatrix));
    EREDU_TRY_VOID(add(n.ffn_down, V{embd, ff}, TensorClass::kMatrix));
  }
  return out;
}

}  // namespace eredu::model::decoder
