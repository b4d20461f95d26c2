// VulkanBackend contracts and session semantics on stories260K, compared with the CPU backend
// (an independent implementation): prefill/decode logits, checkpoint/truncate replay, rejected
// input (token out of range, context full) leaving the session usable, completions that observe
// only their own submission, pooled activation buffers, descriptor pools that grow past one
// pool's sets, device selection errors and device reports. All under the validation layer.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cstdint>
#include <cstring>
#include <vector>

#include "eredu/backends/vulkan/vulkan_plan_factory.hpp"
#include "vulkan_backend_fixture.hpp"

// (a) The contracts, checked where the header is used.
static_assert(eredu::diagnose::neural_backend<eredu::vulkan::VulkanBackend>());
static_assert(eredu::diagnose::parameter_backend<eredu::vulkan::VulkanBackend>());
static_assert(eredu::diagnose::backend_provider<eredu::vulkan::VulkanBackend>());
static_assert(eredu::diagnose::model_loading_backend<eredu::vulkan::VulkanBackend>());
static_assert(eredu::diagnose::text_generation_backend<eredu::vulkan::VulkanBackend>());
static_assert(eredu::model::ModelBackend<eredu::vulkan::VulkanBackend>);
static_assert(eredu::diagnose::optional_operators<eredu::vulkan::VulkanBackend>());
static_assert(eredu::diagnose::execution_plan_backend_factory<eredu::vulkan::VulkanPlanFactory>());

namespace {

using namespace eredu::testing;
using eredu::ErrorCode;

const std::vector<std::uint32_t> kPrompt = {1, 403, 407, 261, 378, 429};

std::filesystem::path stories() {
  return models_dir() / "stories260K.gguf";
}

#define REQUIRE_STORIES() \
  EREDU_REQUIRE_VULKAN(); \
  EREDU_REQUIRE_SHARED_PATH(stories())

// Logits of `tokens` prefilled from position 0, then each of `decodes`, on the CPU.
std::vector<std::vector<float>> cpu_logits(const std::vector<std::uint32_t>& tokens,
                                           const std::vector<std::uint32_t>& decodes) {
  auto runtime = load_on_cpu(stories());
  EXPECT_TRUE(runtime.has_value());
  std::vector<std::vector<float>> out;
  auto sub = runtime->prefill(std::vector<std::uint32_t>(tokens));
  out.push_back(*runtime->observe_output(sub->output));
  for (std::uint32_t t : decodes) {
    auto step = runtime->decode(std::uint32_t{t});
    out.push_back(*runtime->observe_output(step->output));
  }
  return out;
}

constexpr double kLogitTolerance = 2e-3;

TEST(VulkanSession, PrefillAndDecodeLogitsMatchTheCpuBackend) {
  REQUIRE_STORIES();
  const auto expected = cpu_logits(kPrompt, {300, 301, 302});
  auto runtime = load_on_vulkan(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto sub = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(sub.has_value()) << sub.error().what();
  auto logits = runtime->observe_output(sub->output);
  ASSERT_TRUE(logits.has_value());
  EXPECT_LE(max_abs_diff(*logits, expected[0]), kLogitTolerance);
  std::size_t i = 1;
  for (std::uint32_t t : {300u, 301u, 302u}) {
    auto step = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(step.has_value()) << step.error().what();
    ASSERT_TRUE(step->completion.wait().has_value());
    EXPECT_TRUE(*step->completion.is_complete());
    auto l = runtime->observe_output(step->output);
    ASSERT_TRUE(l.has_value());
    EXPECT_LE(max_abs_diff(*l, expected[i++]), kLogitTolerance);
  }
  EXPECT_EQ(runtime->session().checkpoint(), kPrompt.size() + 3);
  expect_no_validation_messages();
}

TEST(VulkanSession, TruncateToACheckpointAndReplayGivesTheSameLogits) {
  REQUIRE_STORIES();
  auto runtime = load_on_vulkan(stories());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto sub = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(sub.has_value());
  auto first = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(first.has_value());
  const auto before = *runtime->observe_output(first->output);
  ASSERT_TRUE(runtime->session_mut().truncate(3).has_value());
  EXPECT_EQ(runtime->session().checkpoint(), 3u);
  auto rest = runtime->prefill(std::vector<std::uint32_t>(kPrompt.begin() + 3, kPrompt.end()));
  ASSERT_TRUE(rest.has_value());
  auto again = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(again.has_value());
  const auto after = *runtime->observe_output(again->output);
  EXPECT_LE(max_abs_diff(before, after), 1e-5);
  // Truncating past the cached positions is refused and changes nothing.
  auto beyond = runtime->session_mut().truncate(100);
  ASSERT_FALSE(beyond.has_value());
  EXPECT_EQ(beyond.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(runtime->session().checkpoint(), kPrompt.size() + 1);
  expect_no_validation_messages();
}

TEST(VulkanSession, TokenOutOfRangeIsRejectedAndTheSessionStaysUsable) {
  REQUIRE_STORIES();
  const auto expected = cpu_logits(kPrompt, {300});
  auto runtime = load_on_vulkan(stories());
  ASSERT_TRUE(runtime.has_value());
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kPrompt)).has_value());
  const std::uint32_t n_vocab = runtime->session().n_vocab();
  auto bad = runtime->decode(std::uint32_t{n_vocab});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  auto bad_prefill = runtime->prefill(std::vector<std::uint32_t>{1, 2, n_vocab + 5});
  ASSERT_FALSE(bad_prefill.has_value());
  // The bad token's index is named in the message; it is not a byte offset.
  EXPECT_FALSE(bad_prefill.error().offset().has_value());
  EXPECT_NE(bad_prefill.error().what().find("at index 2 "), std::string::npos)
      << bad_prefill.error().what();
  EXPECT_EQ(bad_prefill.error().what().find("at byte"), std::string::npos);
  EXPECT_FALSE(runtime->prefill(std::vector<std::uint32_t>{}).has_value());
  EXPECT_EQ(runtime->session().checkpoint(), kPrompt.size());
  auto good = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(good.has_value()) << good.error().what();
  EXPECT_LE(max_abs_diff(*runtime->observe_output(good->output), expected[1]), kLogitTolerance);
  expect_no_validation_messages();
}

