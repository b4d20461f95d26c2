#pragma once
// Value types of CpuBackend: activations, weights, the KV cache, completions and options.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eredu/backends/cpu/activation_allocator.hpp"
#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/backends/cpu/zeroed_pages.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cpu {

// The values of a CpuTensor: uninitialized until written, blocks reused (activation_allocator.hpp).
using ActivationValues = std::vector<float, ActivationAllocator<float>>;

// An activation: a row-major [rows, cols] F32 matrix in host memory.
struct CpuTensor {
  std::size_t rows = 0;
  std::size_t cols = 0;
  ActivationValues data;

  [[nodiscard]] std::span<const float> row(std::size_t r) const noexcept {
    return {data.data() + r * cols, cols};
  }
};

// A weight in its checkpoint encoding (packed blocks stay packed, never densified). The bytes are
// read in place from the checkpoint's mapping when they can be (`storage` then holds the mapping),
// or else copied once, as they are, into storage the weight owns; aliases share either.
// The same type serves as the parameter slot: an unbound slot has its expected `shape`, a `name`
// and no storage (MLX-style: parameter = materialized weight = weight).
struct CpuWeight {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::uint64_t> shape;     // row-major, outermost first: [rows, cols] or [n]
  std::shared_ptr<const void> storage;  // keeps `bytes` valid
  std::span<const std::byte> bytes;
  // The kernel table's row groups of this weight (KernelTable::row_group_bytes: a second layout its
  // products read faster), made once at load; empty where the table reads the encoding as stored.
  std::shared_ptr<const void> row_group_storage;  // keeps `row_groups` valid
  std::span<const std::byte> row_groups;

  // Makes the weight own `owned` (a copy, or bytes built in memory).
  void hold(std::vector<std::byte> owned) {
    auto held = std::make_shared<const std::vector<std::byte>>(std::move(owned));
    bytes = std::span<const std::byte>(*held);
    storage = std::move(held);
  }
  [[nodiscard]] bool bound() const noexcept { return storage != nullptr; }
  [[nodiscard]] const void* data() const noexcept { return bytes.data(); }
  [[nodiscard]] std::size_t rows() const noexcept {
    return shape.size() == 2 ? static_cast<std::size_t>(shape[0]) : 1;
  }
  [[nodiscard]] std::size_t cols() const noexcept {
    return shape.empty() ? 0 : static_cast<std::size_t>(shape.back());
  }
};

// Element type of the KV cache (core's, shared by every backend's load options).
using KvCacheType = ::eredu::KvCacheType;

// One session's KV cache in host memory: per layer, max_positions rows of kv_heads * head_dim
// (rounded up to whole blocks of 16 positions), keys and values separately, F32 or F16; the keys
// in the layout the kernel table's attention reads fastest (KeyLayout), the values as rows. Both
// are mapped zeroed pages, resident only as far as positions are written (zeroed_pages.hpp).
struct CpuKvCache {
  KvCacheSpec spec;
  DType dtype = DType::kF32;
  KeyLayout key_layout = KeyLayout::kRows;
  ZeroedPages keys;
  ZeroedPages values;

  [[nodiscard]] std::size_t row_elements() const noexcept {
    return static_cast<std::size_t>(spec.kv_heads) * spec.head_dim;
  }
  [[nodiscard]] std::size_t element_bytes() const noexcept { return dtype == DType::kF16 ? 2 : 4; }
  // Positions a layer has room for: max_positions in whole blocks of 16.
  [[nodiscard]] std::size_t positions_held() const noexcept {
    return (static_cast<std::size_t>(spec.max_positions) + kKeyBlockPositions - 1) /
           kKeyBlockPositions * kKeyBlockPositions;
  }
  [[nodiscard]] std::size_t layer_bytes() const noexcept {
    return row_elements() * positions_held() * element_bytes();
  }
};

// The CPU computes synchronously: when prefill/decode return, the work is done, so a completion
// is born complete. It still observes only its own submission (exact by construction).
class CpuReadyCompletion {
 public:
  using error_type = Error;
  CpuReadyCompletion() = default;
  CpuReadyCompletion(CpuReadyCompletion&&) noexcept = default;
  CpuReadyCompletion& operator=(CpuReadyCompletion&&) noexcept = default;
  CpuReadyCompletion(const CpuReadyCompletion&) = delete;
  CpuReadyCompletion& operator=(const CpuReadyCompletion&) = delete;
  [[nodiscard]] Result<bool> is_complete() { return true; }
  [[nodiscard]] Result<void> wait() { return ok(); }
};

// How the CPU backend instance runs (it owns its thread pool).
struct CpuBackendOptions {
  std::size_t threads = 0;  // 0: all hardware threads
};

}  // namespace eredu::cpu
