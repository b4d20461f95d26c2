// ModelLoadingBackend: the complete mock backend is accepted; each requirement is enforced.
// One TEST per requirement, each with a mock (mocks.hpp) that misses just that one requirement.
// Every rejection is proven twice: at compile time (static_assert) and as a counted test, which
// also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(ModelLoadingBackendConcept, AcceptsCompleteMockBackend) {
  static_assert(ModelLoadingBackend<CompleteMockBackend>);
  static_assert(diagnose::model_loading_backend<CompleteMockBackend>());
  EXPECT_TRUE(ModelLoadingBackend<CompleteMockBackend>);
  EXPECT_TRUE(diagnose::model_loading_backend_unmet<CompleteMockBackend>().empty());
}

// ModelLoadingBackend refines BackendProvider
TEST(ModelLoadingBackendConcept, RejectsBackendThatIsNotABackendProvider) {
  using T = MockBackend<Defect::kNoCreateSession>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: B must satisfy BackendProvider");
}

// no load_options type
TEST(ModelLoadingBackendConcept, RejectsBackendWithoutLoadOptions) {
  using T = MockBackend<Defect::kNoLoadOptions>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing associated type load_options");
}

// no selected_preparation type
TEST(ModelLoadingBackendConcept, RejectsBackendWithoutSelectedPreparation) {
  using T = MockBackend<Defect::kNoSelectedPreparation>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing associated type selected_preparation");
}

// no preparation_policy
TEST(ModelLoadingBackendConcept, RejectsBackendWithoutPreparationPolicy) {
  using T = MockBackend<Defect::kNoPreparationPolicy>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing preparation_policy(");
}

// no select_preparation
TEST(ModelLoadingBackendConcept, RejectsBackendWithoutSelectPreparation) {
  using T = MockBackend<Defect::kNoSelectPreparation>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing select_preparation(");
}

// select_preparation returns a bare selection: it cannot reject what it does not support
TEST(ModelLoadingBackendConcept, RejectsSelectPreparationThatCannotFailClosed) {
  using T = MockBackend<Defect::kSelectPreparationReturnsBareSelection>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing select_preparation(");
}

// no session_capabilities
TEST(ModelLoadingBackendConcept, RejectsBackendWithoutSessionCapabilities) {
  using T = MockBackend<Defect::kNoSessionCapabilities>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing session_capabilities(");
}

// no build_model_config
TEST(ModelLoadingBackendConcept, RejectsBackendWithoutBuildModelConfig) {
  using T = MockBackend<Defect::kNoBuildModelConfig>;
  static_assert(!ModelLoadingBackend<T>);
  EXPECT_FALSE(ModelLoadingBackend<T>);
  expect_first_unmet(diagnose::model_loading_backend_unmet<T>(),
                     "ModelLoadingBackend: missing build_model_config(");
}

}  // namespace
}  // namespace eredu::concept_tests
