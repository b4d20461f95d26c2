// Submissions: a Recorder fills one command buffer (dispatches with descriptor sets from growing
// pools, staged uploads and downloads, device copies); Device::submit signals the next value of
// the timeline semaphore; a Completion waits for exactly that value and then releases what the
// submission held (buffers back to the device's pool, descriptor pools reset for reuse).
#include <cstring>
#include <utility>

#include "eredu/backends/vulkan/device.hpp"

namespace eredu::vulkan {

#define EREDU_VK_CHECK_(call)                                                 \
  do {                                                                        \
    const VkResult eredu_vk_r_ = (call);                                      \
    if (eredu_vk_r_ != VK_SUCCESS) return fail(vk_error(#call, eredu_vk_r_)); \
  } while (false)

// Everything one submission owns until its timeline value is reached.
struct SubmissionState {
  std::shared_ptr<Device> device;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools;
  std::uint32_t sets_in_last_pool = 0;
  std::uint64_t value = 0;  // 0 until submitted
  std::vector<BufferPtr> keep;
  std::vector<std::pair<BufferPtr, std::span<std::byte>>> readbacks;
  std::vector<std::shared_ptr<const void>> owners;  // keep readback destinations alive
  std::mutex mutex;
  bool finished = false;

  void release() {
    if (device == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(device->mutex_);
      if (cb != VK_NULL_HANDLE)
        vkFreeCommandBuffers(device->device_, device->command_pool_, 1, &cb);
    }
    cb = VK_NULL_HANDLE;
    for (VkDescriptorPool pool : pools)
      device->return_descriptor_pool(pool);
    pools.clear();
    readbacks.clear();
    owners.clear();
    keep.clear();
  }
  ~SubmissionState() {
    // Dropped without wait(): the work may still be running, so block until it is done before
    // freeing (or pooling) what it uses.
    if (device != nullptr && !finished && value != 0) {
      VkSemaphoreWaitInfo wi{};
      wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
      wi.semaphoreCount = 1;
      wi.pSemaphores = &device->timeline_;
      wi.pValues = &value;
      (void)vkWaitSemaphores(device->device_, &wi, UINT64_MAX);
    }
    release();
  }
};

Result<void> Completion::wait(std::uint64_t timeout_ns) {
  if (state_ == nullptr) return ok();
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->finished || state_->value == 0) return ok();
  VkSemaphoreWaitInfo wi{};
  wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wi.semaphoreCount = 1;
  wi.pSemaphores = &state_->device->timeline_;
  wi.pValues = &state_->value;
  const VkResult r = vkWaitSemaphores(state_->device->device_, &wi, timeout_ns);
  if (r == VK_TIMEOUT) {
    return fail(ErrorCode::kCancelled, "vulkan: submission did not complete before the timeout");
  }
  if (r != VK_SUCCESS) return fail(vk_error("vkWaitSemaphores", r));
  state_->finished = true;
  for (auto& [staging, out] : state_->readbacks)
    std::memcpy(out.data(), staging->mapped(), out.size());
  state_->release();
  return ok();
}

bool Completion::ready() const {
  if (state_ == nullptr || state_->finished || state_->value == 0) return true;
  std::uint64_t v = 0;
  if (vkGetSemaphoreCounterValue(state_->device->device_, state_->device->timeline_, &v) !=
      VK_SUCCESS) {
    return true;  // a lost device: wait() reports it
  }
  return v >= state_->value;
}

std::uint64_t Completion::value() const noexcept {
  return state_ == nullptr ? 0 : state_->value;
}

Recorder::~Recorder() = default;

void Recorder::barrier() {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(state_->cb,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                       &mb, 0, nullptr, 0, nullptr);
}

Result<VkDescriptorSet> Recorder::allocate_set(VkDescriptorSetLayout layout) {
  // A pool holds kDescriptorPoolSets sets of up to kMaxBindingsPerSet buffers; counting them here
  // means a pool is never asked for more than it has, so a recording of any length just takes
  // more pools (a forward pass records hundreds of dispatches).
  if (state_->pools.empty() || state_->sets_in_last_pool == Device::kDescriptorPoolSets) {
    EREDU_TRY(VkDescriptorPool pool, device_.take_descriptor_pool());
    state_->pools.push_back(pool);
    state_->sets_in_last_pool = 0;
  }
  VkDescriptorSetAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  ai.descriptorPool = state_->pools.back();
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  EREDU_VK_CHECK_(vkAllocateDescriptorSets(device_.device_, &ai, &set));
  ++state_->sets_in_last_pool;
  return set;
}

Result<void> Recorder::dispatch(const Pipeline& p, std::span<const BufferPtr> buffers,
                                const void* push, std::uint32_t push_size, std::uint32_t groups) {
  if (buffers.size() != p.n_bindings || push_size != p.push_size) {
    return fail(ErrorCode::kInternal, "vulkan: dispatch arguments do not match the pipeline");
  }
  if (groups > device_.info_.caps.max_compute_workgroup_count_x) {
    return fail(ErrorCode::kLimitExceeded, "vulkan: dispatch of " + std::to_string(groups) +
                                               " workgroups exceeds the device limit");
  }
  EREDU_TRY(VkDescriptorSet set, allocate_set(p.set_layout));
  VkDescriptorBufferInfo infos[Device::kMaxBindingsPerSet];
  VkWriteDescriptorSet writes[Device::kMaxBindingsPerSet];
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    infos[i] = {buffers[i]->handle(), 0, VK_WHOLE_SIZE};
    writes[i] = {};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<std::uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    state_->keep.push_back(buffers[i]);
  }
  vkUpdateDescriptorSets(device_.device_, static_cast<std::uint32_t>(buffers.size()), writes, 0,
                         nullptr);
  vkCmdBindPipeline(state_->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(state_->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0,
                          nullptr);
  if (push_size > 0) {
    vkCmdPushConstants(state_->cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
  }
  if (groups > 0) vkCmdDispatch(state_->cb, groups, 1, 1);
  ++dispatches_;
  barrier();
  return ok();
}

Result<void> Recorder::upload(const BufferPtr& dst, std::span<const std::byte> bytes,
                              std::size_t dst_offset) {
  if (dst_offset > dst->size() || bytes.size() > dst->size() - dst_offset) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: upload outside its buffer");
  }
  if (bytes.empty()) return ok();
  EREDU_TRY(BufferPtr staging, device_.acquire_staging_buffer(bytes.size()));
  std::memcpy(staging->mapped(), bytes.data(), bytes.size());
  const VkBufferCopy region{0, dst_offset, bytes.size()};
  vkCmdCopyBuffer(state_->cb, staging->handle(), dst->handle(), 1, &region);
  state_->keep.push_back(std::move(staging));
  state_->keep.push_back(dst);
  barrier();
  return ok();
}

Result<void> Recorder::download(const BufferPtr& src, std::span<std::byte> out,
                                std::shared_ptr<const void> owner) {
  if (out.size() > src->size()) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: download larger than its buffer");
  }
  if (out.empty()) return ok();
  EREDU_TRY(BufferPtr staging, device_.acquire_staging_buffer(out.size()));
  const VkBufferCopy region{0, 0, out.size()};
  vkCmdCopyBuffer(state_->cb, src->handle(), staging->handle(), 1, &region);
  state_->keep.push_back(src);
  state_->keep.push_back(staging);
  state_->readbacks.emplace_back(std::move(staging), out);
  if (owner != nullptr) state_->owners.push_back(std::move(owner));
  barrier();
  return ok();
}

Result<void> Recorder::copy(const BufferPtr& src, std::size_t src_offset, const BufferPtr& dst,
                            std::size_t dst_offset, std::size_t size) {
  if (src_offset > src->size() || size > src->size() - src_offset || dst_offset > dst->size() ||
      size > dst->size() - dst_offset) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: copy outside its buffers");
  }
  if (size == 0) return ok();
  const VkBufferCopy region{src_offset, dst_offset, size};
  vkCmdCopyBuffer(state_->cb, src->handle(), dst->handle(), 1, &region);
  state_->keep.push_back(src);
  state_->keep.push_back(dst);
  barrier();
  return ok();
}

