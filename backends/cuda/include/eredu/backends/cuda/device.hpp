#pragma once
// CUDA device discovery. This header is plain C++ (no CUDA header, no CUDA type): code that only
// lists devices, plans or prints does not need the CUDA toolkit's headers to compile.
// Every CUDA runtime failure becomes an eredu::Error at the backend boundary; nothing aborts and
// nothing throws.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eredu/core/result.hpp"

namespace eredu::cuda {

struct DeviceInfo {
  int index = 0;  // the CUDA runtime's device ordinal
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  std::string pci_bus_id;  // "0000:41:00.0"; empty when the runtime does not report it
  std::uint64_t total_memory_bytes = 0;
  // Free memory as cudaMemGetInfo reports it; absent when the device's context could not be
  // created (e.g. a device in exclusive-process mode held by another process), with the reason.
  std::optional<std::uint64_t> free_memory_bytes;
  std::string free_memory_unavailable_reason;
};

// The CUDA runtime this library was built against and the installed driver's CUDA version, both
// as major * 1000 + minor * 10 (13000 = 13.0); driver 0 means no driver is installed.
struct RuntimeVersions {
  int runtime = 0;
  int driver = 0;
};
[[nodiscard]] RuntimeVersions runtime_versions() noexcept;

// Every CUDA device of this machine, in ordinal order. With no usable driver or no device the
// result is a kCapabilityMissing error whose message starts "no CUDA device: " and names the
// CUDA error (cudaErrorNoDevice, cudaErrorInsufficientDriver, ...); the list is never empty.
// Querying free memory creates each device's primary context (a few hundred MiB of device memory
// that stays reserved while the process runs).
// `free_memory = false` skips that query (and so the contexts): free_memory_bytes stays empty,
// with that reason; selecting a device needs no more.
[[nodiscard]] Result<std::vector<DeviceInfo>> list_devices(bool free_memory = true);

}  // namespace eredu::cuda
