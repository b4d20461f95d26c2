// ExecutionPlanBackendFactory: the complete mock factory is accepted; each requirement is enforced.
// One TEST per requirement, each with a mock (mocks.hpp) that misses just that one requirement.
// Every rejection is proven twice: at compile time (static_assert) and as a counted test, which
// also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(ExecutionPlanBackendFactoryConcept, AcceptsCompleteMockFactory) {
  static_assert(ExecutionPlanBackendFactory<CompleteMockFactory>);
  static_assert(diagnose::execution_plan_backend_factory<CompleteMockFactory>());
  EXPECT_TRUE(ExecutionPlanBackendFactory<CompleteMockFactory>);
  EXPECT_TRUE(diagnose::execution_plan_backend_factory_unmet<CompleteMockFactory>().empty());
}

// ExecutionPlanBackendFactory refines AutomaticPlanningBackend
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryThatIsNotAnAutomaticPlanningBackend) {
  using T = MockFactory<FactoryDefect::kNoBackendId>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: F must satisfy AutomaticPlanningBackend");
}

// no backend type
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryWithoutBackend) {
  using T = MockFactory<FactoryDefect::kNoBackend>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing associated type backend");
}

// its backend lacks build_model_config
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryWhoseBackendIsNotAModelLoadingBackend) {
  using T = MockFactory<FactoryDefect::kBackendNotModelLoading>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: backend must satisfy ModelLoadingBackend");
}

// no drafter_preparation type
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryWithoutDrafterPreparation) {
  using T = MockFactory<FactoryDefect::kNoDrafterPreparation>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing associated type drafter_preparation");
}

// no drafter type
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryWithoutDrafter) {
  using T = MockFactory<FactoryDefect::kNoDrafter>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing associated type drafter");
}

// no realize_target
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryWithoutRealizeTarget) {
  using T = MockFactory<FactoryDefect::kNoRealizeTarget>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing realize_target(");
}

// realize_target returns the backend alone, not ExecutionPlanTarget<backend>
TEST(ExecutionPlanBackendFactoryConcept, RejectsRealizeTargetWithoutLoadOptions) {
  using T = MockFactory<FactoryDefect::kRealizeTargetReturnsBareBackend>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing realize_target(");
}

// no realize_drafting
TEST(ExecutionPlanBackendFactoryConcept, RejectsFactoryWithoutRealizeDrafting) {
  using T = MockFactory<FactoryDefect::kNoRealizeDrafting>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing realize_drafting(");
}

// realize_drafting without the optional external artifact
TEST(ExecutionPlanBackendFactoryConcept, RejectsRealizeDraftingWithoutExternalArtifact) {
  using T = MockFactory<FactoryDefect::kRealizeDraftingWithoutArtifact>;
  static_assert(!ExecutionPlanBackendFactory<T>);
  EXPECT_FALSE(ExecutionPlanBackendFactory<T>);
  expect_first_unmet(diagnose::execution_plan_backend_factory_unmet<T>(),
                     "ExecutionPlanBackendFactory: missing realize_drafting(");
}

}  // namespace
}  // namespace eredu::concept_tests
