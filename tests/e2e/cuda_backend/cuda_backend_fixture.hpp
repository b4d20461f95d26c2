#pragma once
// The CUDA backend for the end-to-end tests: why this process cannot run it ("no CUDA device: ...",
// CudaBackend::create's own reason), a fresh backend per test on the default device, helpers to
// load a model on CUDA or on the CPU (the independent implementation compared against), and a
// double-precision log-softmax.
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

// Natural-log softmax in double (independent of every backend's softmax).
inline std::vector<double> log_softmax(const std::vector<float>& logits) {
  double max = logits.front();
  for (float v : logits)
    max = std::max(max, static_cast<double>(v));
  double sum = 0.0;
  for (float v : logits)
    sum += std::exp(static_cast<double>(v) - max);
  const double log_sum = std::log(sum) + max;
  std::vector<double> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i)
    out[i] = static_cast<double>(logits[i]) - log_sum;
  return out;
}

inline std::uint32_t argmax(const std::vector<float>& v) {
  return static_cast<std::uint32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = a.size() == b.size() ? 0.0 : 1e30;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
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
