// Every model family on the Vulkan backend (llvmpipe in CI, under the validation layer) generates
// llama.cpp's exact greedy tokens (the suite is tests/support/family_greedy_suite.hpp, written
// once for every backend).
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include "family_greedy_suite.hpp"
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

EREDU_FAMILY_GREEDY_SUITE(Vulkan, Vulkan)

}  // namespace
#endif  // EREDU_HAVE_VULKAN_BACKEND
