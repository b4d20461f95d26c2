// NeuralBackend: the complete mock backend is accepted; each operator and associated type is
// enforced. One TEST per requirement, each with a mock (mocks.hpp) that misses just that one
// requirement. Every rejection is proven twice: at compile time (static_assert) and as a counted
// test, which also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(NeuralBackendConcept, AcceptsCompleteMockBackend) {
  static_assert(NeuralBackend<CompleteMockBackend>);
  static_assert(diagnose::neural_backend<CompleteMockBackend>());
  EXPECT_TRUE(NeuralBackend<CompleteMockBackend>);
  EXPECT_TRUE(diagnose::neural_backend_unmet<CompleteMockBackend>().empty());
}

// The operator set is a constant expression an architecture can test at compile time.
TEST(NeuralBackendConcept, OperatorCapabilitiesAreUsableInConstantExpressions) {
  static_assert(CompleteMockBackend::operator_capabilities.has(OptionalOperator::kSigmoid));
  static_assert(!CompleteMockBackend::operator_capabilities.has(OptionalOperator::kExp));
  const Result<void> missing = require_operators<CompleteMockBackend>(
      OperatorCapabilities{OptionalOperator::kSigmoid, OptionalOperator::kExp});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kCapabilityMissing);
  EXPECT_EQ(missing.error().subject(), "exp");
  EXPECT_TRUE(require_operators<CompleteMockBackend>(
                  OperatorCapabilities{OptionalOperator::kL2Norm, OptionalOperator::kSigmoid})
                  .has_value());
}

TEST(NeuralBackendConcept, IsIndependentOfProviderRequirements) {
  static_assert(NeuralBackend<MockBackend<Defect::kNoCreateSession>>);
  EXPECT_TRUE(NeuralBackend<MockBackend<Defect::kNoPrepareModel>>);
}

// no tensor type
TEST(NeuralBackendConcept, RejectsBackendWithoutTensor) {
  using T = MockBackend<Defect::kNoTensor>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: missing associated type tensor");
}

// no weight type
TEST(NeuralBackendConcept, RejectsBackendWithoutWeight) {
  using T = MockBackend<Defect::kNoWeight>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: missing associated type weight");
}

// no kv_cache type
TEST(NeuralBackendConcept, RejectsBackendWithoutKvCache) {
  using T = MockBackend<Defect::kNoKvCache>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: missing associated type kv_cache");
}

// no error type
TEST(NeuralBackendConcept, RejectsBackendWithoutError) {
  using T = MockBackend<Defect::kNoError>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: missing associated type error");
}

// error type without what()
TEST(NeuralBackendConcept, RejectsErrorThatCannotDescribeItself) {
  using T = MockBackend<Defect::kErrorWithoutWhat>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: error must be move-constructible and have what()");
}

// a tensor that cannot be returned inside a Result
TEST(NeuralBackendConcept, RejectsImmovableTensor) {
  using T = MockBackend<Defect::kTensorNotMovable>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: tensor must be a move-constructible object type");
}

// no operator capability set
TEST(NeuralBackendConcept, RejectsBackendWithoutOperatorCapabilities) {
  using T = MockBackend<Defect::kNoOperatorCapabilities>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(
      diagnose::neural_backend_unmet<T>(),
      "NeuralBackend: missing static constexpr OperatorCapabilities operator_capabilities");
}

// static const without a constant initializer: an architecture could not check it at compile time
TEST(NeuralBackendConcept, RejectsOperatorCapabilitiesThatAreNotConstexpr) {
  using T = MockBackend<Defect::kOperatorCapabilitiesNotConstexpr>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(
      diagnose::neural_backend_unmet<T>(),
      "NeuralBackend: missing static constexpr OperatorCapabilities operator_capabilities");
}

// a raw integer instead of OperatorCapabilities
TEST(NeuralBackendConcept, RejectsOperatorCapabilitiesOfTheWrongType) {
  using T = MockBackend<Defect::kOperatorCapabilitiesWrongType>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(
      diagnose::neural_backend_unmet<T>(),
      "NeuralBackend: missing static constexpr OperatorCapabilities operator_capabilities");
}

// no embedding lookup
TEST(NeuralBackendConcept, RejectsBackendWithoutEmbedding) {
  using T = MockBackend<Defect::kNoEmbedding>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing embedding(");
}

// embedding(weight, std::vector<uint32_t>&) does not accept a span of token ids
TEST(NeuralBackendConcept, RejectsEmbeddingTakingAMutableVector) {
  using T = MockBackend<Defect::kEmbeddingTakesVector>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing embedding(");
}

// no linear
TEST(NeuralBackendConcept, RejectsBackendWithoutLinear) {
  using T = MockBackend<Defect::kNoLinear>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing linear(");
}

// linear returns a bare tensor instead of Result<tensor, error>
TEST(NeuralBackendConcept, RejectsLinearThatCannotFail) {
  using T = MockBackend<Defect::kLinearReturnsBareTensor>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing linear(");
}

// no RMS norm
TEST(NeuralBackendConcept, RejectsBackendWithoutRmsNorm) {
  using T = MockBackend<Defect::kNoRmsNorm>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing rms_norm(");
}

// no rotary embedding
TEST(NeuralBackendConcept, RejectsBackendWithoutRotary) {
  using T = MockBackend<Defect::kNoRotary>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing rotary(");
}

// no way to create a session KV cache
TEST(NeuralBackendConcept, RejectsBackendWithoutCreateKvCache) {
  using T = MockBackend<Defect::kNoCreateKvCache>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(),
                     "NeuralBackend: missing create_kv_cache(");
}

// no attention
TEST(NeuralBackendConcept, RejectsBackendWithoutAttention) {
  using T = MockBackend<Defect::kNoAttention>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing attention(");
}

// attention without the session KV cache argument
TEST(NeuralBackendConcept, RejectsAttentionThatIgnoresTheKvCache) {
  using T = MockBackend<Defect::kAttentionWithoutCache>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing attention(");
}

// no SwiGLU
TEST(NeuralBackendConcept, RejectsBackendWithoutSwiglu) {
  using T = MockBackend<Defect::kNoSwiglu>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing swiglu(");
}

// no residual add
TEST(NeuralBackendConcept, RejectsBackendWithoutResidualAdd) {
  using T = MockBackend<Defect::kNoAdd>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing add(");
}

// no logits
TEST(NeuralBackendConcept, RejectsBackendWithoutLogits) {
  using T = MockBackend<Defect::kNoLogits>;
  static_assert(!NeuralBackend<T>);
  EXPECT_FALSE(NeuralBackend<T>);
  expect_first_unmet(diagnose::neural_backend_unmet<T>(), "NeuralBackend: missing logits(");
}

}  // namespace
}  // namespace eredu::concept_tests
