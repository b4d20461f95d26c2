// CpuPlanFactory realizes cpu plans and rejects, before any weight is read, a plan that names
// another backend, a missing device, a capability the CPU lacks, or external drafting.
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

TEST(CpuPlanFactory, RealizesACpuPlanWithItsLoadOptions) {
  eredu::cpu::CpuLoadOptions load;
  load.kv_cache_type = eredu::cpu::KvCacheType::kF16;
  const CpuPlanFactory factory(eredu::cpu::CpuBackendOptions{1}, load);
  auto target = factory.realize_target(make_plan("cpu", "cpu:0"));
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->load_options.kv_cache_type, eredu::cpu::KvCacheType::kF16);
  EXPECT_EQ(target->backend.threads(), 1u);
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
