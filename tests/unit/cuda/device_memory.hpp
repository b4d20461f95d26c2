#pragma once
// What the GPU-only CUDA tests share: the skip when no device can run them, and device memory
// released at scope exit. Only for tests built with the CUDA backend (EREDU_HAVE_CUDA_BACKEND).

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>

#include "eredu/backends/cuda/device.hpp"

// Skips the test, with discovery's reason ("no CUDA device: ..."), when there is no usable GPU.
#define EREDU_REQUIRE_CUDA_DEVICE()                                                    \
  do {                                                                                 \
    const auto eredu_devices_ = eredu::cuda::list_devices();                           \
    if (!eredu_devices_.has_value()) GTEST_SKIP() << eredu_devices_.error().message(); \
  } while (false)

namespace eredu::testing {

// Device memory freed at scope exit; ptr is null when cudaMalloc failed.
struct DeviceBytes {
  void* ptr = nullptr;
  explicit DeviceBytes(std::size_t n) {
    if (cudaMalloc(&ptr, n) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBytes() { (void)cudaFree(ptr); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

}  // namespace eredu::testing
