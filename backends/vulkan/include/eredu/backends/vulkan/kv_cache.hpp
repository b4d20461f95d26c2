#pragma once
// A session's KV cache in device-local memory: per layer one K and one V buffer of
// [capacity][n_head_kv][head_dim] elements, F32 or F16, position-major (the layout the CPU
// backend's attention reads too). Rows are written through staging uploads; attention reads them in place.
// The cache has one length shared by all layers; checkpoint() returns it and truncate() rolls
// back to it (the rows past it are simply overwritten by later writes).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::vulkan {

class KvCache {
 public:
  // kUnsupported for a dtype other than F32/F16; kCapacityExhausted when device memory is short.
  // Resolves the kv_store pipeline record_write dispatches, so recording does no look-up.
  static Result<KvCache> create(std::shared_ptr<Device> device, std::size_t n_layers,
                                std::size_t capacity, std::size_t n_head_kv, std::size_t head_dim,
                                DType dtype);

  // Writes n_tokens rows of F32 keys and values ([n_tokens][n_head_kv][head_dim]) of `layer` at
  // positions start..start+n_tokens-1 (converted to F16 on the host for an F16 cache). Positions
  // must lie within the capacity and start at or before the current length; the length becomes
  // max(length, start + n_tokens).
  Result<void> write(std::size_t layer, std::size_t start, const float* k, const float* v,
                     std::size_t n_tokens);

  // The same inside a recording: k and v are device buffers of F32 rows; a kv_store shader
  // converts (F16) and stores them, ordered after the commands recorded before it. The length is
  // updated now (the caller truncates back if the recording is abandoned). An F16 cache needs an
  // even n_head_kv * head_dim.
  Result<void> record_write(Recorder& r, std::size_t layer, std::size_t start, const BufferPtr& k,
                            const BufferPtr& v, std::size_t n_tokens);

  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t n_head_kv() const noexcept { return n_head_kv_; }
  [[nodiscard]] std::size_t head_dim() const noexcept { return head_dim_; }
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] std::size_t checkpoint() const noexcept { return length_; }
  // Drops every position at or after `length`; kInvalidArgument when it exceeds the length.
  Result<void> truncate(std::size_t length);

  [[nodiscard]] const BufferPtr& keys(std::size_t layer) const { return k_[layer]; }
  [[nodiscard]] const BufferPtr& values(std::size_t layer) const { return v_[layer]; }
  [[nodiscard]] std::size_t n_layers() const noexcept { return k_.size(); }

 private:
  KvCache() = default;
  std::shared_ptr<Device> device_;
  const Pipeline* store_ = nullptr;  // kv_store_f32 / kv_store_f16, owned by the device
  std::vector<BufferPtr> k_;
  std::vector<BufferPtr> v_;
  std::size_t capacity_ = 0;
  std::size_t n_head_kv_ = 0;
  std::size_t head_dim_ = 0;
  std::size_t length_ = 0;
  DType dtype_ = DType::kF32;
};

}  // namespace eredu::vulkan
