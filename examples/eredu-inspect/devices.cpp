#include "devices.hpp"

#include <thread>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/huge_pages.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/core/capabilities.hpp"
#include "format.hpp"

#if defined(EREDU_HAVE_VULKAN_BACKEND)
#include "eredu/backends/vulkan/device.hpp"
#endif
#if defined(EREDU_HAVE_CUDA_BACKEND)
#include "eredu/backends/cuda/device.hpp"
#endif

namespace eredu::inspect {
namespace {

using Json = nlohmann::ordered_json;

BackendListing cpu_devices() {
  BackendListing listing;
  listing.backend = "cpu";
  auto reports = cpu::CpuBackend(cpu::CpuBackendOptions{1}).devices();
  if (!reports) {
    listing.status = BackendStatus::kNoDevice;
    listing.note = reports.error().what();
    return listing;
  }
  const cpu::CpuFeatures& f = cpu::cpu_features();
  for (const DeviceReport& report : *reports) {
    DeviceListing device;
    device.id = report.descriptor.id;
    device.name = report.descriptor.name;
    device.properties.push_back({"family", report.descriptor.family});
    if (report.descriptor.memory_bytes) {
      device.properties.push_back({"memory_bytes", *report.descriptor.memory_bytes});
    }
    if (report.descriptor.free_memory_bytes) {
      device.properties.push_back({"free_memory_bytes", *report.descriptor.free_memory_bytes});
    }
    device.properties.push_back(
        {"hardware_threads", std::max(1u, std::thread::hardware_concurrency())});
    device.properties.push_back({"kernels", std::string(cpu::isa_name(cpu::kernels().isa))});
    device.properties.push_back({"sse4_2", f.sse4_2});
    device.properties.push_back({"avx", f.avx});
    device.properties.push_back({"avx2", f.avx2});
    device.properties.push_back({"fma", f.fma});
    device.properties.push_back({"f16c", f.f16c});
    device.properties.push_back({"avx512f", f.avx512f});
    device.properties.push_back({"avx512bw", f.avx512bw});
    device.properties.push_back({"avx512vl", f.avx512vl});
    device.properties.push_back({"avx512dq", f.avx512dq});
    device.properties.push_back({"avx512vnni", f.avx512vnni});
    device.properties.push_back({"avx512bf16", f.avx512bf16});
    // 512-bit operations on 256-bit units (Zen 4): the avx512 table then takes 256-bit F16 tiles.
    device.properties.push_back({"avx512_split", f.avx512_split});
    device.properties.push_back({"os_avx512_state", f.os_avx512});
    // When the weights' row groups are advised into huge pages, which decode streams faster, and
    // what that choice was made from (huge_pages.hpp): the kernel's setting and a hypervisor.
    device.properties.push_back(
        {"weights_huge_pages", std::string(cpu::advice_name(cpu::weights_huge_page_advice()))});
    device.properties.push_back({"transparent_huge_pages", cpu::transparent_huge_pages_mode()});
    device.properties.push_back({"hypervisor", f.hypervisor});
    device.properties.push_back({"capabilities", describe_capabilities(report.capabilities)});
    listing.devices.push_back(std::move(device));
  }
  if (listing.devices.empty()) listing.status = BackendStatus::kNoDevice;
  return listing;
}

#if defined(EREDU_HAVE_VULKAN_BACKEND)
std::string api_version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

// Why the backend cannot use a device, in the order DeviceInfo::usable() checks.
std::string unusable_reason(const vulkan::DeviceInfo& info) {
  std::string why;
  auto add = [&](const std::string& reason) { why += (why.empty() ? "" : "; ") + reason; };
  if (info.caps.api_version < VK_API_VERSION_1_2) {
    add("Vulkan " + api_version_string(info.caps.api_version) + " < 1.2");
  }
  if (!info.caps.has_compute_queue) add("no compute queue");
  if (!info.caps.timeline_semaphore) add("no timeline semaphores");
  return why;
}

BackendListing vulkan_devices() {
  BackendListing listing;
  listing.backend = "vulkan";
  auto instance = vulkan::Instance::create();
  if (!instance) {
    listing.status = BackendStatus::kNoDevice;
    listing.note = "no Vulkan instance: " + instance.error().what();
    return listing;
  }
  for (const vulkan::DeviceInfo& info : (*instance)->devices()) {
    DeviceListing device;
    device.id = "vulkan:" + std::to_string(info.index);
    device.name = info.name;
    device.usable = info.usable();
    if (!device.usable) device.unusable_reason = unusable_reason(info);
    const vulkan::DeviceCapabilities& c = info.caps;
    device.properties.push_back({"type", std::string(vulkan::to_string(info.type))});
    device.properties.push_back({"api_version", api_version_string(c.api_version)});
    device.properties.push_back({"storage_buffer_16bit", c.storage_buffer_16bit});
    device.properties.push_back({"storage_buffer_8bit", c.storage_buffer_8bit});
    device.properties.push_back({"shader_float16", c.shader_float16});
    device.properties.push_back({"timeline_semaphore", c.timeline_semaphore});
    device.properties.push_back({"compute_queue", c.has_compute_queue});
    device.properties.push_back({"subgroup_size", c.subgroup_size});
    device.properties.push_back({"subgroup_basic", c.subgroup_basic});
    device.properties.push_back({"subgroup_arithmetic", c.subgroup_arithmetic});
    device.properties.push_back({"max_compute_workgroup_count_x", c.max_compute_workgroup_count_x});
    device.properties.push_back({"max_push_constants_size", c.max_push_constants_size});
    Json heaps = Json::array();
    for (const vulkan::MemoryHeap& heap : c.heaps) {
      Json entry{{"size_bytes", heap.size}, {"device_local", heap.device_local}};
      if (heap.available) entry["available_bytes"] = *heap.available;
      heaps.push_back(std::move(entry));
    }
    device.properties.push_back({"heaps", std::move(heaps)});
    listing.devices.push_back(std::move(device));
  }
  if (listing.devices.empty()) {
    listing.status = BackendStatus::kNoDevice;
    listing.note = "the Vulkan loader found no physical device";
  }
  return listing;
}
#endif

#if defined(EREDU_HAVE_CUDA_BACKEND)
// Every CUDA device; usable where the backend's kernels run (dp4a: compute capability 6.1 and
// up), else with that reason; no driver or no device is the backend's note.
BackendListing cuda_devices() {
  BackendListing listing;
  listing.backend = "cuda";
  auto devices = cuda::list_devices();
  if (!devices) {
    listing.status = BackendStatus::kNoDevice;
    listing.note = devices.error().message();  // "no CUDA device: ..."
    return listing;
  }
  for (const cuda::DeviceInfo& info : *devices) {
    DeviceListing device;
    device.id = "cuda:" + std::to_string(info.index);
    device.name = info.name;
    const int cc = info.compute_capability_major * 10 + info.compute_capability_minor;
    device.usable = cc >= 61;
    if (!device.usable) {
      device.unusable_reason =
          "compute capability " + std::to_string(info.compute_capability_major) + "." +
          std::to_string(info.compute_capability_minor) + " lacks dp4a (6.1 and up are needed)";
    }
    device.properties.push_back(
        {"compute_capability", std::to_string(info.compute_capability_major) + "." +
                                   std::to_string(info.compute_capability_minor)});
    device.properties.push_back({"multiprocessors", info.multiprocessors});
    if (!info.pci_bus_id.empty()) device.properties.push_back({"pci_bus_id", info.pci_bus_id});
    device.properties.push_back({"memory_bytes", info.total_memory_bytes});
    if (info.free_memory_bytes) {
      device.properties.push_back({"free_memory_bytes", *info.free_memory_bytes});
    } else {
      device.properties.push_back({"free_memory", info.free_memory_unavailable_reason});
    }
    listing.devices.push_back(std::move(device));
  }
  return listing;
}
#endif

std::string status_name(BackendStatus s) {
  switch (s) {
    case BackendStatus::kAvailable:
      return "available";
    case BackendStatus::kNoDevice:
      return "no_device";
    case BackendStatus::kNotBuilt:
      return "not_built";
  }
  return "unknown";
}

// A property value as text: yes/no for flags, sizes in binary units, heaps one by one.
std::string value_text(const std::string& key, const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_string()) return escape_control(value.get<std::string>());
  if ((key == "memory_bytes" || key == "free_memory_bytes") && value.is_number_unsigned()) {
    return human_bytes(value.get<std::uint64_t>());
  }
  if (value.is_array()) {
    std::string out;
    for (const Json& heap : value) {
      if (!out.empty()) out += ", ";
      out += human_bytes(heap.value("size_bytes", std::uint64_t{0}));
      if (heap.value("device_local", false)) out += " device-local";
      if (heap.contains("available_bytes")) {
        out += " (" + human_bytes(heap["available_bytes"].get<std::uint64_t>()) + " free)";
      }
    }
    return out.empty() ? "none" : out;
  }
  return value.dump();
}

}  // namespace

