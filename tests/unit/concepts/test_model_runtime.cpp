// ModelRuntime<B>, PreparedModel<M>, Submission<T, C> and the session_capability_mismatch
// customization point, driven through the complete mock backend.

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

#include "eredu/core/prepared_model.hpp"
#include "eredu/core/session_capability_mismatch.hpp"
#include "eredu/runtime/model_runtime.hpp"
#include "mocks.hpp"

namespace eredu::concept_tests {
namespace {

constexpr SessionCapabilities kCacheAndObservation{.persistent_cache = true,
                                                   .output_observation = true};
constexpr SessionCapabilities kCacheOnly{.persistent_cache = true};

TEST(PreparedModel, IsMoveOnlyEvenForCopyableModels) {
  static_assert(std::is_copy_constructible_v<MockModel>);
  static_assert(!std::is_copy_constructible_v<PreparedModel<MockModel>>);
  static_assert(!std::is_copy_assignable_v<PreparedModel<MockModel>>);
  static_assert(std::is_move_constructible_v<PreparedModel<MockModel>>);
  static_assert(std::is_move_assignable_v<PreparedModel<MockModel>>);
  EXPECT_FALSE(std::copyable<PreparedModel<MockModel>>);
  EXPECT_TRUE(std::movable<PreparedModel<MockModel>>);
}

TEST(PreparedModel, IntoPartsReturnsTheModelAndTheAdmittedCapabilities) {
  PreparedModel<MockModel> prepared(MockModel{kCacheOnly}, kCacheAndObservation);
  EXPECT_EQ(prepared.admitted_capabilities(), kCacheAndObservation);
  PreparedModel<MockModel> moved = std::move(prepared);
  PreparedModelParts<MockModel> parts = std::move(moved).into_parts();
  EXPECT_EQ(parts.admitted, kCacheAndObservation);
  EXPECT_EQ(parts.model.realized, kCacheOnly);
}

template <typename B>
concept accepts_lvalue_prepared_model = requires(const B& b,
                                                 PreparedModel<typename B::model>& prepared) {
  b.create_session(prepared);
};
template <typename B>
concept accepts_rvalue_prepared_model = requires(const B& b,
                                                 PreparedModel<typename B::model>&& prepared) {
  b.create_session(std::move(prepared));
};

TEST(PreparedModel, CreateSessionConsumesThePreparedModel) {
  // Only an rvalue can be handed to create_session: an lvalue PreparedModel does not bind.
  static_assert(!accepts_lvalue_prepared_model<CompleteMockBackend>);
  static_assert(accepts_rvalue_prepared_model<CompleteMockBackend>);
  EXPECT_FALSE(accepts_lvalue_prepared_model<CompleteMockBackend>);
}

TEST(Submission, WaitHandsOutTheOutputAfterItsCompletionSucceeds) {
  using C = MockCompletion<CompletionDefect::kNone, MockError>;
  Submission<MockOutput, C> submission{MockOutput{7}, C{}};
  Result<MockOutput, MockError> output = std::move(submission).wait();
  ASSERT_TRUE(output.has_value());
  EXPECT_EQ(output->positions, 7u);
}

TEST(Submission, WaitReportsTheCompletionErrorInsteadOfTheOutput) {
  using C = MockCompletion<CompletionDefect::kNone, MockError>;
  Submission<MockOutput, C> submission{MockOutput{7}, C{MockError("device lost")}};
  static_assert(!std::is_copy_constructible_v<Submission<MockOutput, C>>);
  Result<MockOutput, MockError> output = std::move(submission).wait();
  ASSERT_FALSE(output.has_value());
  EXPECT_EQ(output.error().what(), "device lost");
}

TEST(SessionCapabilityMismatch, PrefersTheBackendsOwnMember) {
  const CompleteMockBackend backend;
  const MockError error = session_capability_mismatch(backend, kCacheAndObservation, kCacheOnly);
  EXPECT_EQ(error.what(),
            "mock backend: realized {persistent_cache} != admitted {persistent_cache, "
            "output_observation}");
}

TEST(SessionCapabilityMismatch, DefaultsToAnInternalErrorNamingBothCapabilitySets) {
  const MockBackend<Defect::kUsesDefaultMismatch> backend;
  const MockError error = session_capability_mismatch(backend, kCacheAndObservation, kCacheOnly);
  EXPECT_EQ(error.what(),
            "internal error: 'session capabilities': session realized capabilities "
            "{persistent_cache} but {persistent_cache, output_observation} were admitted before "
            "materialization");
}

TEST(SessionCapabilityMismatch, DefaultWorksForBackendsUsingEreduErrorDirectly) {
  struct ErrorBackend {
    using error = Error;
  };
  const Error error =
      session_capability_mismatch(ErrorBackend{}, SessionCapabilities{}, kCacheOnly);
  EXPECT_EQ(error.code(), ErrorCode::kInternal);
  EXPECT_EQ(error.subject(), "session capabilities");
}

TEST(ModelRuntime, CreatesTheSessionWhenRealizedCapabilitiesMatchTheAdmittedOnes) {
  auto runtime = runtime::ModelRuntime<CompleteMockBackend>::prepare(
      CompleteMockBackend{}, MockModelConfig{kCacheAndObservation, kCacheAndObservation});
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  EXPECT_EQ(runtime->admitted_capabilities(), kCacheAndObservation);
  EXPECT_EQ(runtime->session().capabilities(), kCacheAndObservation);
  EXPECT_EQ(runtime->backend().descriptor().name, "mock");
}

TEST(ModelRuntime, ReportsACapabilityMismatchThroughTheBackendsCustomizationPoint) {
  auto runtime = runtime::ModelRuntime<CompleteMockBackend>::prepare(
      CompleteMockBackend{}, MockModelConfig{kCacheAndObservation, kCacheOnly});
  ASSERT_FALSE(runtime.has_value());
  EXPECT_EQ(runtime.error().what(),
            "mock backend: realized {persistent_cache} != admitted {persistent_cache, "
            "output_observation}");
}

TEST(ModelRuntime, ReportsACapabilityMismatchThroughTheDefaultWhenTheBackendHasNoMember) {
  using B = MockBackend<Defect::kUsesDefaultMismatch>;
  auto runtime = runtime::ModelRuntime<B>::from_prepared(
      B{}, PreparedModel<MockModel>(MockModel{kCacheOnly}, kCacheAndObservation));
  ASSERT_FALSE(runtime.has_value());
  EXPECT_NE(runtime.error().what().find("internal error"), std::string::npos);
  EXPECT_NE(runtime.error().what().find("but {persistent_cache, output_observation} were admitted"),
            std::string::npos);
}

TEST(ModelRuntime, ReportsARealizedCapabilityBeyondTheAdmittedOnesAsAMismatch) {
  // More than admitted is a difference too: admission must describe the session exactly.
  auto runtime = runtime::ModelRuntime<CompleteMockBackend>::prepare(
      CompleteMockBackend{}, MockModelConfig{kCacheOnly, kCacheAndObservation});
  ASSERT_FALSE(runtime.has_value());
  EXPECT_NE(runtime.error().what().find("realized {persistent_cache, output_observation}"),
            std::string::npos);
}

TEST(ModelRuntime, ForwardsPrefillDecodeAndObservationToItsSession) {
  auto runtime = runtime::ModelRuntime<CompleteMockBackend>::prepare(
      CompleteMockBackend{}, MockModelConfig{kCacheAndObservation, kCacheAndObservation});
  ASSERT_TRUE(runtime.has_value());
  auto prefill = runtime->prefill(MockPrefillInput{{1, 2, 3}});
  ASSERT_TRUE(prefill.has_value());
  Result<MockOutput, MockError> prefilled = std::move(prefill).value().wait();
  ASSERT_TRUE(prefilled.has_value());
  EXPECT_EQ(prefilled->positions, 3u);

  auto decode = runtime->decode(MockDecodeInput{4});
  ASSERT_TRUE(decode.has_value());
  Result<MockOutput, MockError> decoded = std::move(decode).value().wait();
  ASSERT_TRUE(decoded.has_value());
  auto observed = runtime->observe_output(*decoded);
  ASSERT_TRUE(observed.has_value());
  EXPECT_EQ(observed->positions, 4u);
}

}  // namespace
}  // namespace eredu::concept_tests
