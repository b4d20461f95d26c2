// VulkanSession: prefill / decode record the llama forward pass (the same template the CPU runs)
// into the backend's open command buffer, append the download of the logits, and submit once.
// Inputs are checked before anything is recorded; a failure while recording drops the recording
// and rolls the KV cache back, so the session stays usable.
#include <string>

#include "context.hpp"
#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/model/llama/admission.hpp"

namespace eredu::vulkan {

Result<Submission<VulkanTensor, VulkanCompletion>> VulkanSession::prefill(
    const VulkanBackend& backend, prefill_input&& tokens) {
  const ::eredu::model::llama::LlamaConfig& c = model_.llama->config();
  EREDU_TRY_VOID(::eredu::model::llama::check_forward_input(tokens, c.n_vocab, position_,
                                                            model_.max_positions));
  VulkanContext& ctx = backend.context();
  // Work recorded by direct operator calls belongs to its own submission, not to this one.
  if (ctx.recorded_dispatches() > 0) {
    EREDU_TRY(Completion earlier, ctx.flush());
    (void)earlier;  // its own completion keeps its resources alive until it is done
  }
  const std::uint32_t first = position_;
  auto recorded = [&]() -> Result<VulkanTensor> {
    EREDU_TRY(VulkanTensor logits, model_.llama->forward(backend, cache_, tokens, first));
    EREDU_TRY(Recorder * rec, ctx.recorder());
    try {
      logits.host = std::make_shared<std::vector<float>>(logits.rows * logits.cols);
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for the logits");
    }
    EREDU_TRY_VOID(rec->download(
        logits.buffer,
        std::as_writable_bytes(std::span<float>(logits.host->data(), logits.host->size())),
        logits.host));  // the submission keeps the destination alive, output dropped or not
    return logits;
  }();
  if (!recorded) {
    ctx.abandon();
    (void)cache_.cache->truncate(first);
    return fail(recorded.error());
  }
  auto submitted = ctx.flush();
  if (!submitted) {
    (void)cache_.cache->truncate(first);
    return fail(submitted.error());
  }
  VulkanTensor out = std::move(recorded).value();
  out.ready = *submitted;
  position_ += static_cast<std::uint32_t>(tokens.size());
  return Submission<VulkanTensor, VulkanCompletion>{std::move(out),
                                                    VulkanCompletion(std::move(*submitted))};
}

Result<Submission<VulkanTensor, VulkanCompletion>> VulkanSession::decode(
    const VulkanBackend& backend, decode_input&& token) {
  return prefill(backend, prefill_input{token});
}

Result<std::vector<float>> VulkanSession::observe_output(const VulkanBackend& backend,
                                                         const VulkanTensor& out) const {
  if (out.host == nullptr) return backend.read(out);  // not a session output: download it now
  Completion ready = out.ready;                       // shares the submission's state
  EREDU_TRY_VOID(ready.wait());
  return *out.host;
}

Result<void> VulkanSession::truncate(std::uint32_t position) {
  if (position > position_) {
    return fail(ErrorCode::kInvalidArgument, "truncate: position " + std::to_string(position) +
                                                 " is beyond the " + std::to_string(position_) +
                                                 " cached positions");
  }
  EREDU_TRY_VOID(cache_.cache->truncate(position));
  position_ = position;
  return ok();
}

}  // namespace eredu::vulkan
