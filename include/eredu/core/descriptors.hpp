#pragma once
// Descriptors: who a backend is and which devices it can see.

#include <cstdint>
#include <optional>
#include <string>

#include "eredu/core/capabilities.hpp"

namespace eredu {

// A backend's identity as it reports it (`BackendProvider::descriptor()`).
struct BackendDescriptor {
  std::string name;     // matches the BackendId a plan names, e.g. "cpu"
  std::string version;  // the backend's own version string, for reports

  friend bool operator==(const BackendDescriptor&, const BackendDescriptor&) = default;
};

// One device a backend discovered. `family` is an open string ("cpu", "nvidia", "llvmpipe", ...);
// `memory_bytes` (total) and `free_memory_bytes` (what can be allocated now: the host's
// MemAvailable, a GPU's free memory) are absent when the backend cannot tell (never guessed).
struct DeviceDescriptor {
  std::string id;      // stable within one backend; what a DevicePlan names
  std::string name;    // for people
  std::string family;  // open vendor/architecture family
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> free_memory_bytes = std::nullopt;

  friend bool operator==(const DeviceDescriptor&, const DeviceDescriptor&) = default;
};

// One entry of `BackendProvider::devices()`: a device and its fail-closed capabilities.
struct DeviceReport {
  DeviceDescriptor descriptor;
  DeviceCapabilities capabilities;

  friend bool operator==(const DeviceReport&, const DeviceReport&) = default;
};

}  // namespace eredu
