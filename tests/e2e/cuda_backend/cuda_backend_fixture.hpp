#pragma once
// The CUDA backend for the end-to-end tests: why this process cannot run it ("no CUDA device: ...",
// CudaBackend::create's own reason), a fresh backend per test on the default device, helpers to
// load a model on CUDA or on the CPU (the independent implementation compared against).
// (log_softmax, argmax and max_abs_diff: logit_math.hpp)
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cuda/cuda_backend.hpp"
#include "eredu/runtime/load_model.hpp"
#include "logit_math.hpp"
#include "shared_data.hpp"

namespace eredu::testing {

// Empty when the default CUDA device opens; otherwise CudaBackend::create's kCapabilityMissing
// message (no driver or no device), which reads "no CUDA device: ...". Decided once per process;
// the backend opened to decide it is let go at once (one living in a static would be destroyed
// after the CUDA runtime unloads). Any other failure is a device that would not open: the tests
// do not skip for it, they fail where they create their own backend.
inline const std::string& cuda_unavailable() {
  static const std::string reason = [] {
    auto backend = cuda::CudaBackend::create(cuda::CudaBackendOptions{});
    if (backend.has_value() || backend.error().code() != ErrorCode::kCapabilityMissing) {
      return std::string();
    }
    return backend.error().message();
  }();
  return reason;
}

// A new backend (its own stream) on the device `options` selects (the default device: 0).
inline Result<cuda::CudaBackend> test_cuda_backend(const cuda::CudaBackendOptions& options = {}) {
  return cuda::CudaBackend::create(options);
}

inline Result<runtime::ModelRuntime<cuda::CudaBackend>> load_on_cuda(
    const std::filesystem::path& model, cuda::CudaLoadOptions options = {},
    const cuda::CudaBackendOptions& backend_options = {}) {
  auto backend = test_cuda_backend(backend_options);
  if (!backend.has_value()) return fail(std::move(backend).error());
  return runtime::load_model(std::move(*backend), model, options);
}

inline auto load_on_cpu(const std::filesystem::path& model, cpu::CpuLoadOptions options = {}) {
  return runtime::load_model(cpu::CpuBackend(cpu::CpuBackendOptions{1}), model, options);
}

}  // namespace eredu::testing

// Skips the test with CudaBackend::create's reason ("no CUDA device: ...") without a usable GPU.
#define EREDU_REQUIRE_CUDA()                                \
  do {                                                      \
    if (!::eredu::testing::cuda_unavailable().empty()) {    \
      GTEST_SKIP() << ::eredu::testing::cuda_unavailable(); \
    }                                                       \
  } while (false)

#endif  // EREDU_HAVE_CUDA_BACKEND
