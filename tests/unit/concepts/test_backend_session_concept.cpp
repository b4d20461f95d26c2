// BackendSession: the complete mock session is accepted; each requirement is enforced.
// One TEST per requirement, each with a mock (mocks.hpp) that misses just that one requirement.
// Every rejection is proven twice: at compile time (static_assert) and as a counted test, which
// also checks that the diagnoser names exactly the requirement that was removed.

#include <gtest/gtest.h>

#include <string_view>

#include "concept_test_support.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

using GoodSession = MockSession<SessionDefect::kNone, SessionHost, MockError>;

TEST(BackendSessionConcept, AcceptsCompleteMockSession) {
  static_assert(BackendSession<GoodSession, SessionHost>);
  static_assert(diagnose::backend_session<GoodSession, SessionHost>());
  EXPECT_TRUE((BackendSession<GoodSession, SessionHost>));
  EXPECT_TRUE((diagnose::backend_session_unmet<GoodSession, SessionHost>().empty()));
}

// A backend type without an error type cannot host any session: the completion's error has
// nothing to match.
TEST(BackendSessionConcept, RejectsBackendWithoutErrorType) {
  struct HostWithoutError {};
  static_assert(!BackendSession<GoodSession, HostWithoutError>);
  EXPECT_FALSE((BackendSession<GoodSession, HostWithoutError>));
  expect_first_unmet(diagnose::backend_session_unmet<GoodSession, HostWithoutError>(),
                     "BackendSession: completion::error_type must be the backend");
}

// no prefill_input type
TEST(BackendSessionConcept, RejectsSessionWithoutPrefillInput) {
  using T = MockSession<SessionDefect::kNoPrefillInput, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing associated type prefill_input");
}

// no decode_input type
TEST(BackendSessionConcept, RejectsSessionWithoutDecodeInput) {
  using T = MockSession<SessionDefect::kNoDecodeInput, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing associated type decode_input");
}

// no output type
TEST(BackendSessionConcept, RejectsSessionWithoutOutput) {
  using T = MockSession<SessionDefect::kNoOutput, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing associated type output");
}

// no observation type
TEST(BackendSessionConcept, RejectsSessionWithoutObservation) {
  using T = MockSession<SessionDefect::kNoObservation, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing associated type observation");
}

// no completion type
TEST(BackendSessionConcept, RejectsSessionWithoutCompletion) {
  using T = MockSession<SessionDefect::kNoCompletion, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing associated type completion");
}

// completion type is copyable, hence not a Completion
TEST(BackendSessionConcept, RejectsSessionWhoseCompletionIsCopyable) {
  using T = MockSession<SessionDefect::kCompletionNotCompletion, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: completion must satisfy Completion");
}

// completion reports OtherError, the backend MockError
TEST(BackendSessionConcept, RejectsSessionWhoseCompletionErrorIsNotTheBackendError) {
  using T = MockSession<SessionDefect::kCompletionErrorDiffers, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: completion::error_type must be the backend");
}

// session cannot be moved into a Result or a ModelRuntime
TEST(BackendSessionConcept, RejectsImmovableSession) {
  using T = MockSession<SessionDefect::kNotMovable, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: the session must be a move-constructible object type");
}

// no capabilities()
TEST(BackendSessionConcept, RejectsSessionWithoutCapabilities) {
  using T = MockSession<SessionDefect::kNoCapabilities, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing capabilities()");
}

// capabilities() returns the wrong capability set
TEST(BackendSessionConcept, RejectsCapabilitiesReturningDeviceCapabilities) {
  using T =
      MockSession<SessionDefect::kCapabilitiesReturnsDeviceCapabilities, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing capabilities()");
}

// no prefill
TEST(BackendSessionConcept, RejectsSessionWithoutPrefill) {
  using T = MockSession<SessionDefect::kNoPrefill, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing prefill(");
}

// prefill cannot report an error
TEST(BackendSessionConcept, RejectsPrefillReturningSubmissionWithoutResult) {
  using T = MockSession<SessionDefect::kPrefillReturnsBareSubmission, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing prefill(");
}

// no decode
TEST(BackendSessionConcept, RejectsSessionWithoutDecode) {
  using T = MockSession<SessionDefect::kNoDecode, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing decode(");
}

// decode(decode_input&&) without the backend argument
TEST(BackendSessionConcept, RejectsDecodeThatDoesNotTakeTheBackend) {
  using T = MockSession<SessionDefect::kDecodeWithoutBackend, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing decode(");
}

// no observe_output
TEST(BackendSessionConcept, RejectsSessionWithoutObserveOutput) {
  using T = MockSession<SessionDefect::kNoObserveOutput, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing observe_output(");
}

// observe_output callable only on a mutable session
TEST(BackendSessionConcept, RejectsNonConstObserveOutput) {
  using T = MockSession<SessionDefect::kObserveOutputNotConst, SessionHost, MockError>;
  static_assert(!(BackendSession<T, SessionHost>));
  EXPECT_FALSE((BackendSession<T, SessionHost>));
  expect_first_unmet((diagnose::backend_session_unmet<T, SessionHost>()),
                     "BackendSession: missing observe_output(");
}

}  // namespace
}  // namespace eredu::concept_tests
