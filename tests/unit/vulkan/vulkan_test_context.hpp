#pragma once
// One Vulkan instance + device per test process, with VK_LAYER_KHRONOS_validation on and a
// debug-utils messenger that records every message. Tests call expect_no_validation_messages()
// after device work: any message recorded fails the test. Without a usable device, unavailable()
// says why and the tests skip with it.
#ifdef EREDU_HAVE_VULKAN_BACKEND

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/backends/vulkan/kernels.hpp"

namespace eredu::testing {

class VulkanTestContext {
 public:
  static VulkanTestContext& get() {
    static VulkanTestContext ctx;
    return ctx;
  }
  const std::string& unavailable() const { return unavailable_; }
  const std::shared_ptr<vulkan::Instance>& instance() const { return instance_; }
  const std::shared_ptr<vulkan::Device>& device() const { return device_; }
  vulkan::Kernels& kernels() { return *kernels_; }

  std::vector<std::string> take_messages() {
    std::lock_guard<std::mutex> lock(*mutex_);
    std::vector<std::string> out;
    out.swap(*messages_);
    return out;
  }

 private:
  VulkanTestContext() {
    vulkan::InstanceOptions options;
    options.validation = true;
    auto mutex = mutex_;
    auto messages = messages_;
    options.on_message = [mutex, messages](std::string_view m) {
      std::lock_guard<std::mutex> lock(*mutex);
      messages->emplace_back(m);
    };
    auto instance = vulkan::Instance::create(options);
    if (!instance.has_value()) {
      unavailable_ = "no Vulkan device: " + instance.error().what();
      return;
    }
    instance_ = std::move(instance).value();
    auto index = vulkan::select_device(instance_->devices(), "");
    if (!index.has_value()) {
      unavailable_ = "no Vulkan device: " + index.error().what();
      return;
    }
    auto device = vulkan::Device::create(instance_, index.value());
    if (!device.has_value()) {
      unavailable_ = "no Vulkan device: " + device.error().what();
      return;
    }
    device_ = std::move(device).value();
    kernels_ = std::make_unique<vulkan::Kernels>(device_);
  }

  std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<std::string>> messages_ =
      std::make_shared<std::vector<std::string>>();
  std::string unavailable_;
  std::shared_ptr<vulkan::Instance> instance_;
  std::shared_ptr<vulkan::Device> device_;
  std::unique_ptr<vulkan::Kernels> kernels_;
};

// Fails the current test with every validation message recorded since the last call.
inline void expect_no_validation_messages() {
  for (const std::string& m : VulkanTestContext::get().take_messages()) {
    ADD_FAILURE() << "Vulkan validation message: " << m;
  }
}

#define EREDU_REQUIRE_VULKAN()                                                  \
  do {                                                                          \
    if (!::eredu::testing::VulkanTestContext::get().unavailable().empty()) {    \
      GTEST_SKIP() << ::eredu::testing::VulkanTestContext::get().unavailable(); \
    }                                                                           \
  } while (false)

}  // namespace eredu::testing

#endif  // EREDU_HAVE_VULKAN_BACKEND
