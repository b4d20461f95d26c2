// Vulkan instance, validation messenger, physical-device discovery and device selection.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/backends/vulkan/device.hpp"

namespace eredu::vulkan {

std::string_view result_name(VkResult r) noexcept {
  switch (r) {
#define EREDU_VK_RESULT_(name) \
  case name:                   \
    return #name;
    EREDU_VK_RESULT_(VK_SUCCESS)
    EREDU_VK_RESULT_(VK_NOT_READY)
    EREDU_VK_RESULT_(VK_TIMEOUT)
    EREDU_VK_RESULT_(VK_INCOMPLETE)
    EREDU_VK_RESULT_(VK_ERROR_OUT_OF_HOST_MEMORY)
    EREDU_VK_RESULT_(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    EREDU_VK_RESULT_(VK_ERROR_INITIALIZATION_FAILED)
    EREDU_VK_RESULT_(VK_ERROR_DEVICE_LOST)
    EREDU_VK_RESULT_(VK_ERROR_MEMORY_MAP_FAILED)
    EREDU_VK_RESULT_(VK_ERROR_LAYER_NOT_PRESENT)
    EREDU_VK_RESULT_(VK_ERROR_EXTENSION_NOT_PRESENT)
    EREDU_VK_RESULT_(VK_ERROR_FEATURE_NOT_PRESENT)
    EREDU_VK_RESULT_(VK_ERROR_INCOMPATIBLE_DRIVER)
    EREDU_VK_RESULT_(VK_ERROR_TOO_MANY_OBJECTS)
    EREDU_VK_RESULT_(VK_ERROR_FORMAT_NOT_SUPPORTED)
    EREDU_VK_RESULT_(VK_ERROR_FRAGMENTED_POOL)
    EREDU_VK_RESULT_(VK_ERROR_OUT_OF_POOL_MEMORY)
    EREDU_VK_RESULT_(VK_ERROR_INVALID_SHADER_NV)
    EREDU_VK_RESULT_(VK_ERROR_UNKNOWN)
#undef EREDU_VK_RESULT_
    default:
      return "VK_ERROR_(unnamed)";
  }
}

Error vk_error(std::string_view call, VkResult r) {
  const bool oom = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ||
                   r == VK_ERROR_OUT_OF_POOL_MEMORY;
  std::string msg = "vulkan: " + std::string(call) + " failed: " + std::string(result_name(r));
  if (r == VK_ERROR_DEVICE_LOST) msg += " (the device was lost; recreate the backend)";
  return Error(oom ? ErrorCode::kCapacityExhausted : ErrorCode::kBackend, std::move(msg));
}

std::string_view to_string(DeviceType t) noexcept {
  switch (t) {
    case DeviceType::kDiscreteGpu:
      return "discrete-gpu";
    case DeviceType::kIntegratedGpu:
      return "integrated-gpu";
    case DeviceType::kVirtualGpu:
      return "virtual-gpu";
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kOther:
      break;
  }
  return "other";
}

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                VkDebugUtilsMessageTypeFlagsEXT,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                void* user) {
  auto* sink = static_cast<std::function<void(std::string_view)>*>(user);
  if (sink != nullptr && *sink && data != nullptr && data->pMessage != nullptr) {
    (*sink)(data->pMessage);
  }
  return VK_FALSE;
}

bool layer_available(const char* name) {
  std::uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
  return std::any_of(layers.begin(), layers.end(), [&](const VkLayerProperties& l) {
    return std::strcmp(l.layerName, name) == 0;
  });
}

DeviceType device_type(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return DeviceType::kDiscreteGpu;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return DeviceType::kIntegratedGpu;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return DeviceType::kVirtualGpu;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return DeviceType::kCpu;
    default:
      return DeviceType::kOther;
  }
}

