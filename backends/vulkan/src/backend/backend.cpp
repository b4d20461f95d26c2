// VulkanBackend: construction on a selected device, the recording controls (flush / read /
// abandon) and device reports.
#include <algorithm>
#include <string>

#include "context.hpp"
#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/core/log.hpp"

namespace eredu::vulkan {

Result<VulkanBackend> VulkanBackend::create(const VulkanBackendOptions& options) {
  InstanceOptions instance_options;
  instance_options.validation = options.validation;
  if (options.on_validation_message) {
    instance_options.on_message = options.on_validation_message;
  } else {
    instance_options.on_message = [](std::string_view m) {
      log::error("vulkan validation: {}", std::string(m));
    };
  }
  EREDU_TRY(std::shared_ptr<Instance> instance, Instance::create(instance_options));
  EREDU_TRY(std::uint32_t index, select_device(instance->devices(), options.device));
  EREDU_TRY(std::shared_ptr<Device> device, Device::create(instance, index));
  return on_device(std::move(device));
}

Result<VulkanBackend> VulkanBackend::on_device(std::shared_ptr<Device> device) {
  if (device == nullptr) return fail(ErrorCode::kInvalidArgument, "vulkan: no device");
  EREDU_TRY(std::shared_ptr<VulkanContext> context, VulkanContext::create(std::move(device)));
  return VulkanBackend(std::move(context));
}

VulkanPipelines& VulkanBackend::pipelines() const noexcept {
  return context_->pipelines();
}

Device& VulkanBackend::device() const noexcept {
  return context_->device();
}

const std::shared_ptr<Device>& VulkanBackend::device_ptr() const noexcept {
  return context_->device_ptr();
}

Result<VulkanCompletion> VulkanBackend::flush() const {
  EREDU_TRY(Completion done, context_->flush());
  return VulkanCompletion(std::move(done));
}

void VulkanBackend::abandon() const noexcept {
  context_->abandon();
}

std::size_t VulkanBackend::recorded_dispatches() const noexcept {
  return context_->recorded_dispatches();
}

Result<std::vector<float>> VulkanBackend::read(const tensor& t) const {
  EREDU_TRY(Completion pending, context_->flush());
  EREDU_TRY_VOID(pending.wait());
  std::vector<float> out(t.rows * t.cols);
  if (out.empty()) return out;
  if (t.buffer == nullptr) return fail(ErrorCode::kInvalidArgument, "vulkan read: no buffer");
  EREDU_TRY(Completion done, device().submit([&](Recorder& r) -> Result<void> {
    return r.download(t.buffer, std::as_writable_bytes(std::span<float>(out)));
  }));
  EREDU_TRY_VOID(done.wait());
  return out;
}

BackendDescriptor VulkanBackend::descriptor() const {
  return BackendDescriptor{"vulkan", "1"};
}

Result<std::vector<DeviceReport>> VulkanBackend::devices() const {
  const std::shared_ptr<Instance>& instance = device().instance();
  if (instance == nullptr) return device_reports(std::vector<DeviceInfo>{device().info()});
  return device_reports(instance->devices());
}

Result<std::vector<DeviceReport>> discover_device_reports() {
  EREDU_TRY(std::shared_ptr<Instance> instance, Instance::create(InstanceOptions{}));
  return device_reports(instance->devices());
}

std::vector<DeviceReport> device_reports(std::span<const DeviceInfo> infos) {
  std::vector<DeviceReport> reports;
  for (const DeviceInfo& d : infos) {
    DeviceReport report;
    report.descriptor.id = "vulkan:" + std::to_string(d.index);
    const DeviceCapabilities& c = d.caps;
    std::string features;
    auto add = [&](bool on, const char* name) {
      if (!on) return;
      if (!features.empty()) features += ' ';
      features += name;
    };
    add(c.storage_buffer_16bit, "storage16");
    add(c.storage_buffer_8bit, "storage8");
    add(c.shader_float16, "fp16");
    add(c.subgroup_arithmetic, "subgroup-arithmetic");
    add(c.timeline_semaphore, "timeline");
    report.descriptor.name = d.name + " (" + std::string(to_string(d.type)) + "; Vulkan " +
                             std::to_string(VK_API_VERSION_MAJOR(c.api_version)) + "." +
                             std::to_string(VK_API_VERSION_MINOR(c.api_version)) + "; subgroup " +
                             std::to_string(c.subgroup_size) + "; " +
                             (features.empty() ? std::string("baseline") : features) +
                             (d.usable() ? "" : "; unusable") + ")";
    report.descriptor.family = std::string(to_string(d.type));
    // Total and free over the device-local heaps; free only where every one of them reports it.
    std::uint64_t local = 0;
    std::uint64_t free = 0;
    bool free_known = true;
    for (const MemoryHeap& h : c.heaps) {
      if (!h.device_local) continue;
      local += h.size;
      if (h.available) {
        free += *h.available;
      } else {
        free_known = false;
      }
    }
    if (local > 0) report.descriptor.memory_bytes = local;
    if (local > 0 && free_known) report.descriptor.free_memory_bytes = std::min(free, local);
    // Fail closed: exact completion (timeline semaphores) only where the device is usable.
    report.capabilities.exact_completion = d.usable();
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace eredu::vulkan
