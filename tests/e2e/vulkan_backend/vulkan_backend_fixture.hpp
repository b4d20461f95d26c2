#pragma once
// The Vulkan backend on the shared test device (VK_LAYER_KHRONOS_validation on, synchronization
// validation included; every message fails the test), plus helpers shared by the end-to-end
// tests: load a model on Vulkan or on the CPU (the independent implementation compared against).
// (log_softmax, argmax and max_abs_diff: logit_math.hpp)
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
#include "logit_math.hpp"
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

}  // namespace eredu::testing

#endif  // EREDU_HAVE_VULKAN_BACKEND
