// CpuBackend's ParameterBackend: recipes are whole-tensor Sources (what the family schemas emit).
// The kernels read a matrix's packed bytes in place: the weight keeps the checkpoint's mapping
// (read-only, file-backed pages the kernel can drop and re-read, not a second resident copy), and
// the lease with its shard pin is released before materialize returns. Vectors (norm weights,
// biases), bytes the source gathered into a copy, and bytes at an address less aligned than an
// allocation's are copied once, unchanged, into storage the weight owns. Either way nothing is
// densified. Where the kernel table reads an encoding faster in its row groups (AVX-512: the
// K-quants, IQ4_XS and the encodings with blocks of 32, 16 rows side by side), the weight also gets
// that second layout, made once here; not an embedding table that no product reads
// (CpuMaterializationContext::rows_only: token_embd when the output matrix is not tied to it),
// whose rows are read as stored.
//
// What the load copies out of a mapped file (vectors, the rows a matrix's row groups are made
// from) it reads with read(2) (MappedFile::copy_out), never through the mapping: the products read
// a grouped matrix's row groups, not its mapped rows, so those pages should never be mapped into
// the process. A read through the mapping would map them, and not only its own: Linux maps every
// page-cache page in a 64 KiB window around a fault, so copying a norm vector through the mapping
// mapped back the tail of the matrix before it, and made the pages a model keeps resident depend
// on readahead's timing (smol135m Q8_0 once kept 54 MB of its file mapped beside its 141 MB of
// row groups).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/huge_pages.hpp"
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

// Copies `bytes` into `out`: from the file with read(2) where they are a mapping's, else from
// memory (a gathered copy).
Result<void> copy_bytes(const checkpoint::MappedFile* mapping, std::span<const std::byte> bytes,
                        std::byte* out) {
  if (mapping != nullptr) return mapping->copy_out(bytes, out);
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return ok();
}

// The rows a thread packs at a time when the rows are read from a file: a few hundred KiB, so the
// staged rows are still in the core's L2 when the packing reads them.
constexpr std::size_t kStagedRowBytes = std::size_t{256} << 10;

// Lays the weight out in the kernel table's row groups, where it has them for this encoding. When
// the weight's rows are in a checkpoint's mapping, each thread reads its groups' rows from the
// file into a staging buffer and packs them from there, so that none of the mapped pages is
// faulted in: the products read only the row groups (and the last rows % 16, which map their own
// pages when a product first reads them), and get_row reads the rows from the file when it needs
// them.
Result<void> add_row_groups(CpuWeight& w, const checkpoint::MappedFile* mapping, ThreadPool* pool,
                            HugePageAdvice huge_pages) {
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
  // Every token streams the groups once: huge pages for them (huge_pages.hpp), advised before the
  // packing below first writes them, or after.
  if (huge_pages == HugePageAdvice::kBeforeFirstWrite) advise_huge_pages(groups.get(), bytes);
  // Groups are independent: the threads take whole groups (llama1b Q4_K: ~0.4 s on one thread).
  const std::size_t group_bytes = k.row_group_bytes(w.dtype, kRowGroupRows, w.cols());
  const std::size_t rows_bytes = kRowGroupRows * packed_row_bytes(w.dtype, w.cols());
  const std::size_t staged_groups = std::max<std::size_t>(1, kStagedRowBytes / rows_bytes);
  const auto* rows = static_cast<const std::byte*>(w.data());
  std::mutex error_mutex;
  std::optional<Error> read_error;
  try {
    parallel_for(pool, bytes / group_bytes, [&](std::size_t g0, std::size_t g1) {
      if (mapping == nullptr) {  // rows the weight owns: packed where they are
        k.pack_row_groups(w.dtype, rows + g0 * rows_bytes, (g1 - g0) * kRowGroupRows, w.cols(),
                          groups.get() + g0 * group_bytes);
        return;
      }
      std::vector<std::byte> staged(std::min(g1 - g0, staged_groups) * rows_bytes);
      for (std::size_t g = g0; g < g1; g += staged_groups) {
        const std::size_t n = std::min(g1 - g, staged_groups);
        const std::span<const std::byte> from(rows + g * rows_bytes, n * rows_bytes);
        if (auto copied = mapping->copy_out(from, staged.data()); !copied) {
          const std::lock_guard lock(error_mutex);
          if (!read_error) read_error = copied.error();
          return;
        }
        k.pack_row_groups(w.dtype, staged.data(), n * kRowGroupRows, w.cols(),
                          groups.get() + g * group_bytes);
      }
    });
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kCapacityExhausted,
                      "cannot allocate the rows staged to make the row groups of tensor " + w.name)
                    .with_subject(w.name));
  }
  if (read_error) return fail(Error(*read_error).with_subject(w.name));
  if (huge_pages == HugePageAdvice::kAfterFirstWrite) advise_huge_pages(groups.get(), bytes);
  w.row_groups = std::span<const std::byte>(groups.get(), bytes);
  w.row_group_storage = std::move(groups);
  return ok();
}

HugePageAdvice huge_page_advice(const CpuMaterializationContext& context) {
  return context.huge_pages.value_or(weights_huge_page_advice());
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
  // every token, and sit in the file between the matrices (see the note at the top on why the
  // copy is read from the file).
  const bool read_in_place = shape.size() == 2;
  const std::shared_ptr<const checkpoint::MappedFile> mapping = held.borrowed_mapping();
  if (mapping != nullptr && read_in_place && is_allocation_aligned(bytes)) {
    w.storage = mapping;
    w.bytes = bytes;
    if (!context.rows_only)
      EREDU_TRY_VOID(add_row_groups(w, mapping.get(), context.pool, huge_page_advice(context)));
    return CpuMaterialization{std::move(w)};
  }
  try {
    std::vector<std::byte> copy(bytes.size());
    if (auto copied = copy_bytes(mapping.get(), bytes, copy.data()); !copied) {
      return fail(Error(copied.error()).with_subject(held.name()));
    }
    w.hold(std::move(copy));
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kCapacityExhausted, "cannot allocate tensor " + held.name())
                    .with_subject(held.name()));
  }
  if (!context.rows_only)
    EREDU_TRY_VOID(add_row_groups(w, nullptr, context.pool, huge_page_advice(context)));
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
