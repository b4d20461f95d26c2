// The llama-family tensor schema (see schema.hpp).
#include "eredu/model/llama/schema.hpp"

#include <string>

namespace eredu::model::llama {

std::string format_shape(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

LayerNames layer_names(std::uint32_t layer) {
  const std::string b = "blk." + std::to_string(layer) + ".";
  return LayerNames{b + "attn_norm.weight", b + "attn_q.weight",      b + "attn_k.weight",
                    b + "attn_v.weight",    b + "attn_output.weight", b + "ffn_norm.weight",
                    b + "ffn_gate.weight",  b + "ffn_up.weight",      b + "ffn_down.weight"};
}

namespace {

Result<ParameterSchema> owner(const checkpoint::TensorCatalog& catalog, const std::string& id,
                              std::vector<std::uint64_t> shape, TensorClass tensor_class) {
  const checkpoint::TensorMetadata* meta = catalog.find(id);
  if (meta == nullptr) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + id + " is missing").with_subject(id));
  }
  if (meta->shape != shape) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + id + " has wrong shape; expected " +
                                                    format_shape(shape) + ", got " +
                                                    format_shape(meta->shape))
                    .with_subject(id)
                    .with_path(meta->shard_path));
  }
  if (tensor_class == TensorClass::kVector && meta->dtype != DType::kF32 &&
      meta->dtype != DType::kF16 && meta->dtype != DType::kBF16) {
    return fail(Error(ErrorCode::kUnsupported, "tensor " + id + " is a norm vector stored as " +
                                                   std::string(dtype_info(meta->dtype).name) +
                                                   "; expected F32, F16 or BF16")
                    .with_subject(id));
  }
  return ParameterSchema{id, std::move(shape), tensor_class,
                         checkpoint::DerivedWeightRecipe::source(id), std::nullopt};
}

}  // namespace

Result<std::vector<ParameterSchema>> llama_schema(const LlamaConfig& c,
                                                  const checkpoint::TensorCatalog& catalog) {
  const std::uint64_t embd = c.n_embd, kv = c.n_embd_kv(), ff = c.n_ff, vocab = c.n_vocab;
  std::vector<ParameterSchema> out;
  out.reserve(3 + 9 * static_cast<std::size_t>(c.n_layer));
  using V = std::vector<std::uint64_t>;
  EREDU_TRY(auto embd_p, owner(catalog, kTokenEmbd, V{vocab, embd}, TensorClass::kMatrix));
  out.push_back(std::move(embd_p));
  EREDU_TRY(auto norm_p, owner(catalog, kOutputNorm, V{embd}, TensorClass::kVector));
  out.push_back(std::move(norm_p));
  if (catalog.contains(kOutput)) {
    EREDU_TRY(auto out_p, owner(catalog, kOutput, V{vocab, embd}, TensorClass::kMatrix));
    out.push_back(std::move(out_p));
  } else {
    out.push_back(ParameterSchema{kOutput, V{vocab, embd}, TensorClass::kMatrix,
                                  checkpoint::DerivedWeightRecipe::source(kTokenEmbd),
                                  std::string(kTokenEmbd)});
  }
  for (std::uint32_t layer = 0; layer < c.n_layer; ++layer) {
    const LayerNames n = layer_names(layer);
    const std::pair<const std::string*, std::pair<V, TensorClass>> entries[] = {
        {&n.attn_norm, {V{embd}, TensorClass::kVector}},
        {&n.attn_q, {V{embd, embd}, TensorClass::kMatrix}},
        {&n.attn_k, {V{kv, embd}, TensorClass::kMatrix}},
        {&n.attn_v, {V{kv, embd}, TensorClass::kMatrix}},
        {&n.attn_output, {V{embd, embd}, TensorClass::kMatrix}},
        {&n.ffn_norm, {V{embd}, TensorClass::kVector}},
        {&n.ffn_gate, {V{ff, embd}, TensorClass::kMatrix}},
        {&n.ffn_up, {V{ff, embd}, TensorClass::kMatrix}},
        {&n.ffn_down, {V{embd, ff}, TensorClass::kMatrix}},
    };
    for (const auto& [name, spec] : entries) {
      EREDU_TRY(auto p, owner(catalog, *name, spec.first, spec.second));
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace eredu::model::llama
