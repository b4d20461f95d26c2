// Device-local KV cache: allocation, staged row writes, checkpoint and truncate.
#include "eredu/backends/vulkan/kv_cache.hpp"

#include <cstring>
#include <string>

#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::vulkan {

namespace shader {
using uint = std::uint32_t;
#include "eredu/backends/vulkan/push_constants.h"
}  // namespace shader

Result<KvCache> KvCache::create(std::shared_ptr<Device> device, std::size_t n_layers,
                                std::size_t capacity, std::size_t n_head_kv, std::size_t head_dim,
                                DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kF16) {
    return fail(ErrorCode::kUnsupported,
                "vulkan: KV cache dtype must be F32 or F16, not " + std::string(to_string(dtype)));
  }
  if (device == nullptr || n_layers == 0 || capacity == 0 || n_head_kv == 0 || head_dim == 0) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: KV cache dimensions must be non-zero");
  }
  const std::size_t elem = dtype == DType::kF16 ? 2 : 4;
  const std::size_t row = n_head_kv * head_dim;
  if (row / n_head_kv != head_dim || capacity > SIZE_MAX / row / elem) {
    return fail(ErrorCode::kOverflow, "vulkan: KV cache size overflows");
  }
  KvCache cache;
  EREDU_TRY(cache.store_, device->pipeline(dtype == DType::kF16 ? "kv_store_f16" : "kv_store_f32",
                                           2, sizeof(shader::KvStorePush)));
  cache.device_ = device;
  cache.capacity_ = capacity;
  cache.n_head_kv_ = n_head_kv;
  cache.head_dim_ = head_dim;
  cache.dtype_ = dtype;
  for (std::size_t l = 0; l < n_layers; ++l) {
    EREDU_TRY(BufferPtr k, device->create_device_buffer(capacity * row * elem));
    EREDU_TRY(BufferPtr v, device->create_device_buffer(capacity * row * elem));
    cache.k_.push_back(std::move(k));
    cache.v_.push_back(std::move(v));
  }
  return cache;
}

Result<void> KvCache::write(std::size_t layer, std::size_t start, const float* k, const float* v,
                            std::size_t n_tokens) {
  if (layer >= k_.size()) {
    return fail(ErrorCode::kInvalidArgument,
                "vulkan: KV cache has no layer " + std::to_string(layer));
  }
  if (start > length_ || n_tokens > capacity_ || start > capacity_ - n_tokens) {
    return fail(ErrorCode::kLimitExceeded,
                "vulkan: KV cache write at " + std::to_string(start) + " of " +
                    std::to_string(n_tokens) + " rows exceeds the length " +
                    std::to_string(length_) + " or the capacity " + std::to_string(capacity_));
  }
  if (n_tokens == 0) return ok();
  const std::size_t count = n_tokens * n_head_kv_ * head_dim_;
  const std::size_t elem = dtype_ == DType::kF16 ? 2 : 4;
  std::vector<std::byte> kb(count * elem);
  std::vector<std::byte> vb(count * elem);
  if (dtype_ == DType::kF16) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint16_t kh = encoding::fp32_to_fp16(k[i]);
      const std::uint16_t vh = encoding::fp32_to_fp16(v[i]);
      std::memcpy(kb.data() + 2 * i, &kh, 2);
      std::memcpy(vb.data() + 2 * i, &vh, 2);
    }
  } else {
    std::memcpy(kb.data(), k, kb.size());
    std::memcpy(vb.data(), v, vb.size());
  }
  const std::size_t offset = start * n_head_kv_ * head_dim_ * elem;
  EREDU_TRY(Completion done, device_->submit([&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(k_[layer], kb, offset));
    return r.upload(v_[layer], vb, offset);
  }));
  EREDU_TRY_VOID(done.wait());
  if (start + n_tokens > length_) length_ = start + n_tokens;
  return ok();
}

Result<void> KvCache::record_write(Recorder& r, std::size_t layer, std::size_t start,
                                   const BufferPtr& k, const BufferPtr& v, std::size_t n_tokens) {
  if (layer >= k_.size()) {
    return fail(ErrorCode::kInvalidArgument,
                "vulkan: KV cache has no layer " + std::to_string(layer));
  }
  if (start > length_ || n_tokens > capacity_ || start > capacity_ - n_tokens) {
    return fail(ErrorCode::kLimitExceeded,
                "vulkan: KV cache write at " + std::to_string(start) + " of " +
                    std::to_string(n_tokens) + " rows exceeds the length " +
                    std::to_string(length_) + " or the capacity " + std::to_string(capacity_));
  }
  const std::size_t row = n_head_kv_ * head_dim_;
  const std::size_t count = n_tokens * row;
  if (k == nullptr || v == nullptr || k->size() < count * sizeof(float) ||
      v->size() < count * sizeof(float)) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: KV cache write from too small a buffer");
  }
  const bool f16 = dtype_ == DType::kF16;
  if (f16 && row % 2 != 0) {
    return fail(ErrorCode::kUnsupported, "vulkan: an F16 KV cache needs an even row width");
  }
  if (count == 0) return ok();
  if (start * row + count > UINT32_MAX / 4) {
    return fail(ErrorCode::kLimitExceeded, "vulkan: KV cache too large for 32-bit indexing");
  }
  const shader::KvStorePush push{static_cast<std::uint32_t>(count),
                                 static_cast<std::uint32_t>(start * row)};
  const std::uint32_t invocations = static_cast<std::uint32_t>(f16 ? count / 2 : count);
  const std::uint32_t groups = (invocations + 63) / 64;
  const BufferPtr kb[] = {k, k_[layer]};
  EREDU_TRY_VOID(r.dispatch(*store_, kb, &push, sizeof(push), groups));
  const BufferPtr vb[] = {v, v_[layer]};
  EREDU_TRY_VOID(r.dispatch(*store_, vb, &push, sizeof(push), groups));
  if (start + n_tokens > length_) length_ = start + n_tokens;
  return ok();
}

Result<void> KvCache::truncate(std::size_t length) {
  if (length > length_) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: cannot truncate the KV cache from " +
                                                 std::to_string(length_) + " to " +
                                                 std::to_string(length));
  }
  length_ = length;
  return ok();
}

}  // namespace eredu::vulkan