TEST(VulkanSession, ContextFullIsRejectedAndTruncateMakesRoomAgain) {
  REQUIRE_STORIES();
  eredu::vulkan::VulkanLoadOptions options;
  options.context_length = 8;
  auto runtime = load_on_vulkan(stories(), options);
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kPrompt)).has_value());
  ASSERT_TRUE(runtime->decode(std::uint32_t{300}).has_value());
  ASSERT_TRUE(runtime->decode(std::uint32_t{301}).has_value());
  auto full = runtime->decode(std::uint32_t{302});
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(runtime->session().checkpoint(), 8u);
  ASSERT_TRUE(runtime->session_mut().truncate(kPrompt.size()).has_value());
  auto again = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(again.has_value()) << again.error().what();
  const auto expected = cpu_logits(kPrompt, {300});
  EXPECT_LE(max_abs_diff(*runtime->observe_output(again->output), expected[1]), kLogitTolerance);
  expect_no_validation_messages();
}

TEST(VulkanSession, EachCompletionObservesOnlyItsOwnSubmission) {
  REQUIRE_STORIES();
  const auto expected = cpu_logits(kPrompt, {300, 301});
  auto runtime = load_on_vulkan(stories());
  ASSERT_TRUE(runtime.has_value());
  // Three submissions in flight before anything is waited for.
  auto a = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  auto b = runtime->decode(std::uint32_t{300});
  auto c = runtime->decode(std::uint32_t{301});
  ASSERT_TRUE(a.has_value() && b.has_value() && c.has_value());
  EXPECT_LT(a->completion.value(), b->completion.value());
  EXPECT_LT(b->completion.value(), c->completion.value());
  // Waiting for the middle one gives its own output, whatever the others' state.
  ASSERT_TRUE(b->completion.wait().has_value());
  EXPECT_LE(max_abs_diff(*runtime->observe_output(b->output), expected[1]), kLogitTolerance);
  EXPECT_LE(max_abs_diff(*runtime->observe_output(c->output), expected[2]), kLogitTolerance);
  EXPECT_LE(max_abs_diff(*runtime->observe_output(a->output), expected[0]), kLogitTolerance);
  expect_no_validation_messages();
}

TEST(VulkanSession, ACompletionOutlivesItsDroppedOutputAndStillWaits) {
  REQUIRE_STORIES();
  auto runtime = load_on_vulkan(stories());
  ASSERT_TRUE(runtime.has_value());
  auto sub = runtime->prefill(std::vector<std::uint32_t>(kPrompt));
  ASSERT_TRUE(sub.has_value());
  eredu::vulkan::VulkanCompletion completion = std::move(sub->completion);
  sub->output = eredu::vulkan::VulkanTensor{};  // the logits' host copy is dropped here...
  ASSERT_TRUE(completion.wait().has_value());   // ...and the submission still writes it safely
  EXPECT_TRUE(*completion.is_complete());
  auto next = runtime->decode(std::uint32_t{300});
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(runtime->observe_output(next->output)->size(), runtime->session().n_vocab());
  expect_no_validation_messages();
}

TEST(VulkanSession, SteadyDecodeReusesPooledBuffersInsteadOfAllocating) {
  REQUIRE_STORIES();
  auto runtime = load_on_vulkan(stories());
  ASSERT_TRUE(runtime.has_value());
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kPrompt)).has_value());
  for (std::uint32_t t : {300u, 301u}) {
    auto s = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(s.has_value() && runtime->observe_output(s->output).has_value());
  }
  const auto created = VulkanTestContext::get().device()->buffers_created();
  for (std::uint32_t t : {302u, 303u, 304u, 305u}) {
    auto s = runtime->decode(std::uint32_t{t});
    ASSERT_TRUE(s.has_value() && runtime->observe_output(s->output).has_value());
  }
  EXPECT_EQ(VulkanTestContext::get().device()->buffers_created(), created);
  expect_no_validation_messages();
}

