// CpuPlanFactory realizes cpu plans (their session, their drafting) and rejects, before any weight
// is read, a plan that names another backend, a missing device or a capability the CPU lacks.
#include <gtest/gtest.h>

#include "eredu/backends/cpu/cpu_plan_factory.hpp"

namespace {

using eredu::BackendId;
using eredu::cpu::CpuPlanFactory;
using eredu::plan::DevicePlan;
using eredu::plan::ExecutionPlan;
using eredu::plan::ExecutionPlanOptions;

ExecutionPlan make_plan(const std::string& backend, const std::string& device,
                        ExecutionPlanOptions options = {}) {
  return ExecutionPlan::create(
             DevicePlan::create(BackendId::create(backend).value(), device).value(), options)
      .value();
}

TEST(CpuPlanFactory, RealizesACpuPlanWithThePlansSessionAsLoadOptionsAndThreads) {
  ExecutionPlanOptions options;
  options.session = {.context_length = 96, .kv_cache_type = eredu::KvCacheType::kF32, .threads = 1};
  const CpuPlanFactory factory(eredu::cpu::CpuBackendOptions{2});
  auto target = factory.realize_target(make_plan("cpu", "cpu:0", options));
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->load_options.kv_cache_type, eredu::KvCacheType::kF32);
  EXPECT_EQ(target->load_options.context_length, 96u);
  EXPECT_EQ(target->backend.threads(), 1u);
  // A plan that names no thread count keeps the factory's.
  auto defaulted = factory.realize_target(make_plan("cpu", "cpu:0"));
  ASSERT_TRUE(defaulted.has_value());
  EXPECT_EQ(defaulted->backend.threads(), 2u);
  EXPECT_EQ(defaulted->load_options.kv_cache_type, eredu::KvCacheType::kF16);
}

TEST(CpuPlanFactory, AcceptsNgramAndExternalDraftingPlans) {
  ExecutionPlanOptions options;
  options.drafting = eredu::plan::DraftingPlan::ngram(3).value();
  EXPECT_TRUE(CpuPlanFactory().check_plan(make_plan("cpu", "cpu:0", options)).has_value());
  options.drafting = eredu::plan::DraftingPlan::external("draft.gguf").value();
  EXPECT_TRUE(CpuPlanFactory().check_plan(make_plan("cpu", "cpu:0", options)).has_value());
}

TEST(CpuPlanFactory, RejectsAPlanNamingAnotherBackend) {
  auto target = CpuPlanFactory().realize_target(make_plan("cuda", "cuda:0"));
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().what().find("cuda"), std::string::npos);
}

TEST(CpuPlanFactory, RejectsAMissingDevice) {
  auto target = CpuPlanFactory().realize_target(make_plan("cpu", "cpu:7"));
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().what().find("cpu:7"), std::string::npos);
}

TEST(CpuPlanFactory, RejectsARequiredDeviceCapabilityTheCpuLacks) {
  ExecutionPlanOptions options;
  options.required_device_capabilities.collectives = true;
  auto target = CpuPlanFactory().realize_target(make_plan("cpu", "cpu:0", options));
  ASSERT_FALSE(target.has_value());
  EXPECT_NE(target.error().what().find("collectives"), std::string::npos);
}

TEST(CpuPlanFactory, AdmitsLlamaAndRejectsOtherArchitectures) {
  eredu::ArtifactInspection inspection;
  inspection.architecture = "llama";
  auto admitted = CpuPlanFactory().admit_candidate(inspection, make_plan("cpu", "cpu:0"));
  ASSERT_TRUE(admitted.has_value());
  EXPECT_TRUE(admitted->supported);
  inspection.architecture = "gpt2";
  auto rejected = CpuPlanFactory().admit_candidate(inspection, make_plan("cpu", "cpu:0"));
  ASSERT_TRUE(rejected.has_value());
  EXPECT_FALSE(rejected->supported);
}

TEST(CpuPlanFactory, HardwareProfileListsTheCpuDevice) {
  auto hardware = CpuPlanFactory().discover_hardware();
  ASSERT_TRUE(hardware.has_value());
  EXPECT_NE(hardware->find_device("cpu:0"), nullptr);
}

}  // namespace
