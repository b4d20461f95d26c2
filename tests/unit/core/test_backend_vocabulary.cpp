// The backend vocabulary of core: BackendId, capabilities (fail closed, first missing named),
// BackendError, optional-operator sets, operator specs and the preparation policy.

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "eredu/core/backend_error.hpp"
#include "eredu/core/backend_id.hpp"
#include "eredu/core/capabilities.hpp"
#include "eredu/core/descriptors.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/operator_capabilities.hpp"

namespace eredu {
namespace {

TEST(BackendId, RejectsTheEmptyName) {
  const Result<BackendId> id = BackendId::create("");
  ASSERT_FALSE(id.has_value());
  EXPECT_EQ(id.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(id.error().subject(), "backend id");
}

TEST(BackendId, KeepsAnyNonEmptyOpenName) {
  const Result<BackendId> id = BackendId::create("my-vendor-npu");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->value(), "my-vendor-npu");
  EXPECT_EQ(id.value(), BackendId::create("my-vendor-npu").value());
  EXPECT_NE(id.value(), BackendId::create("cpu").value());
}

TEST(DeviceDescriptor, MemoryIsAbsentUnlessReported) {
  const DeviceDescriptor device{"cpu:0", "Host CPU", "cpu", {}};
  EXPECT_FALSE(device.memory_bytes.has_value());
}

TEST(Capabilities, AreAllAbsentByDefault) {
  constexpr DeviceCapabilities device;
  constexpr SessionCapabilities session;
  static_assert(!device.exact_completion && !device.transfers && !device.collectives);
  static_assert(!session.persistent_cache && !session.output_observation &&
                !session.activation_inspection);
  EXPECT_EQ(describe_capabilities(device), "none");
  EXPECT_EQ(describe_capabilities(session), "none");
}

TEST(Capabilities, NothingRequiredIsSatisfiedByNothingAvailable) {
  EXPECT_TRUE(DeviceCapabilities{}.validate(DeviceCapabilities{}).has_value());
  EXPECT_TRUE(SessionCapabilities{}.validate(SessionCapabilities{}).has_value());
}

TEST(SessionCapabilities, ValidateNamesTheFirstMissingCapability) {
  const SessionCapabilities required{
      .persistent_cache = true, .output_observation = true, .activation_inspection = true};
  const SessionCapabilities available{.persistent_cache = true};
  const Result<void> result = required.validate(available);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kCapabilityMissing);
  EXPECT_EQ(result.error().subject(), "output_observation");
  EXPECT_EQ(result.error().message(),
            "session capability 'output_observation' is required but not available");
}

TEST(SessionCapabilities, ValidatePassesWhenAvailableIsASuperset) {
  const SessionCapabilities required{.output_observation = true};
  const SessionCapabilities available{.persistent_cache = true, .output_observation = true};
  EXPECT_TRUE(required.validate(available).has_value());
}

TEST(DeviceCapabilities, ValidateNamesTheFirstMissingCapabilityInDeclarationOrder) {
  const DeviceCapabilities required{
      .exact_completion = true, .transfers = true, .collectives = true};
  const DeviceCapabilities available{.transfers = true};
  const Result<void> result = required.validate(available);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "exact_completion");
  EXPECT_EQ(required.first_missing(DeviceCapabilities{.exact_completion = true}), "transfers");
}

TEST(DescribeCapabilities, ListsPresentCapabilitiesInDeclarationOrder) {
  EXPECT_EQ(describe_capabilities(
                SessionCapabilities{.persistent_cache = true, .activation_inspection = true}),
            "persistent_cache, activation_inspection");
}

TEST(BackendError, EachCaseNamesWhatFailedAndWhere) {
  const BackendError unsupported = BackendError::Unsupported{"cuda", "collectives"};
  EXPECT_EQ(unsupported.what(), "backend 'cuda' does not support capability 'collectives'");
  EXPECT_EQ(unsupported.code(), ErrorCode::kUnsupported);

  const BackendError preparation = BackendError::Preparation{"upload", "out of memory"};
  EXPECT_EQ(preparation.what(), "preparation failed during upload: out of memory");
  EXPECT_EQ(preparation.code(), ErrorCode::kBackend);

  const BackendError execution = BackendError::Execution{"s1", "decode", "kernel fault"};
  EXPECT_EQ(execution.what(), "execution failed in session 's1' during decode: kernel fault");

  const BackendError completion = BackendError::Completion{"fence lost"};
  EXPECT_EQ(completion.what(), "completion failed: fence lost");
  ASSERT_NE(completion.get_if<BackendError::Completion>(), nullptr);
  EXPECT_EQ(completion.get_if<BackendError::Execution>(), nullptr);
}

