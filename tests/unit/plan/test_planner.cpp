// The automatic planner decides context, KV precision and device from header-only requirements and
// the hardware, and rejects what does not fit with the numbers. The expected byte counts are
// worked out here by hand from the geometry, not taken from the planner.
#include <gtest/gtest.h>

#include <string>

#include "eredu/plan/planner.hpp"
#include "eredu/plan/request_admission.hpp"

namespace eredu::plan {
namespace {

// A Llama-3.2-1B-like geometry: 16 layers, 8 KV heads of 64, trained for 131072 positions.
ModelRequirements llama_like(std::uint32_t trained = 131072) {
  ModelRequirements r;
  r.architecture = "llama";
  r.geometry.n_layer = 16;
  r.geometry.n_head_kv = 8;
  r.geometry.head_dim = 64;
  r.geometry.n_head = 32;
  r.geometry.n_embd = 2048;
  r.geometry.n_ff = 8192;
  r.geometry.n_vocab = 128256;
  r.geometry.n_ctx_train = trained;
  r.weight_bytes = 700ull << 20;
  return r;
}

// K and V, 16 layers x 8 heads x 64 dims, 2 bytes each.
constexpr std::uint64_t kF16BytesPerPosition = 2ull * 16 * 8 * 64 * 2;

HardwareProfile one_cpu(std::optional<std::uint64_t> free_bytes) {
  HardwareProfile h;
  h.devices.push_back(
      DeviceReport{DeviceDescriptor{"cpu:0", "CPU", "cpu", 32ull << 30, free_bytes}, {}});
  return h;
}

const BackendId& cpu() {
  static const BackendId id = BackendId::create("cpu").value();
  return id;
}

CandidateAdmission admit_all(const ExecutionPlan&) {
  return CandidateAdmission::accepted();
}

TEST(Planner, DefaultContextIsTheTrainingContextCappedAt4096WithAnF16Cache) {
  const auto planned = plan_execution(cpu(), one_cpu(16ull << 30), llama_like(), {}, admit_all);
  ASSERT_TRUE(planned.has_value()) << planned.error().what();
  EXPECT_EQ(planned->plan.session().context_length, 4096u);
  EXPECT_EQ(planned->plan.session().kv_cache_type, KvCacheType::kF16);
  EXPECT_EQ(planned->report.memory.kv_cache, kF16BytesPerPosition * 4096);
  EXPECT_EQ(planned->report.requirements.kv_bytes_per_position(KvCacheType::kF32),
            2 * kF16BytesPerPosition);
  // 16 GiB free less 10% headroom.
  EXPECT_EQ(planned->plan.memory_budget_bytes(), (16ull << 30) / 100 * 90);

  const auto small = plan_execution(cpu(), one_cpu(16ull << 30), llama_like(512), {}, admit_all);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->plan.session().context_length, 512u);
}

TEST(Planner, ShrinksTheDefaultContextToAMultipleOf256ThatFitsAndSaysWhy) {
  PlanRequest request;
  // Weights, plus room for about 1000 positions of KV cache and the activation scratch.
  const ModelRequirements r = llama_like();
  const std::uint64_t scratch = r.activation_bytes(512, 1000, 1);
  request.memory_budget_bytes = r.weight_bytes + scratch + 1000 * kF16BytesPerPosition;
  request.threads = 1;
  const auto planned = plan_execution(cpu(), one_cpu(std::nullopt), r, request, admit_all);
  ASSERT_TRUE(planned.has_value()) << planned.error().what();
  EXPECT_EQ(planned->plan.session().context_length, 768u);
  EXPECT_LE(planned->report.memory.total(), *request.memory_budget_bytes);
  bool explained = false;
  for (const std::string& d : planned->report.decisions)
    explained = explained || d.find("fits the budget (wanted 4096)") != std::string::npos;
  EXPECT_TRUE(explained);
  ASSERT_EQ(planned->report.rejections.size(), 1u);
  EXPECT_NE(planned->report.rejections[0].find("context 4096"), std::string::npos);
}

TEST(Planner, NeverShrinksARequestedContextAndRejectsItWithTheNumbers) {
  PlanRequest request;
  request.context_length = 100000;
  request.memory_budget_bytes = 2ull << 30;
  const auto planned =
      plan_execution(cpu(), one_cpu(std::nullopt), llama_like(), request, admit_all);
  ASSERT_FALSE(planned.has_value());
  EXPECT_EQ(planned.error().code(), ErrorCode::kCapacityExhausted);
  const std::string what = planned.error().what();
  EXPECT_NE(what.find("100000 positions"), std::string::npos) << what;
  EXPECT_NE(what.find(format_bytes(kF16BytesPerPosition * 100000)), std::string::npos) << what;
  EXPECT_NE(what.find("budget is 2.00 GiB"), std::string::npos) << what;
}

TEST(Planner, RejectsAModelWhoseWeightsDoNotFitBeforeAnythingIsRead) {
  PlanRequest request;
  request.memory_budget_bytes = 600ull << 20;  // below the 700 MiB of weights
  const auto planned =
      plan_execution(cpu(), one_cpu(std::nullopt), llama_like(), request, admit_all);
  ASSERT_FALSE(planned.has_value());
  EXPECT_EQ(planned.error().code(), ErrorCode::kCapacityExhausted);
  EXPECT_NE(planned.error().what().find("weights 700.0 MiB"), std::string::npos)
      << planned.error().what();
}

TEST(Planner, WarnsWhenTheRequestedContextExceedsTheTrainingContext) {
  PlanRequest request;
  request.context_length = 1024;
  const auto planned =
      plan_execution(cpu(), one_cpu(16ull << 30), llama_like(512), request, admit_all);
  ASSERT_TRUE(planned.has_value());
  EXPECT_EQ(planned->plan.session().context_length, 1024u);
  ASSERT_EQ(planned->report.warnings.size(), 1u);
  EXPECT_NE(planned->report.warnings[0].find("512"), std::string::npos);
}

TEST(Planner, SkipsADeviceTheBackendDoesNotAdmitAndFailsNamingWhyWhenNoneIs) {
  HardwareProfile h = one_cpu(16ull << 30);
  h.devices.push_back(DeviceReport{DeviceDescriptor{"cpu:1", "CPU", "cpu", {}, 16ull << 30}, {}});
  const auto only_second = [](const ExecutionPlan& p) {
    return p.device().device() == "cpu:1" ? CandidateAdmission::accepted()
                                          : CandidateAdmission::rejected("no AVX2");
  };
  const auto planned = plan_execution(cpu(), h, llama_like(), {}, only_second);
  ASSERT_TRUE(planned.has_value());
  EXPECT_EQ(planned->plan.device().device(), "cpu:1");
  ASSERT_EQ(planned->report.rejections.size(), 1u);
  EXPECT_EQ(planned->report.rejections[0], "device cpu:0: no AVX2");

  const auto none = plan_execution(cpu(), h, llama_like(), {}, [](const ExecutionPlan&) {
    return CandidateAdmission::rejected("unsupported architecture");
  });
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code(), ErrorCode::kCapabilityMissing);
  EXPECT_NE(none.error().what().find("unsupported architecture"), std::string::npos);
}