bool supports_device_extension(VkPhysicalDevice pd, std::string_view name) {
  std::uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(n);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, extensions.data()) != VK_SUCCESS) {
    return false;
  }
  return std::any_of(extensions.begin(), extensions.begin() + n,
                     [&](const VkExtensionProperties& e) { return name == e.extensionName; });
}

DeviceInfo describe(VkPhysicalDevice pd, std::uint32_t index) {
  DeviceInfo info;
  info.index = index;
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(pd, &props);
  info.name = props.deviceName;
  info.type = device_type(props.deviceType);
  DeviceCapabilities& c = info.caps;
  c.api_version = props.apiVersion;
  c.max_compute_workgroup_count_x = props.limits.maxComputeWorkGroupCount[0];
  c.max_push_constants_size = props.limits.maxPushConstantsSize;
  if (props.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    VkPhysicalDeviceVulkan11Features f11{};
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 f{};
    f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(pd, &f);
    c.storage_buffer_16bit = f11.storageBuffer16BitAccess == VK_TRUE;
    c.storage_buffer_8bit = f12.storageBuffer8BitAccess == VK_TRUE;
    c.shader_float16 = f12.shaderFloat16 == VK_TRUE;
    c.timeline_semaphore = f12.timelineSemaphore == VK_TRUE;

    VkPhysicalDeviceSubgroupProperties sub{};
    sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &sub;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    const bool compute = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    c.subgroup_size = sub.subgroupSize;
    c.subgroup_basic = compute && (sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0;
    c.subgroup_arithmetic =
        compute && (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
  }
  // Heap sizes, and with VK_EXT_memory_budget what is still free in each (a physical-device query:
  // the extension need only be supported, not enabled on a device).
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
  budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
  VkPhysicalDeviceMemoryProperties2 mem2{};
  mem2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
  const bool has_budget = props.apiVersion >= VK_API_VERSION_1_1 &&
                          supports_device_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (has_budget) mem2.pNext = &budget;
  if (props.apiVersion >= VK_API_VERSION_1_1) {
    vkGetPhysicalDeviceMemoryProperties2(pd, &mem2);
  } else {
    vkGetPhysicalDeviceMemoryProperties(pd, &mem2.memoryProperties);
  }
  const VkPhysicalDeviceMemoryProperties& mem = mem2.memoryProperties;
  for (std::uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    MemoryHeap heap{mem.memoryHeaps[i].size,
                    (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0};
    if (has_budget && budget.heapBudget[i] > 0) {
      heap.available = budget.heapBudget[i] > budget.heapUsage[i]
                           ? budget.heapBudget[i] - budget.heapUsage[i]
                           : 0;
    }
    c.heaps.push_back(heap);
  }
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  c.has_compute_queue = std::any_of(families.begin(), families.end(), [](const auto& q) {
    return (q.queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && q.queueCount > 0;
  });
  return info;
}

}  // namespace

Result<std::shared_ptr<Instance>> Instance::create(const InstanceOptions& options) {
  std::uint32_t loader_version = 0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS ||
      loader_version < VK_API_VERSION_1_2) {
    return fail(ErrorCode::kCapabilityMissing,
                "vulkan: the Vulkan loader is missing or older than 1.2");
  }
  std::shared_ptr<Instance> self(new Instance());
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "eredu";
  app.pEngineName = "eredu";
  app.apiVersion = VK_API_VERSION_1_2;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_debug_message;
  if (options.validation) {
    if (!layer_available("VK_LAYER_KHRONOS_validation")) {
      return fail(ErrorCode::kCapabilityMissing,
                  "vulkan: validation requested but VK_LAYER_KHRONOS_validation is not installed");
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    self->on_message_ = std::make_unique<std::function<void(std::string_view)>>(options.on_message);
    messenger_info.pUserData = self->on_message_.get();
  }
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  // With validation, synchronization validation too (missing barriers between dispatches and
  // copies are reported like any other validation error).
  const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  if (options.validation) {
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    features.pNext = &messenger_info;  // the messenger also reports instance creation
    ci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    ci.ppEnabledExtensionNames = extensions.data();
    ci.pNext = &features;
  }
  const VkResult r = vkCreateInstance(&ci, nullptr, &self->instance_);
  if (r != VK_SUCCESS) {
    self->instance_ = VK_NULL_HANDLE;
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
      return fail(
          ErrorCode::kCapabilityMissing,
          "vulkan: vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver)");
    }
    return fail(vk_error("vkCreateInstance", r));
  }
  if (options.validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr) {
      return fail(ErrorCode::kCapabilityMissing, "vulkan: VK_EXT_debug_utils is unavailable");
    }
    const VkResult mr = create(self->instance_, &messenger_info, nullptr, &self->messenger_);
    if (mr != VK_SUCCESS) return fail(vk_error("vkCreateDebugUtilsMessengerEXT", mr));
  }
  std::uint32_t n = 0;
  VkResult er = vkEnumeratePhysicalDevices(self->instance_, &n, nullptr);
  if (er != VK_SUCCESS) return fail(vk_error("vkEnumeratePhysicalDevices", er));
  self->physical_.resize(n);
  er = vkEnumeratePhysicalDevices(self->instance_, &n, self->physical_.data());
  if (er != VK_SUCCESS && er != VK_INCOMPLETE) {
    return fail(vk_error("vkEnumeratePhysicalDevices", er));
  }
  self->physical_.resize(n);
  for (std::uint32_t i = 0; i < n; ++i)
    self->infos_.push_back(describe(self->physical_[i], i));
  return self;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

namespace {
int type_rank(DeviceType t) {
  switch (t) {
    case DeviceType::kDiscreteGpu:
      return 0;
    case DeviceType::kIntegratedGpu:
      return 1;
    case DeviceType::kVirtualGpu:
      return 2;
    case DeviceType::kOther:
      return 3;
    case DeviceType::kCpu:
      break;
  }
  return 4;
}

std::string list_devices(std::span<const DeviceInfo> devices) {
  std::string s;
  for (const DeviceInfo& d : devices) {
    if (!s.empty()) s += ", ";
    s += std::to_string(d.index) + ": " + d.name + " (" + std::string(to_string(d.type)) + ")";
  }
  return s.empty() ? "none" : s;
}
}  // namespace

Result<std::uint32_t> select_device(std::span<const DeviceInfo> devices,
                                    std::string_view selector) {
  if (devices.empty()) {
    return fail(ErrorCode::kCapabilityMissing, "vulkan: no Vulkan device is available");
  }
  const DeviceInfo* chosen = nullptr;
  if (selector.empty()) {
    for (const DeviceInfo& d : devices) {
      if (!d.usable()) continue;
      if (chosen == nullptr || type_rank(d.type) < type_rank(chosen->type)) chosen = &d;
    }
    if (chosen == nullptr) {
      return fail(ErrorCode::kCapabilityMissing,
                  "vulkan: no device supports Vulkan 1.2 compute with timeline semaphores (" +
                      list_devices(devices) + ")");
    }
    return chosen->index;
  }
  const bool numeric =
      std::all_of(selector.begin(), selector.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  for (const DeviceInfo& d : devices) {
    if (numeric ? std::to_string(d.index) == selector
                : d.name.find(selector) != std::string::npos) {
      chosen = &d;
      break;
    }
  }
  if (chosen == nullptr) {
    return fail(ErrorCode::kNotFound, "vulkan: no device matches '" + std::string(selector) +
                                          "' (devices: " + list_devices(devices) + ")");
  }
  if (!chosen->usable()) {
    return fail(
        ErrorCode::kCapabilityMissing,
        "vulkan: device '" + chosen->name + "' lacks Vulkan 1.2 compute with timeline semaphores");
  }
  return chosen->index;
}

}  // namespace eredu::vulkan
