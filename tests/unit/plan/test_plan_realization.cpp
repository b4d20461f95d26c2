// realize_execution_plan_target / realize_execution_plan_drafting: a plan is realized only when the
// factory, the backend it built, the planned device and its capabilities all match the plan, and
// the drafting mode is the planned one; every mismatch is a clear error naming the plan field.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "eredu/runtime/plan_realization.hpp"
#include "realization_mocks.hpp"

namespace eredu::plan_tests {
namespace {

using plan::AutomaticPlanningError;
using plan::DevicePlan;
using plan::DraftingPlan;
using plan::ExecutionPlan;
using plan::ExecutionPlanOptions;
using runtime::realize_execution_plan_drafting;
using runtime::realize_execution_plan_target;

ExecutionPlan plan_for(const std::string& backend, const std::string& device,
                       ExecutionPlanOptions options = {}) {
  return ExecutionPlan::create(
             DevicePlan::create(BackendId::create(backend).value(), device).value(),
             std::move(options))
      .value();
}

void expect_invalid(const AutomaticPlanningError& error, const std::string& field,
                    const std::string& fragment) {
  EXPECT_EQ(error.kind(), AutomaticPlanningError::Kind::kInvalid) << error.what();
  EXPECT_EQ(error.cause().subject(), field) << error.what();
  EXPECT_NE(error.what().find(fragment), std::string::npos) << error.what();
}

runtime::ModelRuntime<RealizedBackend> make_runtime() {
  return runtime::ModelRuntime<RealizedBackend>::prepare(RealizedBackend{}, MockModelConfig{})
      .value();
}

plan::ExternalDraftArtifact<MockDrafterPreparation> artifact() {
  plan::VocabularyFingerprint fingerprint{};
  return {MockDrafterPreparation{"llama"},
          plan::TokenizerCompatibilityProof::prove(fingerprint, fingerprint).value()};
}

TEST(RealizeExecutionPlanTarget, RealizesAPlanForAPresentDeviceWithItsCapabilities) {
  const RealizationFactory factory;
  const auto target = realize_execution_plan_target(
      factory,
      plan_for("mock", "mock:0", {.required_device_capabilities = {.exact_completion = true}}));
  ASSERT_TRUE(target.has_value()) << target.error().what();
  EXPECT_EQ(target->backend.descriptor().name, "mock");
  EXPECT_EQ(factory.realize_target_calls, 1);
}

TEST(RealizeExecutionPlanTarget, RejectsAPlanForAnotherBackendBeforeAskingTheFactory) {
  const RealizationFactory factory;
  const auto target = realize_execution_plan_target(factory, plan_for("cuda", "cuda:0"));
  ASSERT_FALSE(target.has_value());
  expect_invalid(target.error(), "device.backend", "names backend 'cuda'");
  EXPECT_EQ(factory.realize_target_calls, 0);
}

TEST(RealizeExecutionPlanTarget, RejectsARealizedBackendThatCallsItselfSomethingElse) {
  RealizationFactory factory;
  factory.realized.name = "impostor";
  const auto target = realize_execution_plan_target(factory, plan_for("mock", "mock:0"));
  ASSERT_FALSE(target.has_value());
  expect_invalid(target.error(), "device.backend", "named 'impostor'");
}

TEST(RealizeExecutionPlanTarget, RejectsADeviceTheBackendDoesNotExpose) {
  const RealizationFactory factory;
  const auto target = realize_execution_plan_target(factory, plan_for("mock", "mock:7"));
  ASSERT_FALSE(target.has_value());
  expect_invalid(target.error(), "device.device", "no device 'mock:7' (present: 'mock:0')");
  EXPECT_EQ(target.error().cause().code(), ErrorCode::kNotFound);
}

TEST(RealizeExecutionPlanTarget, RejectsACapabilityThePlannedDeviceLacks) {
  const RealizationFactory factory;
  const auto target = realize_execution_plan_target(
      factory, plan_for("mock", "mock:0", {.required_device_capabilities = {.transfers = true}}));
  ASSERT_FALSE(target.has_value());
  expect_invalid(target.error(), "required_device_capabilities", "'transfers'");
  EXPECT_EQ(target.error().cause().code(), ErrorCode::kCapabilityMissing);
}

TEST(RealizeExecutionPlanTarget, ReportsAFailedDeviceEnumerationAsABackendError) {
  RealizationFactory factory;
  factory.realized.devices_fail = true;
  const auto target = realize_execution_plan_target(factory, plan_for("mock", "mock:0"));
  ASSERT_FALSE(target.has_value());
  EXPECT_EQ(target.error().kind(), AutomaticPlanningError::Kind::kBackend);
  EXPECT_EQ(target.error().operation(), "devices");
  EXPECT_NE(target.error().what().find("device enumeration failed"), std::string::npos);
}

TEST(RealizeExecutionPlanTarget, PassesTheFactorysOwnFailureThrough) {
  RealizationFactory factory;
  factory.realize_target_failure = Error(ErrorCode::kBackend, "no queue");
  const auto target = realize_execution_plan_target(factory, plan_for("mock", "mock:0"));
  ASSERT_FALSE(target.has_value());
  EXPECT_EQ(target.error().operation(), "realize_target");
}

TEST(RealizeExecutionPlanDrafting, RealizesDisabledDraftingWithoutAnArtifact) {
  const RealizationFactory factory;
  const auto runtime = make_runtime();
  const auto drafting =
      realize_execution_plan_drafting(factory, plan_for("mock", "mock:0"), runtime, std::nullopt);
  ASSERT_TRUE(drafting.has_value()) << drafting.error().what();
  EXPECT_EQ(drafting->kind(), DraftingPlan::Kind::kDisabled);
}

TEST(RealizeExecutionPlanDrafting, RealizesExternalDraftingWithTheArtifact) {
  const RealizationFactory factory;
  const auto runtime = make_runtime();
  const auto drafting = realize_execution_plan_drafting(
      factory,
      plan_for("mock", "mock:0", {.drafting = DraftingPlan::external("draft.gguf").value()}),
      runtime, artifact());
  ASSERT_TRUE(drafting.has_value()) << drafting.error().what();
  ASSERT_NE(drafting->drafter(), nullptr);
  EXPECT_EQ(drafting->drafter()->model, "draft.gguf");
}

TEST(RealizeExecutionPlanDrafting, RejectsExternalDraftingWithoutAnArtifact) {
  const RealizationFactory factory;
  const auto runtime = make_runtime();
  const auto drafting = realize_execution_plan_drafting(
      factory,
      plan_for("mock", "mock:0", {.drafting = DraftingPlan::external("draft.gguf").value()}),
      runtime, std::nullopt);
  ASSERT_FALSE(drafting.has_value());
  expect_invalid(drafting.error(), "drafting", "no external draft artifact");
  EXPECT_EQ(factory.realize_drafting_calls, 0);
}

TEST(RealizeExecutionPlanDrafting, RejectsAnArtifactForAPlanThatDoesNotDraft) {
  const RealizationFactory factory;
  const auto runtime = make_runtime();
  const auto drafting =
      realize_execution_plan_drafting(factory, plan_for("mock", "mock:0"), runtime, artifact());
  ASSERT_FALSE(drafting.has_value());
  expect_invalid(drafting.error(), "drafting", "does not draft externally");
  EXPECT_EQ(factory.realize_drafting_calls, 0);
}

TEST(RealizeExecutionPlanDrafting, RejectsAFactoryThatRealizesAnotherMode) {
  RealizationFactory factory;
  factory.drafting = DraftingBehaviour::kAlwaysExternal;
  const auto runtime = make_runtime();
  const auto drafting =
      realize_execution_plan_drafting(factory, plan_for("mock", "mock:0"), runtime, std::nullopt);
  ASSERT_FALSE(drafting.has_value());
  expect_invalid(drafting.error(), "drafting", "realized drafting 'external'");

  factory.drafting = DraftingBehaviour::kAlwaysDisabled;
  const auto silent = realize_execution_plan_drafting(
      factory,
      plan_for("mock", "mock:0", {.drafting = DraftingPlan::external("draft.gguf").value()}),
      runtime, artifact());
  ASSERT_FALSE(silent.has_value());
  expect_invalid(silent.error(), "drafting", "realized drafting 'disabled'");
}

TEST(RealizeExecutionPlanDrafting, RejectsAPlanForAnotherBackend) {
  const RealizationFactory factory;
  const auto runtime = make_runtime();
  const auto drafting =
      realize_execution_plan_drafting(factory, plan_for("cpu", "cpu:0"), runtime, std::nullopt);
  ASSERT_FALSE(drafting.has_value());
  expect_invalid(drafting.error(), "device.backend", "names backend 'cpu'");
  EXPECT_EQ(factory.realize_drafting_calls, 0);
}

}  // namespace
}  // namespace eredu::plan_tests
