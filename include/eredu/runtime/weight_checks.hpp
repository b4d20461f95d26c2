#pragma once
// The ParameterBackend checks every backend makes alike, written once (the CPU, Vulkan and CUDA
// backends call them from their preflight_recipe / materialize / validate_bind; what differs is
// only which matrix encodings their kernels run):
//   - a recipe must be a whole-tensor Source (what the family schemas emit);
//   - a tensor must be a vector of F32 / F16 / BF16 (norm gains, biases, rotary factors: every
//     backend decodes them to F32) or a matrix of an encoding the backend's kernels run;
//   - a weight bound to a slot must have the slot's shape and the byte size of its encoding.
// Every failure names the tensor (and the slot) as its subject.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "eredu/checkpoint/recipe.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"
#include "eredu/core/shape.hpp"

namespace eredu::runtime {

// The recipe's Source node when it reads one whole tensor; kUnsupported otherwise, naming the
// backend ("cpu backend materializes whole-tensor Source recipes only, not '...'").
[[nodiscard]] inline Result<const checkpoint::DerivedWeightRecipe::Source*> whole_tensor_source(
    const checkpoint::DerivedWeightRecipe& recipe, std::string_view backend) {
  const auto* source = std::get_if<checkpoint::DerivedWeightRecipe::Source>(&recipe.node());
  if (source == nullptr || !std::holds_alternative<checkpoint::FullSelection>(source->selection)) {
    return fail(Error(ErrorCode::kUnsupported,
                      std::string(backend) +
                          " backend materializes whole-tensor Source recipes only, not '" +
                          std::string(recipe.kind_name()) + "'"));
  }
  return source;
}

// The encodings of vectors every backend takes (and decodes to F32).
[[nodiscard]] constexpr bool is_vector_encoding(DType dtype) noexcept {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

// Tensor `name` of `dtype` and `rank` is one `backend` runs: a vector of a vector encoding, or a
// matrix whose encoding `matrix_supported(dtype)` accepts. kUnsupported otherwise.
template <typename MatrixSupported>
[[nodiscard]] Result<void> check_tensor_encoding(std::string_view backend, const std::string& name,
                                                 DType dtype, std::size_t rank,
                                                 MatrixSupported&& matrix_supported) {
  const bool ok_dtype = rank == 1 ? is_vector_encoding(dtype) : matrix_supported(dtype);
  if (!ok_dtype || rank == 0 || rank > 2) {
    return fail(Error(ErrorCode::kUnsupported, std::string(backend) +
                                                   " backend cannot run tensor " + name + " (" +
                                                   std::string(dtype_info(dtype).name) + ", rank " +
                                                   std::to_string(rank) + ")")
                    .with_subject(name));
  }
  return ok();
}

// A weight (`weight_name`, `weight_shape`) bound to slot `slot_name` that declares `slot_shape`
// (empty: any) has that shape. kInvalidModel otherwise.
[[nodiscard]] inline Result<void> check_bind_shape(const std::string& slot_name,
                                                   const std::vector<std::uint64_t>& slot_shape,
                                                   const std::string& weight_name,
                                                   const std::vector<std::uint64_t>& weight_shape) {
  if (!slot_shape.empty() && weight_shape != slot_shape) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + weight_name +
                                                    " has wrong shape for parameter '" + slot_name +
                                                    "'; expected " + format_shape(slot_shape) +
                                                    ", got " + format_shape(weight_shape))
                    .with_subject(slot_name));
  }
  return ok();
}

// The weight holds `bytes` bytes, exactly what `dtype` packs `shape` into. kInvalidModel
// otherwise.
[[nodiscard]] inline Result<void> check_bind_bytes(const std::string& slot_name,
                                                   const std::string& weight_name, DType dtype,
                                                   std::span<const std::uint64_t> shape,
                                                   std::size_t bytes) {
  const auto expected = checked_byte_size(dtype, shape);
  if (!expected || *expected != bytes) {
    return fail(
        Error(ErrorCode::kInvalidModel, "weight " + weight_name + " has the wrong byte size")
            .with_subject(slot_name));
  }
  return ok();
}

}  // namespace eredu::runtime
