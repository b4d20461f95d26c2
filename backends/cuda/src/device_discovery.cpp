// Device discovery through the CUDA runtime. On a machine without the NVIDIA driver the runtime
// still loads (libcudart does not need libcuda to start) and cudaGetDeviceCount reports
// cudaErrorInsufficientDriver or cudaErrorNoDevice, which becomes a typed "no CUDA device" error.
#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "cuda_error.hpp"
#include "eredu/backends/cuda/device.hpp"

namespace eredu::cuda {
namespace {

// A failed runtime call leaves its error as the thread's "last error"; clearing it keeps a later,
// unrelated cudaGetLastError (a kernel launch check) from reporting discovery's failure.
void clear_last_error() noexcept {
  (void)cudaGetLastError();
}

// Fills free_memory_bytes by making `device` current (creating its primary context) and asking
// cudaMemGetInfo; restores the caller's current device afterwards.
void query_free_memory(DeviceInfo& info) {
  int previous = 0;
  const bool had_previous = cudaGetDevice(&previous) == cudaSuccess;
  cudaError_t error = cudaSetDevice(info.index);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (error == cudaSuccess) error = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (error == cudaSuccess) {
    info.free_memory_bytes = free_bytes;
  } else {
    info.free_memory_unavailable_reason = cuda_error("cudaMemGetInfo", error).message();
    clear_last_error();
  }
  if (had_previous) (void)cudaSetDevice(previous);
}

Result<DeviceInfo> describe_device(int index, bool free_memory) {
  cudaDeviceProp props{};
  const cudaError_t error = cudaGetDeviceProperties(&props, index);
  if (error != cudaSuccess) {
    clear_last_error();
    return fail(cuda_error("cudaGetDeviceProperties(" + std::to_string(index) + ")", error));
  }
  DeviceInfo info;
  info.index = index;
  info.name = props.name;
  info.compute_capability_major = props.major;
  info.compute_capability_minor = props.minor;
  info.multiprocessors = props.multiProcessorCount;
  info.total_memory_bytes = props.totalGlobalMem;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) {
    info.pci_bus_id = bus_id;
  } else {
    clear_last_error();
  }
  if (free_memory) {
    query_free_memory(info);
  } else {
    info.free_memory_unavailable_reason = "not queried";
  }
  return info;
}

}  // namespace

RuntimeVersions runtime_versions() noexcept {
  RuntimeVersions versions;
  if (cudaRuntimeGetVersion(&versions.runtime) != cudaSuccess) versions.runtime = 0;
  if (cudaDriverGetVersion(&versions.driver) != cudaSuccess) versions.driver = 0;
  clear_last_error();
  return versions;
}

Result<std::vector<DeviceInfo>> list_devices(bool free_memory) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    clear_last_error();
    return fail(cuda_error("cudaGetDeviceCount", error));
  }
  if (count <= 0) {
    // The runtime reports this case as cudaErrorNoDevice; kept for a runtime that returns 0.
    return fail(cuda_error("cudaGetDeviceCount", cudaErrorNoDevice));
  }
  std::vector<DeviceInfo> devices;
  devices.reserve(static_cast<std::size_t>(count));
  for (int index = 0; index < count; ++index) {
    EREDU_TRY(DeviceInfo info, describe_device(index, free_memory));
    devices.push_back(std::move(info));
  }
  return devices;
}

}  // namespace eredu::cuda
