// VulkanBackend's execution hooks of the generic session (runtime::FamilySession): a forward pass
// is recorded into the backend's open command buffer, the download of its logits appended, and
// submitted once. A failure while recording drops the recording and rolls the KV cache back, so
// the session stays usable.
#include <string>

#include "context.hpp"
#include "eredu/backends/vulkan/vulkan_backend.hpp"

namespace eredu::vulkan {

Result<void> VulkanBackend::begin_forward() const {
  // Work recorded by direct operator calls belongs to its own submission, not to this one.
  if (context_->recorded_dispatches() > 0) {
    EREDU_TRY(Completion earlier, context_->flush());
    (void)earlier;  // its own completion keeps its resources alive until it is done
  }
  return ok();
}

void VulkanBackend::abandon_forward(kv_cache& cache, std::uint32_t first_position) const noexcept {
  context_->abandon();
  if (cache.cache != nullptr) (void)cache.cache->truncate(first_position);
}

Result<Submission<VulkanTensor, VulkanCompletion>> VulkanBackend::finish_forward(
    VulkanTensor&& logits, kv_cache& cache, std::uint32_t first_position) const {
  auto recorded = [&]() -> Result<void> {
    EREDU_TRY(Recorder * rec, context_->recorder());
    try {
      logits.host = std::make_shared<std::vector<float>>(logits.rows * logits.cols);
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for the logits");
    }
    // The submission keeps the destination alive, output dropped or not.
    return rec->download(
        logits.buffer,
        std::as_writable_bytes(std::span<float>(logits.host->data(), logits.host->size())),
        logits.host);
  }();
  if (!recorded) {
    abandon_forward(cache, first_position);
    return fail(recorded.error());
  }
  auto submitted = context_->flush();
  if (!submitted) {
    if (cache.cache != nullptr) (void)cache.cache->truncate(first_position);
    return fail(submitted.error());
  }
  logits.ready = *submitted;
  return Submission<VulkanTensor, VulkanCompletion>{std::move(logits),
                                                    VulkanCompletion(std::move(*submitted))};
}

Result<std::vector<float>> VulkanBackend::observe_forward(const VulkanTensor& out) const {
  if (out.host == nullptr) return read(out);  // not a session output: download it now
  Completion ready = out.ready;               // shares the submission's state
  EREDU_TRY_VOID(ready.wait());
  return *out.host;
}

Result<void> VulkanBackend::truncate_kv_cache(kv_cache& cache, std::uint32_t position) {
  if (cache.cache == nullptr) return fail(ErrorCode::kInvalidArgument, "vulkan: no kv cache");
  return cache.cache->truncate(position);
}

}  // namespace eredu::vulkan
