// The device's buffer pool and open recordings: a pooled buffer is handed out again only after
// every holder -- the submission that uses it included -- has let go, and then without a new
// driver allocation; one recording may hold more dispatches than a descriptor pool has sets.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cstring>
#include <vector>

#include "vulkan_test_context.hpp"

namespace {

using eredu::testing::expect_no_validation_messages;
using eredu::testing::VulkanTestContext;
using namespace eredu::vulkan;

TEST(VulkanBufferPool, ABufferInFlightIsNotReusedUntilItsSubmissionCompletes) {
  EREDU_REQUIRE_VULKAN();
  Device& dev = *VulkanTestContext::get().device();
  auto first = dev.acquire_device_buffer(1000);
  ASSERT_TRUE(first.has_value());
  EXPECT_GE(first.value()->size(), 1000u);
  const VkBuffer handle = first.value()->handle();
  std::vector<float> values(250, 1.5f);
  auto done = dev.submit(
      [&](Recorder& r) { return r.upload(*first, std::as_bytes(std::span<const float>(values))); });
  ASSERT_TRUE(done.has_value());
  first.value().reset();  // the submission still holds it
  auto second = dev.acquire_device_buffer(1000);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second.value()->handle(), handle);
  ASSERT_TRUE(done->wait().has_value());  // releases the submission's buffers to the pool
  const auto created = dev.buffers_created();
  auto third = dev.acquire_device_buffer(900);  // same size class
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third.value()->handle(), handle);
  EXPECT_EQ(dev.buffers_created(), created);
  expect_no_validation_messages();
}

TEST(VulkanBufferPool, AnOpenRecordingSubmitsOnceAndItsCompletionHasItsOwnValue) {
  EREDU_REQUIRE_VULKAN();
  Device& dev = *VulkanTestContext::get().device();
  auto rec = dev.begin();
  ASSERT_TRUE(rec.has_value());
  auto buffer = dev.acquire_device_buffer(16);
  ASSERT_TRUE(buffer.has_value());
  const float in[4] = {1, 2, 3, 4};
  float out[4] = {};
  ASSERT_TRUE((*rec)->upload(*buffer, std::as_bytes(std::span<const float>(in))).has_value());
  ASSERT_TRUE((*rec)->download(*buffer, std::as_writable_bytes(std::span<float>(out))).has_value());
  auto a = dev.submit(std::move(*rec));
  ASSERT_TRUE(a.has_value());
  auto b = dev.submit([](Recorder&) { return eredu::ok(); });
  ASSERT_TRUE(b.has_value());
  EXPECT_LT(a->value(), b->value());
  ASSERT_TRUE(a->wait().has_value());
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
  ASSERT_TRUE(b->wait().has_value());
  expect_no_validation_messages();
}

}  // namespace
#endif  // EREDU_HAVE_VULKAN_BACKEND
