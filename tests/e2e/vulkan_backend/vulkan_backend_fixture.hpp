#pragma once
// The Vulkan backend on the shared test device (VK_LAYER_KHRONOS_validation on, synchronization
// validation included; every message fails the test), plus helpers shared by the end-to-end
// tests: load a model on Vulkan or on the CPU (the independent implementation compared against),
// and a double-precision log-softmax.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "../../unit/vulkan/vulkan_test_context.hpp"
#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/runtime/load_model.hpp"
#include "shared_data.hpp"

namespace eredu::testing {

inline Result<vulkan::VulkanBackend> test_vulkan_backend() {
  return vulkan::VulkanBackend::on_device(VulkanTestContext::get().device());
}

inline auto load_on_vulkan(const std::filesystem::path& model,
                           vulkan::VulkanLoadOptions options = {}) {
  auto backend = test_vulkan_backend();
  EXPECT_TRUE(backend.has_value());
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

#endif  // EREDU_HAVE_VULKAN_BACKEND
