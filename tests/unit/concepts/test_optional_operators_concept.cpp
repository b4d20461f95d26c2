// OptionalOperatorsConsistent and provides<B, op>, shown on the fusion shared_input_linear: a
// backend that declares an optional operator must have its member with the documented signature
// (the diagnoser names the one it lacks), and a family may call a member only where it is
// declared. Each mock is the complete mock backend with only its operator set and that member
// changed.

#include <gtest/gtest.h>

#include <span>
#include <string_view>
#include <vector>

#include "concept_test_support.hpp"
#include "eredu/core/concepts/optional_operators.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

inline constexpr OperatorCapabilities kWithSharedLinear =
    kMockOperators.with(OptionalOperator::kSharedInputLinear);

// Declared, with the member as documented.
struct SharedLinearBackend : CompleteMockBackend {
  static constexpr OperatorCapabilities operator_capabilities = kWithSharedLinear;
  Result<std::vector<tensor>, error> linear_shared_input(const tensor&,
                                                         std::span<const weight* const>) const;
};
// Declared, no member.
struct SharedLinearDeclaredOnly : CompleteMockBackend {
  static constexpr OperatorCapabilities operator_capabilities = kWithSharedLinear;
};
// Declared, but the member returns one tensor instead of one per weight.
struct SharedLinearReturnsOneTensor : CompleteMockBackend {
  static constexpr OperatorCapabilities operator_capabilities = kWithSharedLinear;
  Result<tensor, error> linear_shared_input(const tensor&, std::span<const weight* const>) const;
};
// A member nobody declared: consistent, and never called.
struct SharedLinearUndeclared : CompleteMockBackend {
  Result<std::vector<tensor>, error> linear_shared_input(const tensor&,
                                                         std::span<const weight* const>) const;
};

constexpr std::string_view kMissingSharedLinear =
    "NeuralBackend declares shared_input_linear but lacks linear_shared_input";

TEST(OptionalOperatorsConcept, ADeclaredSharedInputLinearWithItsMemberIsProvided) {
  static_assert(OptionalOperatorsConsistent<SharedLinearBackend>);
  static_assert(diagnose::optional_operators<SharedLinearBackend>());
  static_assert(provides<SharedLinearBackend, OptionalOperator::kSharedInputLinear>);
  EXPECT_TRUE(diagnose::optional_operators_unmet<SharedLinearBackend>().empty());
}

TEST(OptionalOperatorsConcept, RejectsADeclaredSharedInputLinearWithoutItsMember) {
  static_assert(!OptionalOperatorsConsistent<SharedLinearDeclaredOnly>);
  static_assert(!provides<SharedLinearDeclaredOnly, OptionalOperator::kSharedInputLinear>);
  expect_first_unmet(diagnose::optional_operators_unmet<SharedLinearDeclaredOnly>(),
                     kMissingSharedLinear);
}

TEST(OptionalOperatorsConcept, RejectsASharedInputLinearThatReturnsOneTensor) {
  static_assert(!OptionalOperatorsConsistent<SharedLinearReturnsOneTensor>);
  expect_first_unmet(diagnose::optional_operators_unmet<SharedLinearReturnsOneTensor>(),
                     kMissingSharedLinear);
}

TEST(OptionalOperatorsConcept, AnUndeclaredMemberIsConsistentButNotProvided) {
  static_assert(OptionalOperatorsConsistent<SharedLinearUndeclared>);
  static_assert(!provides<SharedLinearUndeclared, OptionalOperator::kSharedInputLinear>);
  static_assert(!provides<CompleteMockBackend, OptionalOperator::kSharedInputLinear>);
  EXPECT_TRUE(diagnose::optional_operators_unmet<SharedLinearUndeclared>().empty());
}

}  // namespace
}  // namespace eredu::concept_tests
