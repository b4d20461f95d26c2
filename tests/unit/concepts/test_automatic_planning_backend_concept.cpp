// AutomaticPlanningBackend: the complete mock factory is accepted; each requirement is enforced.
// One TEST per requirement, each with a mock (mocks.hpp) that misses just that one requirement.
// Every rejection is proven twice: at compile time (static_assert) and as a counted test, which
// also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(AutomaticPlanningBackendConcept, AcceptsCompleteMockFactory) {
  static_assert(AutomaticPlanningBackend<CompleteMockFactory>);
  static_assert(diagnose::automatic_planning_backend<CompleteMockFactory>());
  EXPECT_TRUE(AutomaticPlanningBackend<CompleteMockFactory>);
  EXPECT_TRUE(diagnose::automatic_planning_backend_unmet<CompleteMockFactory>().empty());
}

// no backend_id
TEST(AutomaticPlanningBackendConcept, RejectsFactoryWithoutBackendId) {
  using T = MockFactory<FactoryDefect::kNoBackendId>;
  static_assert(!AutomaticPlanningBackend<T>);
  EXPECT_FALSE(AutomaticPlanningBackend<T>);
  expect_first_unmet(diagnose::automatic_planning_backend_unmet<T>(),
                     "AutomaticPlanningBackend: missing backend_id()");
}

// backend_id() returns an unvalidated string
TEST(AutomaticPlanningBackendConcept, RejectsBackendIdReturningString) {
  using T = MockFactory<FactoryDefect::kBackendIdReturnsString>;
  static_assert(!AutomaticPlanningBackend<T>);
  EXPECT_FALSE(AutomaticPlanningBackend<T>);
  expect_first_unmet(diagnose::automatic_planning_backend_unmet<T>(),
                     "AutomaticPlanningBackend: missing backend_id()");
}

// no discover_hardware
TEST(AutomaticPlanningBackendConcept, RejectsFactoryWithoutDiscoverHardware) {
  using T = MockFactory<FactoryDefect::kNoDiscoverHardware>;
  static_assert(!AutomaticPlanningBackend<T>);
  EXPECT_FALSE(AutomaticPlanningBackend<T>);
  expect_first_unmet(diagnose::automatic_planning_backend_unmet<T>(),
                     "AutomaticPlanningBackend: missing discover_hardware()");
}

// no admit_candidate
TEST(AutomaticPlanningBackendConcept, RejectsFactoryWithoutAdmitCandidate) {
  using T = MockFactory<FactoryDefect::kNoAdmitCandidate>;
  static_assert(!AutomaticPlanningBackend<T>);
  EXPECT_FALSE(AutomaticPlanningBackend<T>);
  expect_first_unmet(diagnose::automatic_planning_backend_unmet<T>(),
                     "AutomaticPlanningBackend: missing admit_candidate(");
}

// admit_candidate returns bool: no rejection reason, no error
TEST(AutomaticPlanningBackendConcept, RejectsAdmitCandidateReturningBool) {
  using T = MockFactory<FactoryDefect::kAdmitCandidateReturnsBool>;
  static_assert(!AutomaticPlanningBackend<T>);
  EXPECT_FALSE(AutomaticPlanningBackend<T>);
  expect_first_unmet(diagnose::automatic_planning_backend_unmet<T>(),
                     "AutomaticPlanningBackend: missing admit_candidate(");
}

}  // namespace
}  // namespace eredu::concept_tests
