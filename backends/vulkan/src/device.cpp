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
  free_buffers_.clear();  // idle pooled buffers (in-use ones keep the Device alive)
  for (VkDescriptorPool pool : all_descriptor_pools_)
    vkDestroyDescriptorPool(device_, pool, nullptr);
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

Result<Buffer*> Device::create_raw_buffer(std::size_t size, VkBufferUsageFlags usage,
                                          bool host_visible) {
  const std::size_t rounded = size == 0 ? 4 : (size + 3) / 4 * 4;
  if (rounded < size) return fail(ErrorCode::kOverflow, "vulkan: buffer size overflows");
  std::unique_ptr<Buffer> b;
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
  buffers_created_.fetch_add(1, std::memory_order_relaxed);
  return b.release();
}

Result<BufferPtr> Device::create_buffer(std::size_t size, VkBufferUsageFlags usage,
                                        bool host_visible) {
  EREDU_TRY(Buffer * raw, create_raw_buffer(size, usage, host_visible));
  // The deleter holds the Device, so a buffer never outlives the VkDevice it belongs to.
  try {
    return BufferPtr(raw, [self = shared_from_this()](Buffer* b) { delete b; });
  } catch (const std::bad_alloc&) {
    delete raw;
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for a buffer");
  }
}

namespace {
constexpr VkBufferUsageFlags kDeviceUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr VkBufferUsageFlags kStagingUsage =
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr std::size_t kMinPooledBytes = 256;

std::uint64_t pool_key(std::size_t size, bool host_visible) {
  return (static_cast<std::uint64_t>(size) << 1) | (host_visible ? 1U : 0U);
}
}  // namespace

Result<BufferPtr> Device::acquire(std::size_t size, bool host_visible) {
  std::size_t rounded = kMinPooledBytes;
  while (rounded < size) {
    if (rounded > (SIZE_MAX >> 2)) return fail(ErrorCode::kOverflow, "vulkan: buffer too large");
    rounded <<= 1;
  }
  std::unique_ptr<Buffer> reused;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    auto it = free_buffers_.find(pool_key(rounded, host_visible));
    if (it != free_buffers_.end()) {
      reused = std::move(it->second);
      free_buffers_.erase(it);
    }
  }
  Buffer* raw = reused.release();
  if (raw == nullptr) {
    EREDU_TRY(
        Buffer * created,
        create_raw_buffer(rounded, host_visible ? kStagingUsage : kDeviceUsage, host_visible));
    raw = created;
  }
  try {
    return BufferPtr(raw, [self = shared_from_this()](Buffer* b) { self->give_back(b); });
  } catch (const std::bad_alloc&) {
    delete raw;
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for a buffer");
  }
}

void Device::give_back(Buffer* b) noexcept {
  std::unique_ptr<Buffer> owned(b);
  try {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    free_buffers_.emplace(pool_key(owned->size(), owned->host_visible()), std::move(owned));
  } catch (...) {
    // Out of host memory while pooling: the buffer is simply freed (owned still holds it).
  }
}

Result<BufferPtr> Device::acquire_device_buffer(std::size_t size) {
  return acquire(size, false);
}

Result<BufferPtr> Device::acquire_staging_buffer(std::size_t size) {
  return acquire(size, true);
}

Result<VkDescriptorPool> Device::take_descriptor_pool() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!free_descriptor_pools_.empty()) {
      VkDescriptorPool pool = free_descriptor_pools_.back();
      free_descriptor_pools_.pop_back();
      return pool;
    }
  }
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  kDescriptorPoolSets * kMaxBindingsPerSet};
  VkDescriptorPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pi.maxSets = kDescriptorPoolSets;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  EREDU_VK_CHECK_(vkCreateDescriptorPool(device_, &pi, nullptr, &pool));
  std::lock_guard<std::mutex> lock(pool_mutex_);
  try {
    all_descriptor_pools_.push_back(pool);
  } catch (const std::bad_alloc&) {
    vkDestroyDescriptorPool(device_, pool, nullptr);
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for a descriptor pool");
  }
  return pool;
}

void Device::return_descriptor_pool(VkDescriptorPool pool) noexcept {
  // Only called once the submission that used the pool has completed.
  (void)vkResetDescriptorPool(device_, pool, 0);
  std::lock_guard<std::mutex> lock(pool_mutex_);
  try {
    free_descriptor_pools_.push_back(pool);
  } catch (...) {
    // Not pooled again; destroyed with the device (it is in all_descriptor_pools_).
  }
}

Result<BufferPtr> Device::create_device_buffer(std::size_t size) {
  return create_buffer(size, kDeviceUsage, false);
}

Result<BufferPtr> Device::create_staging_buffer(std::size_t size) {
  return create_buffer(size, kStagingUsage, true);
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
  if (n_bindings > kMaxBindingsPerSet) {
    return fail(ErrorCode::kInternal, "vulkan: pipeline '" + key + "' has too many bindings");
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

}  // namespace eredu::vulkan