Result<std::unique_ptr<Recorder>> Device::begin() {
  std::shared_ptr<SubmissionState> state;
  std::unique_ptr<Recorder> rec;
  try {
    state = std::make_shared<SubmissionState>();
    state->device = shared_from_this();
    rec.reset(new Recorder(*this, state));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for a submission");
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    EREDU_VK_CHECK_(vkAllocateCommandBuffers(device_, &ai, &state->cb));
  }
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  EREDU_VK_CHECK_(vkBeginCommandBuffer(state->cb, &bi));
  // Orders this submission after everything submitted before it on the queue.
  rec->barrier();
  return rec;
}

Result<Completion> Device::submit(std::unique_ptr<Recorder> recorder) {
  if (recorder == nullptr || recorder->state_ == nullptr) {
    return fail(ErrorCode::kInternal, "vulkan: submit without a recording");
  }
  std::shared_ptr<SubmissionState> state = std::move(recorder->state_);
  recorder.reset();
  EREDU_VK_CHECK_(vkEndCommandBuffer(state->cb));
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t value = next_value_ + 1;
  VkTimelineSemaphoreSubmitInfo ti{};
  ti.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &value;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.pNext = &ti;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &state->cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline_;
  const VkResult r = vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE);
  if (r != VK_SUCCESS) return fail(vk_error("vkQueueSubmit", r));
  next_value_ = value;
  state->value = value;
  return Completion(std::move(state));
}

Result<Completion> Device::submit(const std::function<Result<void>(Recorder&)>& record) {
  EREDU_TRY(std::unique_ptr<Recorder> rec, begin());
  EREDU_TRY_VOID(record(*rec));
  return submit(std::move(rec));
}

}  // namespace eredu::vulkan
