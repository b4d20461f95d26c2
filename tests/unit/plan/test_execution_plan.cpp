// The minimal plan vocabulary: ExecutionPlan and its parts validate on construction, planning
// results and errors describe themselves, tokenizer compatibility is proven, never assumed.

#include <gtest/gtest.h>

#include <string>

#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"

namespace eredu::plan {
namespace {

DevicePlan cpu_device() {
  return DevicePlan::create(BackendId::create("cpu").value(), "cpu:0").value();
}

TEST(DevicePlan, RejectsAnEmptyDeviceId) {
  const Result<DevicePlan> device = DevicePlan::create(BackendId::create("cpu").value(), "");
  ASSERT_FALSE(device.has_value());
  EXPECT_EQ(device.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(device.error().subject(), "device");
}

TEST(DraftingPlan, ExternalDraftingMustNameAModel) {
  const Result<DraftingPlan> empty = DraftingPlan::external("");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().subject(), "drafting.model");

  const Result<DraftingPlan> external = DraftingPlan::external("draft.gguf");
  ASSERT_TRUE(external.has_value());
  EXPECT_TRUE(external->is_external());
  EXPECT_EQ(external->external_model(), "draft.gguf");
  EXPECT_FALSE(DraftingPlan::disabled().is_external());
}

TEST(ExecutionPlan, DefaultsToSchemaTwoFourShardsNoDraftingNoRequirementsAndALoaderChosenContext) {
  const Result<ExecutionPlan> plan = ExecutionPlan::create(cpu_device());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->schema_version(), 2u);
  EXPECT_EQ(plan->session().context_length, 0u);
  EXPECT_EQ(plan->session().kv_cache_type, KvCacheType::kF16);
  EXPECT_EQ(plan->session().threads, 0u);
  EXPECT_FALSE(plan->memory_budget_bytes().has_value());
  EXPECT_EQ(plan->max_cached_shards(), 4u);
  EXPECT_EQ(plan->drafting().kind(), DraftingPlan::Kind::kDisabled);
  EXPECT_EQ(plan->device().backend().value(), "cpu");
  EXPECT_EQ(plan->device().device(), "cpu:0");
  EXPECT_EQ(plan->required_device_capabilities(), DeviceCapabilities{});
  EXPECT_EQ(plan->required_session_capabilities(), SessionCapabilities{});
}

TEST(ExecutionPlan, RejectsZeroCachedShards) {
  const Result<ExecutionPlan> plan =
      ExecutionPlan::create(cpu_device(), ExecutionPlanOptions{.max_cached_shards = 0});
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(plan.error().subject(), "max_cached_shards");
}

TEST(ExecutionPlan, RejectsAnUnsupportedSchemaVersion) {
  for (const std::uint32_t version : {0u, 3u}) {
    const Result<ExecutionPlan> plan = ExecutionPlan::create(cpu_device(), {}, version);
    ASSERT_FALSE(plan.has_value()) << version;
    EXPECT_EQ(plan.error().code(), ErrorCode::kUnsupported);
    EXPECT_EQ(plan.error().subject(), "schema_version");
  }
  EXPECT_TRUE(ExecutionPlan::create(cpu_device(), {}, 1).has_value());
}

TEST(ExecutionPlan, NgramDraftingNeedsSchemaTwoAndASizeInRange) {
  EXPECT_EQ(DraftingPlan::ngram(0).error().subject(), "drafting.ngram");
  EXPECT_FALSE(DraftingPlan::ngram(DraftingPlan::kMaxNgram + 1).has_value());
  ExecutionPlanOptions options;
  options.drafting = DraftingPlan::ngram(3).value();
  const Result<ExecutionPlan> old = ExecutionPlan::create(cpu_device(), options, 1);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.error().subject(), "drafting.kind");
  const Result<ExecutionPlan> plan = ExecutionPlan::create(cpu_device(), options);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->drafting().ngram_size(), 3u);
}

