// End to end on Vulkan (llvmpipe in CI, under the validation layer): stories260K.gguf, fed each
// reference prompt, greedily generates exactly the 128 tokens llama.cpp generated
// (../shared/reference/stories260K-F32-greedy.json), with an F32 and with an F16 KV cache, and the
// log-probabilities of the reference's top five agree within the CPU test's bound (0.05).
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cstdint>
#include <vector>

#include "teacher_forced.hpp"
#include "vulkan_backend_fixture.hpp"

namespace {

using namespace eredu::testing;
using eredu::vulkan::KvCacheType;

void expect_reference_tokens(KvCacheType kv_type) {
  EREDU_REQUIRE_VULKAN();
  const auto model_path = models_dir() / "stories260K.gguf";
  const auto reference_path = reference_dir() / "stories260K-F32-greedy.json";
  EREDU_REQUIRE_SHARED_PATH(model_path);
  EREDU_REQUIRE_SHARED_PATH(reference_path);
  const auto cases = reference::load_greedy_cases(reference_path);
  ASSERT_EQ(cases.size(), 5u);
  eredu::vulkan::VulkanLoadOptions options;
  options.kv_cache_type = kv_type;
  auto runtime = load_on_vulkan(model_path, options);
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prompt);
    ASSERT_TRUE(runtime->session_mut().truncate(0).has_value());
    auto sub = runtime->prefill(
        std::vector<std::uint32_t>(c.prompt_tokens.begin(), c.prompt_tokens.end()));
    ASSERT_TRUE(sub.has_value()) << sub.error().what();
    auto logits = runtime->observe_output(sub->output);
    ASSERT_TRUE(logits.has_value()) << logits.error().what();
    std::vector<int> generated;
    double worst = 0.0;
    for (std::size_t i = 0; i < c.generated_tokens.size(); ++i) {
      if (i < c.top5.size()) {
        const auto lp = log_softmax(*logits);
        for (const auto& e : c.top5[i])
          worst = std::max(worst, std::abs(lp[static_cast<std::size_t>(e.id)] - e.logprob));
      }
      const std::uint32_t next = argmax(*logits);
      generated.push_back(static_cast<int>(next));
      if (i + 1 == c.generated_tokens.size()) break;
      auto step = runtime->decode(std::uint32_t{next});
      ASSERT_TRUE(step.has_value()) << step.error().what();
      logits = runtime->observe_output(step->output);
      ASSERT_TRUE(logits.has_value()) << logits.error().what();
    }
    EXPECT_EQ(generated, c.generated_tokens);
    EXPECT_LE(worst, 0.05);
  }
  expect_no_validation_messages();
}

TEST(VulkanStories260KGreedy, AllFivePromptsGenerateLlamaCppTokensWithF32KvCache) {
  expect_reference_tokens(KvCacheType::kF32);
}

TEST(VulkanStories260KGreedy, AllFivePromptsGenerateLlamaCppTokensWithF16KvCache) {
  expect_reference_tokens(KvCacheType::kF16);
}

}  // namespace
#endif  // EREDU_HAVE_VULKAN_BACKEND