std::vector<BackendListing> list_devices() {
  std::vector<BackendListing> backends;
  backends.push_back(cpu_devices());
#if defined(EREDU_HAVE_VULKAN_BACKEND)
  backends.push_back(vulkan_devices());
#else
  backends.push_back({"vulkan",
                      BackendStatus::kNotBuilt,
                      "not built into this eredu-inspect (configure with -DEREDU_WITH_VULKAN=ON)",
                      {}});
#endif
#if defined(EREDU_HAVE_CUDA_BACKEND)
  backends.push_back(cuda_devices());
#else
  backends.push_back({"cuda",
                      BackendStatus::kNotBuilt,
                      "not built into this eredu-inspect (configure with -DEREDU_WITH_CUDA=ON)",
                      {}});
#endif
  return backends;
}

std::string render_devices_text(const std::vector<BackendListing>& backends) {
  std::string out;
  for (const BackendListing& b : backends) {
    out += b.backend + ": ";
    if (b.status == BackendStatus::kAvailable) {
      out += std::to_string(b.devices.size()) + (b.devices.size() == 1 ? " device" : " devices");
    } else {
      out += escape_control(b.note);
    }
    out += "\n";
    for (const DeviceListing& d : b.devices) {
      out += "  " + d.id + "  " + escape_control(d.name) + "\n";
      out += "    usable: " +
             (d.usable ? std::string("yes") : "no (" + escape_control(d.unusable_reason) + ")") +
             "\n";
      for (const DeviceProperty& p : d.properties)
        out += "    " + p.key + ": " + value_text(p.key, p.value) + "\n";
    }
  }
  return out;
}

nlohmann::ordered_json render_devices_json(const std::vector<BackendListing>& backends) {
  Json list = Json::array();
  for (const BackendListing& b : backends) {
    Json backend;
    backend["backend"] = b.backend;
    backend["status"] = status_name(b.status);
    if (!b.note.empty()) backend["note"] = b.note;
    Json devices = Json::array();
    for (const DeviceListing& d : b.devices) {
      Json device;
      device["id"] = d.id;
      device["name"] = d.name;
      device["usable"] = d.usable;
      if (!d.usable) device["unusable_reason"] = d.unusable_reason;
      for (const DeviceProperty& p : d.properties)
        device[p.key] = p.value;
      devices.push_back(std::move(device));
    }
    backend["devices"] = std::move(devices);
    list.push_back(std::move(backend));
  }
  return Json{{"backends", std::move(list)}};
}

}  // namespace eredu::inspect
