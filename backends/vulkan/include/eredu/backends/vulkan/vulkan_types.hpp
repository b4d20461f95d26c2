#pragma once
// Value types of VulkanBackend: activations, weights, the KV cache, completions and options.
// Activations and weights are handles on device-local buffers; nothing here holds host copies
// except a session output's logits, which its own submission downloads.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/backends/vulkan/kv_cache.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/result.hpp"

namespace eredu::vulkan {

// Element type of the KV cache (core's, so every backend's load options read the same).
using KvCacheType = ::eredu::KvCacheType;

// An activation: a row-major [rows, cols] F32 matrix in a pooled device-local buffer. It is
// valid once the submission that computes it completes; `host` and `ready` are set on session
// outputs (the logits are downloaded by that same submission).
struct VulkanTensor {
  std::size_t rows = 0;
  std::size_t cols = 0;
  BufferPtr buffer;
  std::shared_ptr<std::vector<float>> host;
  Completion ready;
};

// A weight resident in device-local memory, packed blocks exactly as the checkpoint stores them
// (vectors -- norm gains -- are held as F32). Also the parameter slot: an unbound slot has its
// expected `shape`, a `name` and no buffer.
struct VulkanWeight {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::uint64_t> shape;  // row-major, outermost first: [rows, cols] or [n]
  BufferPtr buffer;
  std::size_t bytes = 0;  // packed size (the buffer may be rounded up)
  // Vectors only: their F32 values on the host too (tiny; the rotary table is built on the host
  // from the frequency factors).
  std::shared_ptr<const std::vector<float>> host_values;

  [[nodiscard]] bool bound() const noexcept { return buffer != nullptr; }
  [[nodiscard]] std::size_t rows() const noexcept {
    return shape.size() == 2 ? static_cast<std::size_t>(shape[0]) : 1;
  }
  [[nodiscard]] std::size_t cols() const noexcept {
    return shape.empty() ? 0 : static_cast<std::size_t>(shape.back());
  }
};

// One session's KV cache in device-local memory (see kv_cache.hpp), written by a shader inside
// the forward pass's command buffer.
struct VulkanKvCache {
  KvCacheSpec spec;
  std::shared_ptr<KvCache> cache;
};

// The completion of one submission: waits for its own timeline value only and keeps that
// submission's buffers alive until then. Move-only (one owner waits).
class VulkanCompletion {
 public:
  using error_type = Error;
  VulkanCompletion() = default;
  explicit VulkanCompletion(Completion c) : completion_(std::move(c)) {}
  VulkanCompletion(VulkanCompletion&&) noexcept = default;
  VulkanCompletion& operator=(VulkanCompletion&&) noexcept = default;
  VulkanCompletion(const VulkanCompletion&) = delete;
  VulkanCompletion& operator=(const VulkanCompletion&) = delete;
  [[nodiscard]] Result<bool> is_complete() { return completion_.ready(); }
  [[nodiscard]] Result<void> wait() { return completion_.wait(); }
  // The timeline value of the submission (tests check that two submissions differ).
  [[nodiscard]] std::uint64_t value() const noexcept { return completion_.value(); }

 private:
  Completion completion_;
};

// Text generation samples on the host after the logits arrived, so its token is born complete.
class VulkanReadyCompletion {
 public:
  using error_type = Error;
  VulkanReadyCompletion() = default;
  VulkanReadyCompletion(VulkanReadyCompletion&&) noexcept = default;
  VulkanReadyCompletion& operator=(VulkanReadyCompletion&&) noexcept = default;
  VulkanReadyCompletion(const VulkanReadyCompletion&) = delete;
  VulkanReadyCompletion& operator=(const VulkanReadyCompletion&) = delete;
  [[nodiscard]] Result<bool> is_complete() { return true; }
  [[nodiscard]] Result<void> wait() { return ok(); }
};

// Which device a backend instance runs on.
struct VulkanBackendOptions {
  // Empty: the best usable device (discrete GPU over integrated, virtual, other, then CPU such as
  // llvmpipe); all digits: that index; otherwise the first device whose name contains it.
  std::string device;
  // VK_LAYER_KHRONOS_validation; every message goes to on_validation_message, or (when that is
  // empty) to the log as an error.
  bool validation = false;
  std::function<void(std::string_view)> on_validation_message;
};

}  // namespace eredu::vulkan