TEST(Planner, ARequestedDeviceThatIsAbsentIsNotFoundListingThePresentOnes) {
  PlanRequest request;
  request.device = "cpu:9";
  const auto planned = plan_execution(cpu(), one_cpu({}), llama_like(), request, admit_all);
  ASSERT_FALSE(planned.has_value());
  EXPECT_EQ(planned.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(planned.error().what().find("present: cpu:0"), std::string::npos);
}

TEST(Planner, ADeviceWithoutMemoryFiguresIsPlannedWithAWarning) {
  HardwareProfile h;
  h.devices.push_back(DeviceReport{DeviceDescriptor{"cpu:0", "CPU", "cpu", {}, {}}, {}});
  const auto planned = plan_execution(cpu(), h, llama_like(), {}, admit_all);
  ASSERT_TRUE(planned.has_value());
  EXPECT_FALSE(planned->plan.memory_budget_bytes().has_value());
  ASSERT_EQ(planned->report.warnings.size(), 1u);
  EXPECT_NE(planned->report.warnings[0].find("not checked against memory"), std::string::npos);
}

TEST(Planner, AnExternalDraftModelsWeightsCacheAndScratchCountAgainstTheBudget) {
  ModelRequirements draft = llama_like();
  draft.weight_bytes = 200ull << 20;
  draft.geometry.n_layer = 4;  // 4 layers x 8 x 64 x 2 (K, V) x 2 bytes per position
  PlanRequest request;
  request.threads = 1;
  request.drafting = DraftingPlan::external("draft.gguf").value();
  request.draft_model = draft;
  const auto planned =
      plan_execution(cpu(), one_cpu(16ull << 30), llama_like(), request, admit_all);
  ASSERT_TRUE(planned.has_value()) << planned.error().what();
  EXPECT_EQ(planned->report.memory.drafter,
            (200ull << 20) + 4096ull * 4 * 8 * 64 * 2 * 2 + draft.activation_bytes(512, 4096, 1));
  EXPECT_TRUE(planned->plan.drafting().is_external());

  // A budget the target alone fits at 4096 positions, but not with the drafter.
  PlanRequest alone;
  alone.threads = 1;
  const std::uint64_t target_only =
      plan_execution(cpu(), one_cpu(16ull << 30), llama_like(), alone, admit_all)
          ->report.memory.total();
  request.memory_budget_bytes = target_only + (100ull << 20);
  const auto shrunk = plan_execution(cpu(), one_cpu({}), llama_like(), request, admit_all);
  ASSERT_TRUE(shrunk.has_value()) << shrunk.error().what();
  EXPECT_LT(shrunk->plan.session().context_length, 4096u);
  EXPECT_LE(shrunk->report.memory.total(), *request.memory_budget_bytes);
}

TEST(RequestAdmission, APromptPlusRequestedTokensBeyondTheContextIsRejectedWithTheNumbers) {
  const auto rejected = admit_request({100, 400}, {256, 1, {}}, llama_like());
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(rejected.error().what().find("100 tokens + 400 requested tokens = 500 positions "
                                         "exceed the context of 256"),
            std::string::npos)
      << rejected.error().what();
  EXPECT_NE(rejected.error().what().find("at most 156"), std::string::npos);

  const auto prompt_only = admit_request({300, -1}, {256, 1, {}}, llama_like());
  ASSERT_FALSE(prompt_only.has_value());
  EXPECT_EQ(prompt_only.error().subject(), "prompt");

  const auto fits = admit_request({100, 156}, {256, 1, {}}, llama_like());
  ASSERT_TRUE(fits.has_value());
  EXPECT_EQ(fits->positions, 256u);
  EXPECT_TRUE(admit_request({100, -1}, {256, 1, {}}, llama_like()).has_value());
}

TEST(RequestAdmission, AStateEstimateAboveTheFreeMemoryIsRejectedWithBothFigures) {
  const ModelRequirements r = llama_like();
  // A 100-token prompt keeps 100 x (8 x 2048 + 2 x 2048 + 2 x 512 + 3 x 8192) floats alive, plus
  // one score row of the context and the logits.
  const std::uint64_t expected =
      4ull * (100ull * (8 * 2048 + 2 * 2048 + 2 * 512 + 3 * 8192) + 256 + 128256);
  const auto admitted = admit_request({100, 10}, {256, 1, {}}, r);
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(admitted->state_bytes, expected);
  const auto rejected = admit_request({100, 10}, {256, 1, expected - 1}, r);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().code(), ErrorCode::kCapacityExhausted);
  EXPECT_NE(rejected.error().what().find(format_bytes(expected - 1)), std::string::npos);
}

TEST(FormatBytes, UsesBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(700ull << 20), "700.0 MiB");
  EXPECT_EQ(format_bytes(2ull << 30), "2.00 GiB");
}

}  // namespace
}  // namespace eredu::plan
