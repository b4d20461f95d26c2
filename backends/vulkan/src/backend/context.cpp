// VulkanContext (see context.hpp).
#include "context.hpp"

#include <cmath>
#include <vector>

namespace eredu::vulkan {

Result<std::shared_ptr<VulkanContext>> VulkanContext::create(std::shared_ptr<Device> device) {
  EREDU_TRY(VulkanPipelines pipelines, VulkanPipelines::resolve(*device));
  try {
    return std::make_shared<VulkanContext>(std::move(device), pipelines);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory");
  }
}

Result<Recorder*> VulkanContext::recorder() {
  if (!open_) {
    EREDU_TRY(std::unique_ptr<Recorder> rec, device_->begin());
    open_ = std::move(rec);
  }
  return open_.get();
}

Result<Completion> VulkanContext::flush() {
  clear_tables();
  if (!open_) return Completion();
  return device_->submit(std::move(open_));
}

void VulkanContext::abandon() noexcept {
  clear_tables();
  open_.reset();
}

void VulkanContext::clear_tables() noexcept {
  positions_.clear();
  rotary_.clear();
}

Result<BufferPtr> VulkanContext::positions(std::uint32_t first, std::uint32_t n) {
  const auto key = std::make_pair(first, n);
  if (auto it = positions_.find(key); it != positions_.end()) return it->second;
  EREDU_TRY(Recorder * rec, recorder());
  std::vector<std::int32_t> values(n);
  for (std::uint32_t t = 0; t < n; ++t)
    values[t] = static_cast<std::int32_t>(first + t);
  EREDU_TRY(BufferPtr buffer, device_->acquire_device_buffer(n * sizeof(std::int32_t)));
  EREDU_TRY_VOID(rec->upload(
      buffer, std::as_bytes(std::span<const std::int32_t>(values.data(), values.size()))));
  positions_.emplace(key, buffer);
  return buffer;
}

Result<BufferPtr> VulkanContext::rotary_table(std::uint32_t first, std::uint32_t n,
                                              const RotarySpec& spec, const float* factors) {
  // The factors' address identifies them: they belong to a bound weight that outlives the
  // recording.
  const auto key = std::make_tuple(first, n, spec.rotated_dims, spec.frequency_base,
                                   spec.frequency_scale, factors);
  if (auto it = rotary_.find(key); it != rotary_.end()) return it->second;
  EREDU_TRY(Recorder * rec, recorder());
  const std::size_t n_pairs = spec.rotated_dims / 2;
  std::vector<float> cs(static_cast<std::size_t>(n) * n_pairs * 2);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i < n_pairs; ++i) {
      const double theta =
          static_cast<double>(first + t) * static_cast<double>(spec.frequency_scale) *
          std::pow(static_cast<double>(spec.frequency_base),
                   -2.0 * static_cast<double>(i) / static_cast<double>(spec.rotated_dims)) /
          (factors != nullptr ? static_cast<double>(factors[i]) : 1.0);
      cs[(t * n_pairs + i) * 2] = static_cast<float>(std::cos(theta));
      cs[(t * n_pairs + i) * 2 + 1] = static_cast<float>(std::sin(theta));
    }
  }
  EREDU_TRY(BufferPtr buffer, device_->acquire_device_buffer(cs.size() * sizeof(float)));
  EREDU_TRY_VOID(rec->upload(buffer, std::as_bytes(std::span<const float>(cs.data(), cs.size()))));
  rotary_.emplace(key, buffer);
  return buffer;
}

}  // namespace eredu::vulkan
