#pragma once
// A family's tensor schema: every parameter its forward pass binds, with the shape it expects, the
// recipe that produces it and whether it is an alias of another parameter's weight (tied
// embeddings: no `output.weight`, the output matrix is `token_embd.weight`).
//
// Shapes are row-major, outermost first (a GGUF `ne` reversed): a linear weight is [out, in].
// Vectors (norm gains, biases, rotary factors) must be F32 / F16 / BF16; matrices may use any
// encoding the backend accepts (the backend's preflight says which).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eredu/checkpoint/recipe.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/result.hpp"
#include "eredu/core/shape.hpp"

namespace eredu::model {

// kTable: a matrix the forward pass only reads a row at a time (an embedding table that is not also
// the output matrix), so a backend need not lay it out for products.
enum class TensorClass : std::uint8_t { kVector, kMatrix, kTable };

struct ParameterSchema {
  std::string id;                    // the parameter's stable id (its GGUF tensor name)
  std::vector<std::uint64_t> shape;  // expected shape
  TensorClass tensor_class = TensorClass::kMatrix;
  checkpoint::DerivedWeightRecipe recipe;  // how to build it (owners only)
  std::optional<std::string> alias_of;     // set: share the weight of that parameter instead
};

// The entry of tensor `id` as stored: kInvalidModel naming it when it is missing or has another
// shape; kUnsupported when a vector is stored in an encoding other than F32/F16/BF16.
[[nodiscard]] Result<ParameterSchema> stored_parameter(const checkpoint::TensorCatalog& catalog,
                                                       const std::string& id,
                                                       std::vector<std::uint64_t> shape,
                                                       TensorClass tensor_class);

// An alias: parameter `id` shares the weight of `owner` (which the schema lists as an owner).
[[nodiscard]] ParameterSchema aliased_parameter(const std::string& id,
                                                std::vector<std::uint64_t> shape,
                                                const std::string& owner);

}  // namespace eredu::model
