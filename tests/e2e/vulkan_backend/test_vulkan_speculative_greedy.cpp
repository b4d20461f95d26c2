// Speculative decoding on the Vulkan backend (llvmpipe in CI, under the validation layer) gives
// the tokens of plain greedy decoding on Vulkan, with the n-gram drafter and with a quantized
// draft model that the Vulkan plan factory realized from the plan (plan::realize_drafting_on).
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eredu/backends/vulkan/vulkan_plan_factory.hpp"
#include "eredu/generation/speculative/external_drafter.hpp"
#include "eredu/generation/speculative/ngram_drafter.hpp"
#include "eredu/runtime/plan_realization.hpp"
#include "eredu/text/vocabulary_fingerprint.hpp"
#include "speculative_support.hpp"
#include "vulkan_backend_fixture.hpp"

namespace eredu::testing {
namespace {

using generation::speculative::ExternalDrafter;
using generation::speculative::NgramDrafter;
using speculative::model_path;
using speculative::plain;
using speculative::request_for;
using speculative::tokenizer_of;

const std::vector<std::string> kPrompts{"Once upon a time", "The cat sat on the mat. The cat"};
constexpr std::int64_t kTokens = 48;

TEST(VulkanSpeculativeGreedy, NgramDraftingGivesThePlainGreedyTokens) {
  EREDU_REQUIRE_VULKAN();
  const auto path = model_path("stories260K.gguf");
  EREDU_REQUIRE_SHARED_PATH(path);
  auto tokenizer = tokenizer_of(path);
  auto target = load_on_vulkan(path);
  ASSERT_TRUE(target.has_value()) << target.error().what();
  for (const std::string& prompt : kPrompts) {
    const auto request = request_for(*tokenizer, prompt, kTokens);
    const auto reference = plain(*target, *tokenizer, request);
    for (const std::uint32_t k : {3u, 8u}) {
      auto drafter = NgramDrafter::create(3);
      ASSERT_TRUE(drafter.has_value());
      const auto run = speculative::speculative(*target, *drafter, *tokenizer, request, k);
      EXPECT_EQ(run.generation.tokens, reference.tokens) << prompt << ", k " << k;
    }
  }
  expect_no_validation_messages();
}

TEST(VulkanSpeculativeGreedy, ADraftModelRealizedByThePlanFactoryGivesThePlainGreedyTokens) {
  EREDU_REQUIRE_VULKAN();
  const auto target_path = model_path("stories260K.gguf");
  const auto draft_path = model_path("stories260K-Q8_0-ffndownF16.gguf");
  EREDU_REQUIRE_SHARED_PATH(target_path);
  EREDU_REQUIRE_SHARED_PATH(draft_path);
  auto tokenizer = tokenizer_of(target_path);
  auto proof = text::prove_tokenizer_compatibility(*tokenizer, *tokenizer_of(draft_path));
  ASSERT_TRUE(proof.has_value()) << proof.error().what();
  auto target = load_on_vulkan(target_path);
  ASSERT_TRUE(target.has_value()) << target.error().what();

  // The plan drafts with the Q8_0 file; the factory materializes it on the target's device.
  const vulkan::VulkanPlanFactory factory;
  auto hardware = factory.discover_hardware();
  ASSERT_TRUE(hardware.has_value());
  plan::ExecutionPlanOptions options;
  options.drafting = plan::DraftingPlan::external(draft_path.string()).value();
  const auto execution_plan =
      plan::ExecutionPlan::create(
          plan::DevicePlan::create(factory.backend_id(), hardware->devices.front().descriptor.id)
              .value(),
          options)
          .value();
  auto inspection = runtime::inspect_artifact(draft_path);
  ASSERT_TRUE(inspection.has_value());
  auto config =
      runtime::plan_inspected_model(target->backend(), *inspection, vulkan::VulkanLoadOptions{});
  ASSERT_TRUE(config.has_value()) << config.error().what();
  auto realized = runtime::realize_execution_plan_drafting(
      factory, execution_plan, *target,
      plan::ExternalDraftArtifact<vulkan::VulkanBackend::model_config>{std::move(*config), *proof});
  ASSERT_TRUE(realized.has_value()) << realized.error().what();
  ASSERT_NE(realized->drafter(), nullptr);
  auto drafter =
      ExternalDrafter<vulkan::VulkanBackend>::create(std::move(*realized->drafter()), *proof);
  ASSERT_TRUE(drafter.has_value()) << drafter.error().what();
  for (const std::string& prompt : kPrompts) {
    const auto request = request_for(*tokenizer, prompt, kTokens);
    const auto reference = plain(*target, *tokenizer, request);
    const auto run = speculative::speculative(*target, *drafter, *tokenizer, request, 4);
    EXPECT_EQ(run.generation.tokens, reference.tokens) << prompt;
    EXPECT_GT(run.statistics.accepted, 0);
  }
  expect_no_validation_messages();
}

}  // namespace
}  // namespace eredu::testing
#endif  // EREDU_HAVE_VULKAN_BACKEND
