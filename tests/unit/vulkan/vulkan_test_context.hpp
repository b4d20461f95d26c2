#pragma once
// One Vulkan instance + device per test process, with VK_LAYER_KHRONOS_validation on and a
// debug-utils messenger that records every message. Tests call expect_no_validation_messages()
// after device work: any message recorded fails the test. Without a usable device, unavailable()
// says why and the tests skip with it.
#ifdef EREDU_HAVE_VULKAN_BACKEND

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "eredu/backends/vulkan/device.hpp"
#include "eredu/backends/vulkan/vulkan_types.hpp"

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
  }

  std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<std::string>> messages_ =
      std::make_shared<std::vector<std::string>>();
  std::string unavailable_;
  std::shared_ptr<vulkan::Instance> instance_;
  std::shared_ptr<vulkan::Device> device_;
};

// Fails the current test with every validation message recorded since the last call.
inline void expect_no_validation_messages() {
  for (const std::string& m : VulkanTestContext::get().take_messages()) {
    ADD_FAILURE() << "Vulkan validation message: " << m;
  }
}

// A [rows, cols] VulkanTensor holding `values`, uploaded in its own submission and waited for (the
// backend has no host-to-tensor operator: a model's activations start from embedding()).
inline Result<vulkan::VulkanTensor> upload_tensor(vulkan::Device& device,
                                                  std::span<const float> values, std::size_t rows,
                                                  std::size_t cols) {
  EREDU_TRY(vulkan::BufferPtr buffer, device.acquire_device_buffer(values.size_bytes()));
  EREDU_TRY(vulkan::Completion done, device.submit([&](vulkan::Recorder& r) -> Result<void> {
    return r.upload(buffer, std::as_bytes(values));
  }));
  EREDU_TRY_VOID(done.wait());
  vulkan::VulkanTensor t;
  t.rows = rows;
  t.cols = cols;
  t.buffer = std::move(buffer);
  return t;
}

#define EREDU_REQUIRE_VULKAN()                                                  \
  do {                                                                          \
    if (!::eredu::testing::VulkanTestContext::get().unavailable().empty()) {    \
      GTEST_SKIP() << ::eredu::testing::VulkanTestContext::get().unavailable(); \
    }                                                                           \
  } while (false)

}  // namespace eredu::testing

#endif  // EREDU_HAVE_VULKAN_BACKEND
