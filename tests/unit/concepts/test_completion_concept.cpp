// Completion: the complete mock is accepted; each requirement is enforced.
// One TEST per requirement, each with a mock (mocks.hpp) that misses just that one requirement.
// Every rejection is proven twice: at compile time (static_assert) and as a counted test, which
// also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

TEST(CompletionConcept, AcceptsCompleteMockCompletion) {
  using T = MockCompletion<CompletionDefect::kNone, MockError>;
  static_assert(Completion<T>);
  static_assert(diagnose::completion<T>());
  EXPECT_TRUE(Completion<T>);
  EXPECT_TRUE(diagnose::completion_unmet<T>().empty());
}

// no nested error_type
TEST(CompletionConcept, RejectsCompletionWithoutErrorType) {
  using T = MockCompletion<CompletionDefect::kNoErrorType, MockError>;
  static_assert(!Completion<T>);
  EXPECT_FALSE(Completion<T>);
  expect_first_unmet(diagnose::completion_unmet<T>(),
                     "Completion: missing associated type error_type");
}

// no is_complete()
TEST(CompletionConcept, RejectsCompletionWithoutIsComplete) {
  using T = MockCompletion<CompletionDefect::kNoIsComplete, MockError>;
  static_assert(!Completion<T>);
  EXPECT_FALSE(Completion<T>);
  expect_first_unmet(diagnose::completion_unmet<T>(), "Completion: missing is_complete()");
}

// is_complete() returns bool instead of Result<bool, error_type>
TEST(CompletionConcept, RejectsIsCompleteReturningBareBool) {
  using T = MockCompletion<CompletionDefect::kIsCompleteReturnsBool, MockError>;
  static_assert(!Completion<T>);
  EXPECT_FALSE(Completion<T>);
  expect_first_unmet(diagnose::completion_unmet<T>(), "Completion: missing is_complete()");
}

// no wait()
TEST(CompletionConcept, RejectsCompletionWithoutWait) {
  using T = MockCompletion<CompletionDefect::kNoWait, MockError>;
  static_assert(!Completion<T>);
  EXPECT_FALSE(Completion<T>);
  expect_first_unmet(diagnose::completion_unmet<T>(), "Completion: missing wait()");
}

// copyable: two owners could wait on the same work
TEST(CompletionConcept, RejectsCopyableCompletion) {
  using T = MockCompletion<CompletionDefect::kCopyable, MockError>;
  static_assert(!Completion<T>);
  EXPECT_FALSE(Completion<T>);
  expect_first_unmet(diagnose::completion_unmet<T>(),
                     "Completion: a completion must not be copyable");
}

// neither copyable nor movable
TEST(CompletionConcept, RejectsImmovableCompletion) {
  using T = MockCompletion<CompletionDefect::kNotMovable, MockError>;
  static_assert(!Completion<T>);
  EXPECT_FALSE(Completion<T>);
  expect_first_unmet(diagnose::completion_unmet<T>(), "Completion: a completion must be movable");
}

}  // namespace
}  // namespace eredu::concept_tests
