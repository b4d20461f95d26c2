#pragma once
// Vulkan device discovery, one logical device with a compute queue, device-local buffers with
// staging transfers, a pipeline cache, and submissions completed through a timeline semaphore.
// Every Vulkan failure becomes an eredu::Error naming the call and the VkResult; nothing aborts.

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::vulkan {

// "VK_ERROR_DEVICE_LOST" etc.
[[nodiscard]] std::string_view result_name(VkResult r) noexcept;
// An Error for a failed call: kBackend, or kCapacityExhausted for out-of-memory results.
[[nodiscard]] Error vk_error(std::string_view call, VkResult r);

enum class DeviceType { kOther, kIntegratedGpu, kDiscreteGpu, kVirtualGpu, kCpu };
[[nodiscard]] std::string_view to_string(DeviceType t) noexcept;

struct MemoryHeap {
  std::uint64_t size = 0;
  bool device_local = false;
  // What this process can still allocate from the heap now (VK_EXT_memory_budget: the heap's
  // budget less its current usage); absent where the device does not report a budget.
  std::optional<std::uint64_t> available = std::nullopt;
};

// What a device can do, as queried; a feature the query did not confirm is reported absent.
struct DeviceCapabilities {
  std::uint32_t api_version = 0;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  bool shader_float16 = false;
  bool timeline_semaphore = false;
  bool subgroup_basic = false;
  bool subgroup_arithmetic = false;
  std::uint32_t subgroup_size = 0;
  std::uint32_t max_compute_workgroup_count_x = 0;
  std::uint32_t max_push_constants_size = 0;
  std::vector<MemoryHeap> heaps;
  bool has_compute_queue = false;
};

struct DeviceInfo {
  std::uint32_t index = 0;
  std::string name;
  DeviceType type = DeviceType::kOther;
  DeviceCapabilities caps;
  // Usable by this backend: Vulkan 1.2+, a compute queue, timeline semaphores.
  [[nodiscard]] bool usable() const noexcept {
    return caps.api_version >= VK_API_VERSION_1_2 && caps.has_compute_queue &&
           caps.timeline_semaphore;
  }
};

struct InstanceOptions {
  // Enables VK_LAYER_KHRONOS_validation and a debug-utils messenger passing every message to
  // on_message (from any thread; the callback must be thread-safe). Fails when the layer is absent.
  bool validation = false;
  std::function<void(std::string_view)> on_message;
};

class Instance {
 public:
  // kCapabilityMissing when there is no Vulkan loader/driver or (with validation) no layer.
  static Result<std::shared_ptr<Instance>> create(const InstanceOptions& options = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // Every physical device with its capabilities (possibly empty).
  [[nodiscard]] const std::vector<DeviceInfo>& devices() const noexcept { return infos_; }
  [[nodiscard]] VkInstance handle() const noexcept { return instance_; }
  [[nodiscard]] VkPhysicalDevice physical(std::uint32_t index) const noexcept {
    return physical_[index];
  }

 private:
  Instance() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::unique_ptr<std::function<void(std::string_view)>> on_message_;
  std::vector<VkPhysicalDevice> physical_;
  std::vector<DeviceInfo> infos_;
};

// Picks a device: `selector` empty = the best usable one (discrete GPU, then integrated, virtual,
// other, CPU); all digits = that index; otherwise the first whose name contains `selector`.
// kNotFound with the list of devices when nothing matches, kCapabilityMissing when the match
// is not usable.
[[nodiscard]] Result<std::uint32_t> select_device(std::span<const DeviceInfo> devices,
                                                  std::string_view selector);

class Device;

// A buffer with its own memory. Device-local buffers are filled and read through staging copies;
// host-visible ones are mapped for their whole life. A BufferPtr keeps its Device alive; pooled
// buffers (Device::acquire_*) go back to the device's pool instead of being freed.
class Buffer {
 public:
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  [[nodiscard]] VkBuffer handle() const noexcept { return buffer_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::byte* mapped() const noexcept { return mapped_; }
  [[nodiscard]] bool host_visible() const noexcept { return mapped_ != nullptr; }

 private:
  friend class Device;
  Buffer() = default;
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::size_t size_ = 0;
  std::byte* mapped_ = nullptr;
};
using BufferPtr = std::shared_ptr<Buffer>;

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  std::uint32_t n_bindings = 0;
  std::uint32_t push_size = 0;
};

struct SubmissionState;

// Records commands into one submission's command buffer; resources it binds are kept alive until
// the submission completes. Every dispatch, upload and copy is followed by a global
// compute/transfer -> compute/transfer barrier, and the recording starts with one, so commands
// see the writes of everything recorded (or submitted on the queue) before them.
class Recorder {
 public:
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();
  // Binds `buffers` (binding i = buffers[i]), pushes `push` and dispatches `groups` workgroups
  // along x. Descriptor sets come from pools that grow as the recording needs more.
  Result<void> dispatch(const Pipeline& p, std::span<const BufferPtr> buffers, const void* push,
                        std::uint32_t push_size, std::uint32_t groups);
  // Copies `bytes` into a pooled staging buffer and records staging -> dst at `dst_offset`.
  Result<void> upload(const BufferPtr& dst, std::span<const std::byte> bytes,
                      std::size_t dst_offset = 0);
  // Records src -> a pooled staging buffer; when the submission's completion is waited for, the
  // bytes are copied to `out`, which must stay valid until then -- or which `owner` keeps alive:
  // the submission holds `owner` until it is released.
  Result<void> download(const BufferPtr& src, std::span<std::byte> out,
                        std::shared_ptr<const void> owner = nullptr);
  // Records a device-side copy of `size` bytes.
  Result<void> copy(const BufferPtr& src, std::size_t src_offset, const BufferPtr& dst,
                    std::size_t dst_offset, std::size_t size);
  // Dispatches (and buffers) recorded so far.
  [[nodiscard]] std::size_t dispatches() const noexcept { return dispatches_; }
  [[nodiscard]] Device& device() const noexcept { return device_; }

 private:
  friend class Device;
  Recorder(Device& d, std::shared_ptr<SubmissionState> state)
      : device_(d), state_(std::move(state)) {}
  void barrier();
  Result<VkDescriptorSet> allocate_set(VkDescriptorSetLayout layout);
  Device& device_;
  std::shared_ptr<SubmissionState> state_;
  std::size_t dispatches_ = 0;
};

// The completion of one submission: observes only its own timeline value; holds the submission's
// command buffer, descriptors and buffers until the work is done. Copies share the same state.
class Completion {
 public:
  Completion() = default;
  explicit Completion(std::shared_ptr<SubmissionState> s) : state_(std::move(s)) {}
  // Blocks until this submission finished (kBackend on device loss, kCancelled on timeout), then
  // copies downloads to their destinations and releases the resources (buffers back to the pool).
  Result<void> wait(std::uint64_t timeout_ns = UINT64_MAX);
  [[nodiscard]] bool ready() const;
  // The timeline value this completion waits for (0: nothing was submitted).
  [[nodiscard]] std::uint64_t value() const noexcept;

 private:
  std::shared_ptr<SubmissionState> state_;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  // Descriptor sets per pool, and storage-buffer bindings a pipeline may have.
  static constexpr std::uint32_t kDescriptorPoolSets = 256;
  static constexpr std::uint32_t kMaxBindingsPerSet = 8;

  static Result<std::shared_ptr<Device>> create(std::shared_ptr<Instance> instance,
                                                std::uint32_t index);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  [[nodiscard]] const DeviceInfo& info() const noexcept { return info_; }
  [[nodiscard]] VkDevice handle() const noexcept { return device_; }
  [[nodiscard]] const std::shared_ptr<Instance>& instance() const noexcept { return instance_; }

  // A device-local storage buffer (also a transfer source and destination). Zero size allowed:
  // rounded up to 4 bytes. kCapacityExhausted on out-of-memory.
  Result<BufferPtr> create_device_buffer(std::size_t size);
  Result<BufferPtr> create_staging_buffer(std::size_t size);
  // The same from a pool: a buffer of at least `size` bytes (sizes round up to powers of two) that
  // returns to the pool, not to the driver, when its last holder drops it. Activations and
  // per-token staging use these, so a steady decode allocates no device memory.
  Result<BufferPtr> acquire_device_buffer(std::size_t size);
  Result<BufferPtr> acquire_staging_buffer(std::size_t size);
  // Buffers created through the driver so far (pool misses included): a test observes reuse.
  [[nodiscard]] std::uint64_t buffers_created() const noexcept { return buffers_created_; }

  // The compute pipeline of an embedded shader variant with `n_bindings` storage buffers and a
  // push-constant block of `push_size` bytes, created once and cached.
  Result<const Pipeline*> pipeline(std::string_view shader, std::uint32_t n_bindings,
                                   std::uint32_t push_size);

  // Opens a recording into a fresh command buffer.
  Result<std::unique_ptr<Recorder>> begin();
  // Ends and submits the recording, signalling the next timeline value; the returned Completion
  // waits for exactly that value.
  Result<Completion> submit(std::unique_ptr<Recorder> recorder);
  // begin(), record, submit().
  Result<Completion> submit(const std::function<Result<void>(Recorder&)>& record);

 private:
  friend class Recorder;
  friend struct SubmissionState;
  friend class Completion;
  Device() = default;
  Result<BufferPtr> create_buffer(std::size_t size, VkBufferUsageFlags usage, bool host_visible);
  Result<Buffer*> create_raw_buffer(std::size_t size, VkBufferUsageFlags usage, bool host_visible);
  Result<BufferPtr> acquire(std::size_t size, bool host_visible);
  void give_back(Buffer* b) noexcept;
  Result<VkDescriptorPool> take_descriptor_pool();
  void return_descriptor_pool(VkDescriptorPool pool) noexcept;

  std::shared_ptr<Instance> instance_;
  DeviceInfo info_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t queue_family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::uint64_t next_value_ = 0;
  std::mutex mutex_;  // guards the command pool, the queue, next_value_ and pipelines_
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::mutex pool_mutex_;  // guards free_buffers_ and free_descriptor_pools_
  // Idle pooled buffers by (size, host-visible); they hold no reference to the Device.
  std::unordered_multimap<std::uint64_t, std::unique_ptr<Buffer>> free_buffers_;
  std::vector<VkDescriptorPool> free_descriptor_pools_;
  std::vector<VkDescriptorPool> all_descriptor_pools_;
  std::atomic<std::uint64_t> buffers_created_{0};
};

}  // namespace eredu::vulkan
