// CpuBackend's ParameterBackend: recipes are whole-tensor Sources (what the family schemas emit).
// The kernels read a matrix's packed bytes in place: the weight keeps the checkpoint's mapping
// (read-only, file-backed pages the kernel can drop and re-read, not a second resident copy), and
// the lease with its shard pin is released before materialize returns. Vectors (norm weights,
// biases), bytes the source gathered into a copy, and bytes at an address less aligned than an
// allocation's are copied once, unchanged, into storage the weight owns. Either way nothing is
// densified. Where the kernel table reads an encoding faster in its row groups (AVX-512: the
// K-quants, IQ4_XS and the encodings with blocks of 32, 16 rows side by side), the weight also gets
// that second layout, made once here, and the mapped pages it was made from are let go; not an
// embedding table that no product reads (CpuMaterializationContext::rows_only: token_embd when the
// output matrix is not tied to it), whose rows are read as stored.
#include <cstddef>
#include <cstdint>
#include <new>
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

// Lays the weight out in the kernel table's row groups, where it has them for this encoding. When
// the weight reads the checkpoint's mapping, the products now read only the row groups (and the
// last rows % 16), so the mapped pages go back to the page cache instead of staying resident
// beside their copy: get_row and the tail rows read them again from the file when they need them.
Result<void> add_row_groups(CpuWeight& w, const checkpoint::MappedFile* mapping, ThreadPool* pool) {
  const KernelTable& k = kernels();
  const std::size_t bytes = k.row_group_bytes(w.dtype, w.rows(), w.cols());
  if (bytes == 0 || w.shape.size() != 2) return ok();
  constexpr std::align_val_t kAlign{64};
  std::shared_ptr<std::byte> groups;
  try {
    groups.reset(new (kAlign) std::byte[bytes],
                 [kAlign](std::byte* p) { ::operator delete[](p, kAlign); });
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kCapacityExhausted, "cannot allocate " + std::to_string(bytes) +
                                                         " bytes of row groups for tensor " +
                                                         w.name)
                    .with_subject(w.name));
  }
  // Groups are independent: the threads take whole groups (llama1b Q4_K: ~0.4 s on one thread).
  const std::size_t group_bytes = k.row_group_bytes(w.dtype, kRowGroupRows, w.cols());
  const std::size_t rows_bytes = kRowGroupRows * packed_row_bytes(w.dtype, w.cols());
  const auto* rows = static_cast<const std::byte*>(w.data());
  parallel_for(pool, bytes / group_bytes, [&](std::size_t g0, std::size_t g1) {
    k.pack_row_groups(w.dtype, rows + g0 * rows_bytes, (g1 - g0) * kRowGroupRows, w.cols(),
                      groups.get() + g0 * group_bytes);
  });
  w.row_groups = std::span<const std::byte>(groups.get(), bytes);
  w.row_group_storage = std::move(groups);
  if (mapping != nullptr) mapping->release_pages(w.bytes);
  return ok();
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
                                                   const materialization_context& context) {
  checkpoint::CheckpointLease held = std::move(lease);  // released when this function returns
  const std::vector<std::uint64_t> shape(held.output_shape().begin(), held.output_shape().end());
  EREDU_TRY_VOID(check_encoding(held.name(), held.dtype(), shape.size()));
  CpuWeight w;
  w.name = held.name();
  w.dtype = held.dtype();
  w.shape = shape;
  const std::span<const std::byte> bytes = held.bytes();
  // Vectors (norm weights, biases) are copied, not read in place: they are a few KiB, read for
  // every token, and sit in the file between the matrices, so reading one through the mapping
  // mapped back, page-cache folio by folio (megabytes with large folios), the pages of the
  // grouped matrices around it that the load had let go (smol135m Q8_0: 54 of its 146 MB).
  const bool read_in_place = shape.size() == 2;
  if (auto mapping = held.borrowed_mapping();
      mapping != nullptr && read_in_place && is_allocation_aligned(bytes)) {
    const checkpoint::MappedFile* file = mapping.get();
    w.storage = std::move(mapping);
    w.bytes = bytes;
    if (!context.rows_only) EREDU_TRY_VOID(add_row_groups(w, file, context.pool));
    return CpuMaterialization{std::move(w)};
  }
  try {
    w.hold(std::vector<std::byte>(bytes.begin(), bytes.end()));
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kCapacityExhausted, "cannot allocate tensor " + held.name())
                    .with_subject(held.name()));
  }
  if (!context.rows_only) EREDU_TRY_VOID(add_row_groups(w, nullptr, context.pool));
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
