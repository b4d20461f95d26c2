#pragma once
// A functional ExecutionPlanBackendFactory for the realization-wrapper tests. Its realized backend
// reports whatever name and devices a test gives it, so every check of the wrappers can be
// provoked; the factory counts its calls, so a test can prove a rejection came first.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../concepts/mocks.hpp"
#include "eredu/core/concepts.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::plan_tests {

using concept_tests::MockDrafter;
using concept_tests::MockDrafterPreparation;
using concept_tests::MockError;
using concept_tests::MockLoadOptions;
using concept_tests::MockModel;
using concept_tests::MockModelConfig;
using concept_tests::MockSelectedPreparation;

class RealizedBackend {
 public:
  using model_config = MockModelConfig;
  using model = MockModel;
  using session =
      concept_tests::MockSession<concept_tests::SessionDefect::kNone, RealizedBackend, MockError>;
  using error = MockError;
  using load_options = MockLoadOptions;
  using selected_preparation = MockSelectedPreparation;

  std::string name = "mock";
  std::vector<DeviceReport> device_list;
  bool devices_fail = false;

  BackendDescriptor descriptor() const { return BackendDescriptor{name, "1.0"}; }
  Result<std::vector<DeviceReport>, MockError> devices() const {
    if (devices_fail) return Unexpected<MockError>(MockError("device enumeration failed"));
    return device_list;
  }
  Result<PreparedModel<MockModel>, MockError> prepare_model(MockModelConfig&& config) const {
    return PreparedModel<MockModel>(MockModel{config.realized}, config.admitted);
  }
  Result<session, MockError> create_session(PreparedModel<MockModel>&& prepared) const {
    return session(std::move(prepared).into_parts().model.realized);
  }
  // ModelLoadingBackend (never called here).
  PreparationPolicy preparation_policy(const MockLoadOptions& options) const;
  Result<MockSelectedPreparation, MockError> select_preparation(
      const ArtifactInspection& inspection, const MockLoadOptions& options,
      const PreparationPolicy& policy) const;
  SessionCapabilities session_capabilities(const ArtifactInspection& inspection,
                                           const PreparationPolicy& policy) const;
  Result<MockModelConfig, MockError> build_model_config(const ModelPreparationPlan& plan,
                                                        MockSelectedPreparation&& selected) const;
};

enum class DraftingBehaviour { kAsPlanned, kAlwaysDisabled, kAlwaysExternal };

class RealizationFactory {
 public:
  using backend = RealizedBackend;
  using drafter_preparation = MockDrafterPreparation;
  using drafter = MockDrafter;

  std::string id = "mock";
  RealizedBackend realized{"mock",
                           {DeviceReport{DeviceDescriptor{"mock:0", "Mock", "mock", {}},
                                         DeviceCapabilities{.exact_completion = true}}},
                           false};
  std::optional<Error> realize_target_failure;
  DraftingBehaviour drafting = DraftingBehaviour::kAsPlanned;
  mutable int realize_target_calls = 0;
  mutable int realize_drafting_calls = 0;

  BackendId backend_id() const { return BackendId::create(id).value(); }
  Result<plan::HardwareProfile, plan::AutomaticPlanningError> discover_hardware() const;
  Result<plan::CandidateAdmission, plan::AutomaticPlanningError> admit_candidate(
      const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const;

  Result<plan::ExecutionPlanTarget<RealizedBackend>, plan::AutomaticPlanningError> realize_target(
      const plan::ExecutionPlan& /*execution_plan*/) const {
    ++realize_target_calls;
    if (realize_target_failure) {
      return Unexpected<plan::AutomaticPlanningError>(
          plan::AutomaticPlanningError::backend("realize_target", *realize_target_failure));
    }
    return plan::ExecutionPlanTarget<RealizedBackend>{realized, MockLoadOptions{}};
  }

  Result<plan::RealizedDrafting<MockDrafter>, plan::AutomaticPlanningError> realize_drafting(
      const plan::ExecutionPlan& execution_plan,
      const runtime::ModelRuntime<RealizedBackend>& /*target*/,
      std::optional<plan::ExternalDraftArtifact<MockDrafterPreparation>>&& artifact) const {
    ++realize_drafting_calls;
    const bool external = drafting == DraftingBehaviour::kAlwaysExternal ||
                          (drafting == DraftingBehaviour::kAsPlanned && artifact.has_value());
    if (!external) return plan::RealizedDrafting<MockDrafter>::disabled();
    return plan::RealizedDrafting<MockDrafter>::external(
        MockDrafter{execution_plan.drafting().external_model()});
  }
};

static_assert(diagnose::execution_plan_backend_factory<RealizationFactory>());

}  // namespace eredu::plan_tests