TEST(ExecutionPlan, RejectsMoreThreadsThanTheLimit) {
  ExecutionPlanOptions options;
  options.session.threads = kMaxThreads + 1;
  const Result<ExecutionPlan> plan = ExecutionPlan::create(cpu_device(), options);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().subject(), "session.threads");
}

TEST(ExecutionPlan, ValidatesRequiredCapabilitiesAgainstWhatIsAvailable) {
  const Result<ExecutionPlan> plan = ExecutionPlan::create(
      cpu_device(),
      ExecutionPlanOptions{
          .required_device_capabilities = {.exact_completion = true},
          .required_session_capabilities = {.persistent_cache = true, .output_observation = true}});
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->validate_device_capabilities({.exact_completion = true}).has_value());
  const Result<void> device = plan->validate_device_capabilities({.transfers = true});
  ASSERT_FALSE(device.has_value());
  EXPECT_EQ(device.error().subject(), "exact_completion");
  const Result<void> session = plan->validate_session_capabilities({.persistent_cache = true});
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.error().subject(), "output_observation");
}

TEST(HardwareProfile, FindsADeviceById) {
  HardwareProfile profile;
  profile.devices.push_back(DeviceReport{DeviceDescriptor{"gpu:1", "GPU", "nvidia", 1u << 30},
                                         DeviceCapabilities{.exact_completion = true}});
  ASSERT_NE(profile.find_device("gpu:1"), nullptr);
  EXPECT_TRUE(profile.find_device("gpu:1")->capabilities.exact_completion);
  EXPECT_EQ(profile.find_device("gpu:0"), nullptr);
}

TEST(CandidateAdmission, FailsClosedByDefault) {
  EXPECT_FALSE(CandidateAdmission{}.supported);
  EXPECT_TRUE(CandidateAdmission::accepted().supported);
  const CandidateAdmission rejected = CandidateAdmission::rejected("needs 9 GiB, 4 GiB free");
  EXPECT_FALSE(rejected.supported);
  EXPECT_EQ(rejected.rejection, "needs 9 GiB, 4 GiB free");
}

TEST(AutomaticPlanningError, DescribesTheInvalidPlanOrTheFailedBackendOperation) {
  const AutomaticPlanningError invalid =
      AutomaticPlanningError::invalid(Error(ErrorCode::kNotFound, "device 'gpu:3' not present"));
  EXPECT_EQ(invalid.kind(), AutomaticPlanningError::Kind::kInvalid);
  EXPECT_EQ(invalid.what(), "invalid execution plan: not found: device 'gpu:3' not present");

  const AutomaticPlanningError backend = AutomaticPlanningError::backend(
      "realize_target", Error(ErrorCode::kBackend, "queue creation failed"));
  EXPECT_EQ(backend.operation(), "realize_target");
  EXPECT_EQ(backend.what(),
            "backend failed during realize_target: backend error: queue creation failed");
}

TEST(TokenizerCompatibilityProof, IsGrantedOnlyForEqualFingerprints) {
  VocabularyFingerprint target{};
  target[0] = 0xab;
  VocabularyFingerprint assistant = target;
  EXPECT_TRUE(TokenizerCompatibilityProof::prove(target, assistant).has_value());
  assistant[31] = 0x01;
  const Result<TokenizerCompatibilityProof> refused =
      TokenizerCompatibilityProof::prove(target, assistant);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidModel);
}

TEST(RealizedDrafting, CarriesTheExternalDrafterOnlyWhenExternal) {
  const RealizedDrafting<std::string> disabled = RealizedDrafting<std::string>::disabled();
  EXPECT_EQ(disabled.kind(), DraftingPlan::Kind::kDisabled);
  EXPECT_EQ(disabled.drafter(), nullptr);
  const RealizedDrafting<std::string> external =
      RealizedDrafting<std::string>::external("assistant");
  EXPECT_EQ(external.kind(), DraftingPlan::Kind::kExternal);
  ASSERT_NE(external.drafter(), nullptr);
  EXPECT_EQ(*external.drafter(), "assistant");
}

}  // namespace
}  // namespace eredu::plan
