// CpuBackend's ParameterBackend: recipes are whole-tensor Sources (what the family schemas emit).
// The kernels read a lease's packed bytes in place: the weight keeps the checkpoint's mapping
// (read-only, file-backed pages the kernel can drop and re-read, not a second resident copy), and
// the lease with its shard pin is released before materialize returns. Bytes the source gathered
// into a copy, or that sit at an address less aligned than an allocation's, are copied once,
// unchanged, into storage the weight owns. Either way nothing is densified.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/runtime/weight_checks.hpp"

namespace eredu::cpu {
namespace {

// Bytes read in place must be as aligned as the copy they replace (operator new's alignment), so
// that no kernel sees a weaker alignment than it did with a copy. GGUF aligns tensor data to 32
// bytes by default.
bool is_allocation_aligned(std::span<const std::byte> bytes) {
  return reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(std::max_align_t) == 0;
}

Result<void> check_encoding(const std::string& name, DType dtype, std::size_t rank) {
  return runtime::check_tensor_encoding("cpu", name, dtype, rank,
                                        [](DType d) { return kernels().supports_matmul(d); });
}

}  // namespace

Result<void> CpuBackend::preflight_recipe(const checkpoint::DerivedWeightRecipe& recipe,
                                          const checkpoint::CheckpointSource& source) {
  EREDU_TRY(auto src, runtime::whole_tensor_source(recipe, "cpu"));
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
  const std::span<const std::byte> bytes = held.bytes();
  if (auto mapping = held.borrowed_mapping(); mapping != nullptr && is_allocation_aligned(bytes)) {
    w.storage = std::move(mapping);
    w.bytes = bytes;
    return CpuMaterialization{std::move(w)};
  }
  try {
    w.hold(std::vector<std::byte>(bytes.begin(), bytes.end()));
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kCapacityExhausted, "cannot allocate tensor " + held.name())
                    .with_subject(held.name()));
  }
  return CpuMaterialization{std::move(w)};
}

Result<CpuMaterialization> CpuBackend::materialize_recipe(
    const checkpoint::DerivedWeightRecipe& recipe, const checkpoint::CheckpointSource& source,
    const materialization_context& context) {
  EREDU_TRY(auto src, runtime::whole_tensor_source(recipe, "cpu"));
  EREDU_TRY(auto lease, source.acquire_lease(checkpoint::TensorReadRequest{src->key}));
  return materialize(std::move(lease), context);
}

Result<void> CpuBackend::validate_bind(const parameter& slot, const materialized_weight& w) {
  if (!w.bound()) {
    return fail(Error(ErrorCode::kInvalidArgument, "weight for '" + slot.name + "' holds no data")
                    .with_subject(slot.name));
  }
  EREDU_TRY_VOID(runtime::check_bind_shape(slot.name, slot.shape, w.name, w.shape));
  EREDU_TRY_VOID(check_encoding(w.name, w.dtype, w.shape.size()));
  return runtime::check_bind_bytes(slot.name, w.name, w.dtype, w.shape, w.bytes.size());
}

}  // namespace eredu::cpu