TEST(VulkanOps, OneRecordingOfManyHundredDispatchesRunsWithGrowingDescriptorPools) {
  EREDU_REQUIRE_VULKAN();
  auto backend = test_vulkan_backend();
  ASSERT_TRUE(backend.has_value());
  auto& device = *VulkanTestContext::get().device();
  // A 2 x 8 F32 table: row r = r + col / 8.
  std::vector<float> table(16);
  for (std::size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<float>(i / 8) + static_cast<float>(i % 8) / 8.0f;
  eredu::vulkan::VulkanWeight w{"table", eredu::DType::kF32, {2, 8}, nullptr, 64, nullptr};
  auto buffer = device.create_device_buffer(64);
  ASSERT_TRUE(buffer.has_value());
  w.buffer = *buffer;
  auto up = device.submit([&](eredu::vulkan::Recorder& r) {
    return r.upload(w.buffer, std::as_bytes(std::span<const float>(table)));
  });
  ASSERT_TRUE(up.has_value() && up->wait().has_value());
  const std::vector<std::uint32_t> ids = {1};
  auto x = backend->embedding(w, ids);
  ASSERT_TRUE(x.has_value());
  // acc = x + x + ... (601 terms): 601 dispatches in one command buffer, more sets than a pool has.
  auto acc = *x;
  constexpr int kAdds = 600;
  for (int i = 0; i < kAdds; ++i) {
    auto next = backend->add(acc, *x);
    ASSERT_TRUE(next.has_value()) << next.error().what();
    acc = std::move(*next);
  }
  EXPECT_EQ(backend->recorded_dispatches(), static_cast<std::size_t>(kAdds + 1));
  auto values = backend->read(acc);
  ASSERT_TRUE(values.has_value()) << values.error().what();
  for (std::size_t c = 0; c < 8; ++c)
    EXPECT_FLOAT_EQ((*values)[c], (kAdds + 1) * table[8 + c]);
  expect_no_validation_messages();
}

TEST(VulkanBackendDevices, ReportsEveryDeviceAndRejectsAnUnknownSelector) {
  EREDU_REQUIRE_VULKAN();
  auto backend = test_vulkan_backend();
  ASSERT_TRUE(backend.has_value());
  auto reports = backend->devices();
  ASSERT_TRUE(reports.has_value());
  const auto& infos = VulkanTestContext::get().instance()->devices();
  ASSERT_EQ(reports->size(), infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ((*reports)[i].descriptor.id, "vulkan:" + std::to_string(infos[i].index));
    EXPECT_NE((*reports)[i].descriptor.name.find(infos[i].name), std::string::npos);
    EXPECT_EQ((*reports)[i].capabilities.exact_completion, infos[i].usable());
  }
  EXPECT_EQ(backend->descriptor().name, "vulkan");
  eredu::vulkan::VulkanBackendOptions options;
  options.device = "no-such-device-anywhere";
  auto missing = eredu::vulkan::VulkanBackend::create(options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  options.device = "999";
  auto by_index = eredu::vulkan::VulkanBackend::create(options);
  ASSERT_FALSE(by_index.has_value());
  EXPECT_EQ(by_index.error().code(), ErrorCode::kNotFound);
  expect_no_validation_messages();
}

// Without the validation layer (which would rightly flag an allocation larger than the heap):
// a KV cache far beyond the device's memory is a clear error, not an abort, and the backend
// still runs afterwards.
TEST(VulkanBackendErrors, AKvCacheBeyondDeviceMemoryIsCapacityExhausted) {
  EREDU_REQUIRE_VULKAN();
  eredu::vulkan::VulkanBackendOptions options;
  options.device = std::to_string(VulkanTestContext::get().device()->info().index);
  auto backend = eredu::vulkan::VulkanBackend::create(options);
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  std::uint64_t heap = 0;
  for (const auto& h : backend->device().info().caps.heaps)
    heap = std::max(heap, h.size);
  // One layer whose K buffer alone is 4x the largest heap (F32, 1024-wide rows).
  const std::uint64_t positions = std::max<std::uint64_t>(1, heap / 1024);
  const eredu::KvCacheSpec spec{
      1, 8, 128, static_cast<std::uint32_t>(std::min<std::uint64_t>(positions, UINT32_MAX))};
  auto cache = backend->create_kv_cache(spec);
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code(), ErrorCode::kCapacityExhausted) << cache.error().what();
  auto small = backend->create_kv_cache(eredu::KvCacheSpec{1, 1, 8, 4});
  EXPECT_TRUE(small.has_value());
}

}  // namespace
#endif  // EREDU_HAVE_VULKAN_BACKEND
