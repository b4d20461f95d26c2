#pragma once
// eredu-inspect --devices: every device of every backend built into this binary, with its
// capabilities. A backend that is built but finds no device (no Vulkan driver, say) is listed
// with the reason, not treated as a failure; a backend that is not built is listed as such.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace eredu::inspect {

// One fact about a device; `value` is a JSON scalar, or an array of objects for memory heaps.
struct DeviceProperty {
  std::string key;
  nlohmann::ordered_json value;
};

struct DeviceListing {
  std::string id;    // backend-scoped, e.g. "cpu:0", "vulkan:1"
  std::string name;  // for people
  bool usable = true;
  std::string unusable_reason;  // why eredu cannot use it (empty when usable)
  std::vector<DeviceProperty> properties;
};

enum class BackendStatus { kAvailable, kNoDevice, kNotBuilt };

struct BackendListing {
  std::string backend;  // "cpu", "vulkan", "cuda"
  BackendStatus status = BackendStatus::kAvailable;
  std::string note;  // why there is no device, or what the backend cannot do yet
  std::vector<DeviceListing> devices;
};

// Queries every backend (never fails: a failing query becomes that backend's note).
[[nodiscard]] std::vector<BackendListing> list_devices();

[[nodiscard]] std::string render_devices_text(const std::vector<BackendListing>& backends);
[[nodiscard]] nlohmann::ordered_json render_devices_json(
    const std::vector<BackendListing>& backends);

}  // namespace eredu::inspect
