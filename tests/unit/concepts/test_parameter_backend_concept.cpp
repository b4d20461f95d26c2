// ParameterBackend: the complete mock backend is accepted; each requirement (bind noexcept
// included) is enforced. One TEST per requirement, each with a mock (mocks.hpp) that misses just
// that one requirement. Every rejection is proven twice: at compile time (static_assert) and as a
// counted test, which also checks that the diagnoser names exactly the requirement that was
// removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "eredu/checkpoint/lease.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(ParameterBackendConcept, AcceptsCompleteMockBackend) {
  static_assert(ParameterBackend<CompleteMockBackend>);
  static_assert(diagnose::parameter_backend<CompleteMockBackend>());
  EXPECT_TRUE(ParameterBackend<CompleteMockBackend>);
  EXPECT_TRUE(diagnose::parameter_backend_unmet<CompleteMockBackend>().empty());
}

// With the checkpoint layer's real definitions in scope, a materialize that takes its (move-only)
// lease by value consumes it as well and is accepted.
TEST(ParameterBackendConcept, AcceptsMaterializeTakingTheLeaseByValue) {
  using T = MockBackend<Defect::kMaterializeTakesLeaseByValue>;
  static_assert(!std::is_copy_constructible_v<checkpoint::CheckpointLease>);
  static_assert(ParameterBackend<T>);
  EXPECT_TRUE(ParameterBackend<T>);
}

// ParameterBackend refines NeuralBackend
TEST(ParameterBackendConcept, RejectsBackendThatIsNotANeuralBackend) {
  using T = MockBackend<Defect::kNoLinear>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: B must satisfy NeuralBackend");
}

// no parameter type
TEST(ParameterBackendConcept, RejectsBackendWithoutParameter) {
  using T = MockBackend<Defect::kNoParameter>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing associated type parameter");
}

// no materialized_weight type
TEST(ParameterBackendConcept, RejectsBackendWithoutMaterializedWeight) {
  using T = MockBackend<Defect::kNoMaterializedWeight>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing associated type materialized_weight");
}

// no materialization_context type
TEST(ParameterBackendConcept, RejectsBackendWithoutMaterializationContext) {
  using T = MockBackend<Defect::kNoMaterializationContext>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing associated type materialization_context");
}

// no materialization type
TEST(ParameterBackendConcept, RejectsBackendWithoutMaterialization) {
  using T = MockBackend<Defect::kNoMaterialization>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing associated type materialization");
}

// no parameter_error type
TEST(ParameterBackendConcept, RejectsBackendWithoutParameterError) {
  using T = MockBackend<Defect::kNoParameterError>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing associated type parameter_error");
}

// parameter_error without what()
TEST(ParameterBackendConcept, RejectsParameterErrorThatCannotDescribeItself) {
  using T = MockBackend<Defect::kParameterErrorWithoutWhat>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(
      diagnose::parameter_backend_unmet<T>(),
      "ParameterBackend: parameter_error must be move-constructible and have what()");
}

// no preflight_recipe
TEST(ParameterBackendConcept, RejectsBackendWithoutPreflightRecipe) {
  using T = MockBackend<Defect::kNoPreflightRecipe>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static preflight_recipe(");
}

// preflight_recipe as a member: it must need no backend instance
TEST(ParameterBackendConcept, RejectsNonStaticPreflightRecipe) {
  using T = MockBackend<Defect::kPreflightRecipeNotStatic>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static preflight_recipe(");
}

// no materialize
TEST(ParameterBackendConcept, RejectsBackendWithoutMaterialize) {
  using T = MockBackend<Defect::kNoMaterialize>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static materialize(");
}

// materialize(const CheckpointLease&): the lease would outlive the materialization
TEST(ParameterBackendConcept, RejectsMaterializeThatBorrowsTheLease) {
  using T = MockBackend<Defect::kMaterializeBorrowsLease>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: materialize must consume its CheckpointLease");
}

// no materialize_recipe
TEST(ParameterBackendConcept, RejectsBackendWithoutMaterializeRecipe) {
  using T = MockBackend<Defect::kNoMaterializeRecipe>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static materialize_recipe(");
}

// no way to borrow an in-flight weight
TEST(ParameterBackendConcept, RejectsBackendWithoutBorrowMaterializedWeight) {
  using T = MockBackend<Defect::kNoBorrowMaterializedWeight>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static borrow_materialized_weight(");
}

// returns materialized_weight by value instead of borrowing it
TEST(ParameterBackendConcept, RejectsBorrowReturningACopy) {
  using T = MockBackend<Defect::kBorrowMaterializedWeightReturnsCopy>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static borrow_materialized_weight(");
}

// no finish_materialization
TEST(ParameterBackendConcept, RejectsBackendWithoutFinishMaterialization) {
  using T = MockBackend<Defect::kNoFinishMaterialization>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static finish_materialization(");
}

// no share_materialized_weight
TEST(ParameterBackendConcept, RejectsBackendWithoutShareMaterializedWeight) {
  using T = MockBackend<Defect::kNoShareMaterializedWeight>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static share_materialized_weight(");
}

// no validate_bind
TEST(ParameterBackendConcept, RejectsBackendWithoutValidateBind) {
  using T = MockBackend<Defect::kNoValidateBind>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static validate_bind(");
}

// validate_bind returns bool: it cannot say what is wrong
TEST(ParameterBackendConcept, RejectsValidateBindReturningBool) {
  using T = MockBackend<Defect::kValidateBindReturnsBool>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static validate_bind(");
}

// no bind
TEST(ParameterBackendConcept, RejectsBackendWithoutBind) {
  using T = MockBackend<Defect::kNoBind>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: missing static bind(");
}

// bind may throw: publication of a validated unit could fail half-way
TEST(ParameterBackendConcept, RejectsBindThatIsNotNoexcept) {
  using T = MockBackend<Defect::kBindNotNoexcept>;
  static_assert(!ParameterBackend<T>);
  EXPECT_FALSE(ParameterBackend<T>);
  expect_first_unmet(diagnose::parameter_backend_unmet<T>(),
                     "ParameterBackend: bind(parameter&, materialized_weight&&) must be noexcept");
}

}  // namespace
}  // namespace eredu::concept_tests
