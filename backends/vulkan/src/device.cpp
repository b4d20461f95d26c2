// Logical device, buffers, pipeline cache and timeline-semaphore submissions.
#include <cstring>
#include <new>
#include <utility>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/backends/vulkan/shader_registry.hpp"

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
  VkDescriptorPool pool = VK_NULL_HANDLE;
  std::uint64_t value = 0;
  std::vector<BufferPtr> keep;
  std::vector<std::pair<BufferPtr, std::span<std::byte>>> readbacks;
  std::mutex mutex;
  bool finished = false;

  void release() {
    if (device == nullptr) return;
    std::lock_guard<std::mutex> lock(device->mutex_);
    if (cb != VK_NULL_HANDLE) vkFreeCommandBuffers(device->device_, device->command_pool_, 1, &cb);
    if (pool != VK_NULL_HANDLE) vkDestroyDescriptorPool(device->device_, pool, nullptr);
    cb = VK_NULL_HANDLE;
    pool = VK_NULL_HANDLE;
    keep.clear();
  }
  ~SubmissionState() {
    // Dropped without wait(): the work may still be running, so block until it is done before
    // freeing what it uses.
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
  if (state_->finished) return ok();
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
  state_->readbacks.clear();
  state_->release();
  return ok();
}

bool Completion::ready() const {
  if (state_ == nullptr || state_->finished) return true;
  std::uint64_t v = 0;
  if (vkGetSemaphoreCounterValue(state_->device->device_, state_->device->timeline_, &v) !=
      VK_SUCCESS) {
    return true;  // a lost device: wait() reports it
  }
  return v >= state_->value;
}

