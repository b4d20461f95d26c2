// BackendProvider: the complete mock backend is accepted; each requirement is enforced.
// One TEST per requirement, each with a mock (mocks.hpp) that misses just that one requirement.
// Every rejection is proven twice: at compile time (static_assert) and as a counted test, which
// also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(BackendProviderConcept, AcceptsCompleteMockBackend) {
  static_assert(BackendProvider<CompleteMockBackend>);
  static_assert(diagnose::backend_provider<CompleteMockBackend>());
  EXPECT_TRUE(BackendProvider<CompleteMockBackend>);
  EXPECT_TRUE(diagnose::backend_provider_unmet<CompleteMockBackend>().empty());
}

// session_capability_mismatch has a default: a backend without the member is still a provider
// when its error can be built from eredu::Error.
TEST(BackendProviderConcept, AcceptsBackendRelyingOnTheDefaultSessionCapabilityMismatch) {
  using T = MockBackend<Defect::kUsesDefaultMismatch>;
  static_assert(BackendProvider<T>);
  static_assert(diagnose::backend_provider<T>());
  EXPECT_TRUE(BackendProvider<T>);
}

// Removing a requirement of another contract leaves BackendProvider satisfied: the defects are
// independent, so each rejection elsewhere is caused by exactly its own requirement.
TEST(BackendProviderConcept, IsIndependentOfNeuralParameterAndLoadingRequirements) {
  static_assert(BackendProvider<MockBackend<Defect::kNoLinear>>);
  static_assert(BackendProvider<MockBackend<Defect::kBindNotNoexcept>>);
  static_assert(BackendProvider<MockBackend<Defect::kNoBuildModelConfig>>);
  EXPECT_TRUE(BackendProvider<MockBackend<Defect::kNoOperatorCapabilities>>);
  EXPECT_TRUE(BackendProvider<MockBackend<Defect::kNoSelectPreparation>>);
}

// no model_config type
TEST(BackendProviderConcept, RejectsBackendWithoutModelConfig) {
  using T = MockBackend<Defect::kNoModelConfig>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing associated type model_config");
}

// no model type
TEST(BackendProviderConcept, RejectsBackendWithoutModel) {
  using T = MockBackend<Defect::kNoModel>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing associated type model");
}

// no session type
TEST(BackendProviderConcept, RejectsBackendWithoutSession) {
  using T = MockBackend<Defect::kNoSession>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing associated type session");
}

// no error type
TEST(BackendProviderConcept, RejectsBackendWithoutError) {
  using T = MockBackend<Defect::kNoError>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing associated type error");
}

// error type without what()
TEST(BackendProviderConcept, RejectsErrorThatCannotDescribeItself) {
  using T = MockBackend<Defect::kErrorWithoutWhat>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: error must be move-constructible and have what()");
}

// the executable cannot travel inside a PreparedModel
TEST(BackendProviderConcept, RejectsImmovableModel) {
  using T = MockBackend<Defect::kModelNotMovable>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: model must be a non-const, move-constructible object type");
}

// no descriptor()
TEST(BackendProviderConcept, RejectsBackendWithoutDescriptor) {
  using T = MockBackend<Defect::kNoDescriptor>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing descriptor()");
}

// descriptor() returns a string instead of BackendDescriptor
TEST(BackendProviderConcept, RejectsDescriptorReturningString) {
  using T = MockBackend<Defect::kDescriptorReturnsString>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing descriptor()");
}

// no devices()
TEST(BackendProviderConcept, RejectsBackendWithoutDevices) {
  using T = MockBackend<Defect::kNoDevices>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(), "BackendProvider: missing devices()");
}

// devices() returns a bare vector (discovery cannot report failure)
TEST(BackendProviderConcept, RejectsDevicesThatCannotFail) {
  using T = MockBackend<Defect::kDevicesReturnsBareList>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(), "BackendProvider: missing devices()");
}

// no prepare_model
TEST(BackendProviderConcept, RejectsBackendWithoutPrepareModel) {
  using T = MockBackend<Defect::kNoPrepareModel>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing prepare_model(");
}

// prepare_model returns Result<model, error>: no admitted capabilities travel with it
TEST(BackendProviderConcept, RejectsPrepareModelReturningModelInsteadOfPreparedModel) {
  using T = MockBackend<Defect::kPrepareModelReturnsBareModel>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing prepare_model(");
}

// prepare_model(model_config&) cannot take the config by rvalue
TEST(BackendProviderConcept, RejectsPrepareModelTakingConfigByLvalueReference) {
  using T = MockBackend<Defect::kPrepareModelTakesLvalue>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing prepare_model(");
}

// no create_session
TEST(BackendProviderConcept, RejectsBackendWithoutCreateSession) {
  using T = MockBackend<Defect::kNoCreateSession>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing create_session(");
}

// create_session returns Result<model, error> instead of Result<session, error>
TEST(BackendProviderConcept, RejectsCreateSessionReturningWrongType) {
  using T = MockBackend<Defect::kCreateSessionReturnsModel>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: missing create_session(");
}

// create_session(const PreparedModel&): one prepared model could back two sessions
TEST(BackendProviderConcept, RejectsCreateSessionThatBorrowsThePreparedModel) {
  using T = MockBackend<Defect::kCreateSessionBorrowsModel>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: create_session must consume its PreparedModel");
}

// the session has no decode
TEST(BackendProviderConcept, RejectsBackendWhoseSessionIsNotABackendSession) {
  using T = MockBackend<Defect::kSessionNotBackendSession>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(diagnose::backend_provider_unmet<T>(),
                     "BackendProvider: session must satisfy BackendSession");
}

// no member, and the error type cannot be built from eredu::Error
TEST(BackendProviderConcept, RejectsBackendWithoutAnySessionCapabilityMismatch) {
  using T = MockBackend<Defect::kNoMismatchFallback>;
  static_assert(!BackendProvider<T>);
  EXPECT_FALSE(BackendProvider<T>);
  expect_first_unmet(
      diagnose::backend_provider_unmet<T>(),
      "BackendProvider: session_capability_mismatch(backend, admitted, realized) is not available");
}

}  // namespace
}  // namespace eredu::concept_tests
