// CpuBackend's ParameterBackend: recipes are whole-tensor Sources (what the family schemas emit);
// a lease's packed bytes are copied once, unchanged, into storage the weight owns (no dense
// copy of quantized data), and the lease is released before materialize returns.
#include <string>
#include <variant>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/core/shape.hpp"

namespace eredu::cpu {
namespace {

Result<const checkpoint::DerivedWeightRecipe::Source*> whole_source(
    const checkpoint::DerivedWeightRecipe& recipe) {
  const auto* source = std::get_if<checkpoint::DerivedWeightRecipe::Source>(&recipe.node());
  if (source == nullptr || !std::holds_alternative<checkpoint::FullSelection>(source->selection)) {
    return fail(Error(ErrorCode::kUnsupported,
                      "cpu backend materializes whole-tensor Source recipes only, not '" +
                          std::string(recipe.kind_name()) + "'"));
  }
  return source;
}

bool is_vector_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

Result<void> check_encoding(const std::string& name, DType dtype, std::size_t rank) {
  const bool ok_dtype = rank == 1 ? is_vector_dtype(dtype) : kernels().supports_matmul(dtype);
  if (!ok_dtype || rank == 0 || rank > 2) {
    return fail(Error(ErrorCode::kUnsupported, "cpu backend cannot run tensor " + name + " (" +
                                                   std::string(dtype_info(dtype).name) + ", rank " +
                                                   std::to_string(rank) + ")")
                    .with_subject(name));
  }
  return ok();
}

}  // namespace

Result<void> CpuBackend::preflight_recipe(const checkpoint::DerivedWeightRecipe& recipe,
                                          const checkpoint::CheckpointSource& source) {
  EREDU_TRY(auto src, whole_source(recipe));
  auto meta = recipe.infer(source.catalog());
  if (!meta) return fail(Error(meta.error()));
  return check_encoding(src->key, meta->dtype, meta->shape.size());
}

Result<CpuMaterialization> CpuBackend::materialize(checkpoint::CheckpointLease&& lease,
                                                   const materialization_context&) {
  checkpoint::CheckpointLease held = std::move(lease);  // released when this function returns
  const std::vector<std::uint64_t> shape(held.output_shape().begin(), held.output_shape().end());
  EREDU_TRY_VOID(check_encoding(held.name(), held.dtype(), shape.size()));
  CpuWeight w;
  w.name = held.name();
  w.dtype = held.dtype();
  w.shape = shape;
  try {
    w.storage =
        std::make_shared<const std::vector<std::byte>>(held.bytes().begin(), held.bytes().end());
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kCapacityExhausted, "cannot allocate tensor " + held.name())
                    .with_subject(held.name()));
  }
  return CpuMaterialization{std::move(w)};
}

Result<CpuMaterialization> CpuBackend::materialize_recipe(
    const checkpoint::DerivedWeightRecipe& recipe, const checkpoint::CheckpointSource& source,
    const materialization_context& context) {
  EREDU_TRY(auto src, whole_source(recipe));
  EREDU_TRY(auto lease, source.acquire_lease(checkpoint::TensorReadRequest{src->key}));
  return materialize(std::move(lease), context);
}

Result<void> CpuBackend::validate_bind(const parameter& slot, const materialized_weight& w) {
  if (!w.bound()) {
    return fail(Error(ErrorCode::kInvalidArgument, "weight for '" + slot.name + "' holds no data")
                    .with_subject(slot.name));
  }
  if (!slot.shape.empty() && w.shape != slot.shape) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor " + w.name +
                                                    " has wrong shape for parameter '" + slot.name +
                                                    "'; expected " + format_shape(slot.shape) +
                                                    ", got " + format_shape(w.shape))
                    .with_subject(slot.name));
  }
  EREDU_TRY_VOID(check_encoding(w.name, w.dtype, w.shape.size()));
  const auto bytes = checked_byte_size(w.dtype, w.shape);
  if (!bytes || *bytes != w.storage->size()) {
    return fail(Error(ErrorCode::kInvalidModel, "weight " + w.name + " has the wrong byte size")
                    .with_subject(slot.name));
  }
  return ok();
}

}  // namespace eredu::cpu