Result<std::shared_ptr<Device>> Device::create(std::shared_ptr<Instance> instance,
                                               std::uint32_t index) {
  if (instance == nullptr || index >= instance->devices().size()) {
    return fail(ErrorCode::kNotFound, "vulkan: no device with index " + std::to_string(index));
  }
  std::shared_ptr<Device> self(new Device());
  self->instance_ = instance;
  self->info_ = instance->devices()[index];
  self->physical_ = instance->physical(index);
  if (!self->info_.usable()) {
    return fail(ErrorCode::kCapabilityMissing,
                "vulkan: device '" + self->info_.name +
                    "' lacks Vulkan 1.2 compute with timeline semaphores");
  }
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(self->physical_, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(self->physical_, &nq, families.data());
  // Prefer a compute queue without graphics (dedicated compute), else any compute queue.
  bool found = false;
  for (int pass = 0; pass < 2 && !found; ++pass) {
    for (std::uint32_t i = 0; i < nq; ++i) {
      const VkQueueFlags f = families[i].queueFlags;
      if ((f & VK_QUEUE_COMPUTE_BIT) == 0 || families[i].queueCount == 0) continue;
      if (pass == 0 && (f & VK_QUEUE_GRAPHICS_BIT) != 0) continue;
      self->queue_family_ = i;
      found = true;
      break;
    }
  }
  const float priority = 1.0F;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = self->queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo di{};
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.pNext = &f12;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  EREDU_VK_CHECK_(vkCreateDevice(self->physical_, &di, nullptr, &self->device_));
  vkGetDeviceQueue(self->device_, self->queue_family_, 0, &self->queue_);
  vkGetPhysicalDeviceMemoryProperties(self->physical_, &self->memory_);

  VkPipelineCacheCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  EREDU_VK_CHECK_(vkCreatePipelineCache(self->device_, &pci, nullptr, &self->pipeline_cache_));

  VkSemaphoreTypeCreateInfo sti{};
  sti.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  sti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  sti.initialValue = 0;
  VkSemaphoreCreateInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  si.pNext = &sti;
  EREDU_VK_CHECK_(vkCreateSemaphore(self->device_, &si, nullptr, &self->timeline_));

  VkCommandPoolCreateInfo cpi{};
  cpi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  cpi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  cpi.queueFamilyIndex = self->queue_family_;
  EREDU_VK_CHECK_(vkCreateCommandPool(self->device_, &cpi, nullptr, &self->command_pool_));
  return self;
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  (void)vkDeviceWaitIdle(device_);
  for (auto& [name, p] : pipelines_) {
    vkDestroyPipeline(device_, p->pipeline, nullptr);
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
  }
  if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, command_pool_, nullptr);
  if (timeline_ != VK_NULL_HANDLE) vkDestroySemaphore(device_, timeline_, nullptr);
  if (pipeline_cache_ != VK_NULL_HANDLE) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

Buffer::~Buffer() {
  if (device_ == VK_NULL_HANDLE) return;
  if (mapped_ != nullptr) vkUnmapMemory(device_, memory_);
  if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
}

Result<BufferPtr> Device::create_buffer(std::size_t size, VkBufferUsageFlags usage,
                                        bool host_visible) {
  const std::size_t rounded = size == 0 ? 4 : (size + 3) / 4 * 4;
  if (rounded < size) return fail(ErrorCode::kOverflow, "vulkan: buffer size overflows");
  BufferPtr b;
  try {
    b.reset(new Buffer());
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for a buffer");
  }
  b->device_ = device_;
  b->size_ = rounded;
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = rounded;
  bi.usage = usage;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  EREDU_VK_CHECK_(vkCreateBuffer(device_, &bi, nullptr, &b->buffer_));
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_, b->buffer_, &req);
  const VkMemoryPropertyFlags want =
      host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                   : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  std::uint32_t type = UINT32_MAX;
  for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if ((req.memoryTypeBits & (1U << i)) != 0 &&
        (memory_.memoryTypes[i].propertyFlags & want) == want) {
      type = i;
      break;
    }
  }
  if (type == UINT32_MAX) {
    return fail(ErrorCode::kCapabilityMissing,
                std::string("vulkan: no ") + (host_visible ? "host-visible" : "device-local") +
                    " memory type fits the buffer");
  }
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  EREDU_VK_CHECK_(vkAllocateMemory(device_, &ai, nullptr, &b->memory_));
  EREDU_VK_CHECK_(vkBindBufferMemory(device_, b->buffer_, b->memory_, 0));
  if (host_visible) {
    void* p = nullptr;
    EREDU_VK_CHECK_(vkMapMemory(device_, b->memory_, 0, VK_WHOLE_SIZE, 0, &p));
    b->mapped_ = static_cast<std::byte*>(p);
  }
  return b;
}

Result<BufferPtr> Device::create_device_buffer(std::size_t size) {
  return create_buffer(size,
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                           VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                       false);
}

Result<BufferPtr> Device::create_staging_buffer(std::size_t size) {
  return create_buffer(size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                       true);
}

Result<const Pipeline*> Device::pipeline(std::string_view shader, std::uint32_t n_bindings,
                                         std::uint32_t push_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key(shader);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  const EmbeddedShader* spv = find_shader(shader);
  if (spv == nullptr) {
    return fail(ErrorCode::kNotFound, "vulkan: no embedded shader named '" + key + "'");
  }
  if (push_size > info_.caps.max_push_constants_size) {
    return fail(ErrorCode::kCapabilityMissing,
                "vulkan: push constants of '" + key + "' exceed the device limit");
  }
  auto p = std::make_unique<Pipeline>();
  p->n_bindings = n_bindings;
  p->push_size = push_size;
  std::vector<VkDescriptorSetLayoutBinding> bindings(n_bindings);
  for (std::uint32_t i = 0; i < n_bindings; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo li{};
  li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  li.bindingCount = n_bindings;
  li.pBindings = bindings.data();
  EREDU_VK_CHECK_(vkCreateDescriptorSetLayout(device_, &li, nullptr, &p->set_layout));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p->set_layout;
  pli.pushConstantRangeCount = push_size > 0 ? 1 : 0;
  pli.pPushConstantRanges = &range;
  const VkResult lr = vkCreatePipelineLayout(device_, &pli, nullptr, &p->layout);
  if (lr != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    return fail(vk_error("vkCreatePipelineLayout", lr));
  }
  VkShaderModuleCreateInfo mi{};
  mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  mi.codeSize = spv->word_count * sizeof(std::uint32_t);
  mi.pCode = spv->words;
  VkShaderModule module = VK_NULL_HANDLE;
  VkResult r = vkCreateShaderModule(device_, &mi, nullptr, &module);
  if (r == VK_SUCCESS) {
    VkComputePipelineCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.layout = p->layout;
    r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &p->pipeline);
    vkDestroyShaderModule(device_, module, nullptr);
  }
  if (r != VK_SUCCESS) {
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    return fail(vk_error("vkCreateComputePipelines(" + key + ")", r));
  }
  const Pipeline* raw = p.get();
  pipelines_.emplace(key, std::move(p));
  return raw;
}

