#pragma once
// VulkanPipelines: every compute pipeline VulkanBackend's operators dispatch, resolved once per
// backend so that recording an op does no shader-name building, map look-up or locking (all three
// happen inside Device::pipeline). The fixed ops are resolved when the backend's context is
// created; a weight encoding's matmul_* / embed_* variants the first time a weight of that
// encoding is dispatched (most models use two or three of the fifteen), then read from an array
// indexed by DType. A backend is used from one thread at a time, so that fill needs no lock.

#include <array>
#include <cstddef>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::vulkan {

class VulkanPipelines {
 public:
  // Resolves (creating on first use, see Device::pipeline) every fixed-op pipeline.
  [[nodiscard]] static Result<VulkanPipelines> resolve(Device& device);

  // matmul_<encoding> / embed_<encoding>: kUnsupported for an encoding without a shader.
  [[nodiscard]] Result<const Pipeline*> matmul(DType dtype) {
    const Pipeline* p = matmul_[slot(dtype)];
    return p != nullptr ? Result<const Pipeline*>(p) : resolve_weight(matmul_, "matmul_", dtype);
  }
  [[nodiscard]] Result<const Pipeline*> embed(DType dtype) {
    const Pipeline* p = embed_[slot(dtype)];
    return p != nullptr ? Result<const Pipeline*>(p) : resolve_weight(embed_, "embed_", dtype);
  }

  // The fixed ops; never null once resolved.
  const Pipeline* rms_norm = nullptr;
  const Pipeline* rope = nullptr;
  const Pipeline* add = nullptr;
  const Pipeline* swiglu = nullptr;
  const Pipeline* bias_add = nullptr;
  const Pipeline* attention_f32 = nullptr;  // over an F32 KV cache
  const Pipeline* attention_f16 = nullptr;  // over an F16 KV cache

 private:
  static constexpr std::size_t kSlots = static_cast<std::size_t>(DType::kF8_E5M2) + 1;
  using Table = std::array<const Pipeline*, kSlots>;
  static constexpr std::size_t slot(DType dtype) noexcept {  // every DType is below kSlots
    return static_cast<std::size_t>(dtype);
  }
  explicit VulkanPipelines(Device& device) : device_(&device) {}
  Result<const Pipeline*> resolve_weight(Table& table, const char* family, DType dtype);

  Device* device_;
  Table matmul_{};
  Table embed_{};
};

}  // namespace eredu::vulkan
