// The quantized stories260K files, uploaded to the device with their blocks packed and decoded in
// the shaders, give llama.cpp's reference tokens their log-probabilities within the CPU test's
// tolerance (tests/support/quantized_teacher_forced_suite.hpp) -- on Vulkan, under the validation
// layer.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <filesystem>
#include <string>

#include "quantized_teacher_forced_suite.hpp"
#include "vulkan_backend_fixture.hpp"

namespace {

struct Vulkan {
  static std::string unavailable() {
    return eredu::testing::VulkanTestContext::get().unavailable();
  }
  static auto load(const std::filesystem::path& path, eredu::KvCacheType kv) {
    eredu::vulkan::VulkanLoadOptions options;
    options.kv_cache_type = kv;
    return eredu::testing::load_on_vulkan(path, options);
  }
  static void after_case() { eredu::testing::expect_no_validation_messages(); }
};

EREDU_QUANTIZED_TEACHER_FORCED_SUITE(Vulkan, Vulkan)

}  // namespace
#endif  // EREDU_HAVE_VULKAN_BACKEND