void Recorder::barrier() {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                       &mb, 0, nullptr, 0, nullptr);
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
  VkDescriptorSetAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  EREDU_VK_CHECK_(vkAllocateDescriptorSets(device_.device_, &ai, &set));
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    infos[i] = {buffers[i]->handle(), 0, VK_WHOLE_SIZE};
    writes[i] = {};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<std::uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    keep_.push_back(buffers[i]);
  }
  vkUpdateDescriptorSets(device_.device_, static_cast<std::uint32_t>(writes.size()), writes.data(),
                         0, nullptr);
  vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (push_size > 0) {
    vkCmdPushConstants(cb_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
  }
  if (groups > 0) vkCmdDispatch(cb_, groups, 1, 1);
  barrier();
  return ok();
}

Result<void> Recorder::upload(const BufferPtr& dst, std::span<const std::byte> bytes,
                              std::size_t dst_offset) {
  if (dst_offset > dst->size() || bytes.size() > dst->size() - dst_offset) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: upload outside its buffer");
  }
  if (bytes.empty()) return ok();
  EREDU_TRY(BufferPtr staging, device_.create_staging_buffer(bytes.size()));
  std::memcpy(staging->mapped(), bytes.data(), bytes.size());
  const VkBufferCopy region{0, dst_offset, bytes.size()};
  vkCmdCopyBuffer(cb_, staging->handle(), dst->handle(), 1, &region);
  keep_.push_back(staging);
  keep_.push_back(dst);
  barrier();
  return ok();
}

Result<void> Recorder::download(const BufferPtr& src, std::span<std::byte> out) {
  if (out.size() > src->size()) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: download larger than its buffer");
  }
  EREDU_TRY(BufferPtr staging, device_.create_staging_buffer(out.size()));
  if (out.empty()) return ok();
  const VkBufferCopy region{0, 0, out.size()};
  vkCmdCopyBuffer(cb_, src->handle(), staging->handle(), 1, &region);
  keep_.push_back(src);
  readbacks_.emplace_back(staging, out);
  return ok();
}

Result<Completion> Device::submit(const std::function<Result<void>(Recorder&)>& record) {
  auto state = std::make_shared<SubmissionState>();
  state->device = shared_from_this();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    EREDU_VK_CHECK_(vkAllocateCommandBuffers(device_, &ai, &state->cb));
  }
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 256};
  VkDescriptorPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pi.maxSets = 64;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  EREDU_VK_CHECK_(vkCreateDescriptorPool(device_, &pi, nullptr, &state->pool));

  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  EREDU_VK_CHECK_(vkBeginCommandBuffer(state->cb, &bi));
  Recorder rec(*this, state->cb, state->pool);
  const Result<void> recorded = record(rec);
  EREDU_VK_CHECK_(vkEndCommandBuffer(state->cb));
  if (!recorded.has_value()) return fail(recorded.error());
  state->keep = std::move(rec.keep_);
  state->readbacks = std::move(rec.readbacks_);
  for (auto& rb : state->readbacks)
    state->keep.push_back(rb.first);

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

}  // namespace eredu::vulkan