TEST(BackendError, ConvertsToACoreErrorWithTheSameDescription) {
  const BackendError unsupported = BackendError::Unsupported{"vulkan", "transfers"};
  const Error error = unsupported.to_error();
  EXPECT_EQ(error.code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error.message(), "backend 'vulkan' does not support capability 'transfers'");
}

TEST(OperatorCapabilities, StartEmptyAndAddOperatorsInConstantExpressions) {
  constexpr OperatorCapabilities none;
  static_assert(none.empty());
  constexpr OperatorCapabilities some =
      OperatorCapabilities{OptionalOperator::kSigmoid}.with(OptionalOperator::kTensorParallelSum);
  static_assert(some.has(OptionalOperator::kSigmoid));
  static_assert(some.has(OptionalOperator::kTensorParallelSum));
  static_assert(!some.has(OptionalOperator::kExp));
  static_assert(some.bits() == ((1u << 1) | (1u << 19)));
  EXPECT_FALSE(some.empty());
}

TEST(OperatorCapabilities, RequireOperatorsNamesTheFirstMissingOperator) {
  const OperatorCapabilities required{OptionalOperator::kAttentionSinks, OptionalOperator::kExp,
                                      OptionalOperator::kSoftplus};
  const OperatorCapabilities available{OptionalOperator::kSoftplus};
  const Result<void> result = require_operators(required, available);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kCapabilityMissing);
  EXPECT_EQ(result.error().subject(), "exp");  // kExp precedes kAttentionSinks in enum order
  EXPECT_TRUE(require_operators(OperatorCapabilities{}, OperatorCapabilities{}).has_value());
}

TEST(OperatorCapabilities, EveryOptionalOperatorHasADistinctName) {
  for (std::size_t i = 0; i < kOptionalOperatorCount; ++i) {
    const auto a = to_string(static_cast<OptionalOperator>(i));
    EXPECT_NE(a, "unknown_operator");
    for (std::size_t j = i + 1; j < kOptionalOperatorCount; ++j) {
      EXPECT_NE(a, to_string(static_cast<OptionalOperator>(j)));
    }
  }
}

TEST(RotarySpec, RejectsOddOrOversizedRotatedDimensions) {
  EXPECT_FALSE((RotarySpec{.heads = 2, .head_dim = 8, .rotated_dims = 7}.validate().has_value()));
  EXPECT_FALSE((RotarySpec{.heads = 2, .head_dim = 8, .rotated_dims = 10}.validate().has_value()));
  EXPECT_FALSE((RotarySpec{.heads = 0, .head_dim = 8, .rotated_dims = 8}.validate().has_value()));
  EXPECT_FALSE((RotarySpec{.heads = 2, .head_dim = 8, .rotated_dims = 8, .frequency_base = 0.0f}
                    .validate()
                    .has_value()));
  EXPECT_TRUE((RotarySpec{.heads = 2, .head_dim = 8, .rotated_dims = 4}.validate().has_value()));
}

TEST(AttentionSpec, RequiresQueryHeadsToBeAMultipleOfKvHeads) {
  const Result<void> bad = AttentionSpec{.heads = 6, .kv_heads = 4, .head_dim = 8}.validate();
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "attention: heads (6) must be a multiple of kv_heads (4)");
  EXPECT_TRUE((AttentionSpec{.heads = 8, .kv_heads = 2, .head_dim = 8}.validate().has_value()));
}

TEST(KvCacheSpec, CountsElementsAndRejectsOverflow) {
  const Result<std::uint64_t> small =
      KvCacheSpec{.layers = 5, .kv_heads = 4, .head_dim = 8, .max_positions = 512}
          .elements_per_tensor();
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small.value(), 5u * 4u * 8u * 512u);

  const std::uint32_t big = std::numeric_limits<std::uint32_t>::max();
  const Result<std::uint64_t> huge =
      KvCacheSpec{.layers = big, .kv_heads = big, .head_dim = big, .max_positions = big}
          .elements_per_tensor();
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().code(), ErrorCode::kOverflow);

  EXPECT_FALSE((KvCacheSpec{.layers = 1, .kv_heads = 1, .head_dim = 1, .max_positions = 0}
                    .elements_per_tensor()
                    .has_value()));
}

TEST(PreparationPolicy, AdmitsOnlyWhatTheBackendDerived) {
  const PreparationPolicy policy{.required_session_capabilities = {.persistent_cache = true}};
  EXPECT_TRUE(policy.admit(SessionCapabilities{.persistent_cache = true}).has_value());
  const Result<void> refused = policy.admit(SessionCapabilities{.output_observation = true});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().subject(), "persistent_cache");
}

}  // namespace
}  // namespace eredu
