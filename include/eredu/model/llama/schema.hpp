#pragma once
// The tensor schema of a GGUF llama / mistral checkpoint: every parameter the forward pass binds,
// its expected shape derived from the LlamaConfig, the recipe that produces it (a plain Source:
// GGUF stores these weights exactly as the forward pass consumes them), and whether it is an
// alias (the tied output projection reuses token_embd when `output.weight` is absent).
//
// Shapes are row-major, outermost first (a GGUF `ne` reversed): a linear weight is [out, in].
// Norm gains are vectors and must be F32 / F16 / BF16; matrices may use any encoding the backend
// accepts (the backend's preflight says which).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eredu/checkpoint/recipe.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/llama/config.hpp"

namespace eredu::model::llama {

enum class TensorClass : std::uint8_t { kVector, kMatrix };

struct ParameterSchema {
  std::string id;                    // the parameter's stable id (its GGUF tensor name)
  std::vector<std::uint64_t> shape;  // expected shape
  TensorClass tensor_class = TensorClass::kMatrix;
  checkpoint::DerivedWeightRecipe recipe;  // how to build it (owners only)
  std::optional<std::string> alias_of;     // set: share the weight of that parameter instead
};

// Parameter ids of layer `layer`.
struct LayerNames {
  std::string attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down;
};
[[nodiscard]] LayerNames layer_names(std::uint32_t layer);

inline constexpr const char* kTokenEmbd = "token_embd.weight";
inline constexpr const char* kOutputNorm = "output_norm.weight";
inline constexpr const char* kOutput = "output.weight";

// The schema for `config` over `catalog`: every required tensor must exist with exactly its
// expected shape (kInvalidModel: "tensor X has wrong shape; expected [..], got [..]" or "tensor X
// is missing"); vectors must be F32/F16/BF16 (kUnsupported otherwise). `output.weight` is optional;
// when absent the schema lists it as an alias of token_embd.weight. Metadata only.
[[nodiscard]] Result<std::vector<ParameterSchema>> llama_schema(
    const LlamaConfig& config, const checkpoint::TensorCatalog& catalog);

// "[a, b]" for messages.
[[nodiscard]] std::string format_shape(const std::vector<std::uint64_t>& shape);

}  // namespace eredu::model::llama
