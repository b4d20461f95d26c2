#pragma once
// Mock backends for the concept tests.
//
// Each mock is a template over a "defect": the value kNone gives the complete mock, every other
// value removes exactly one requirement (an associated type, an operation) or gives exactly one
// operation a wrong signature. Associated types are switched with optional_<name> base classes;
// operations with constrained overloads (`requires (D != ...)`), so a defect never touches any
// other requirement.
//
// Operations that the tests never call are declared only: concept checks are unevaluated, and an
// accidental call would fail to link rather than run a placeholder.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/core/capabilities.hpp"
#include "eredu/core/completion.hpp"
#include "eredu/core/concepts.hpp"
#include "eredu/core/descriptors.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/core/result.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/model_runtime.hpp"

namespace eredu::concept_tests {

// ---- building blocks --------------------------------------------------------------------------

#define EREDU_TEST_OPTIONAL_ALIAS(name) \
  template <bool Present, typename T>   \
  struct optional_##name {};            \
  template <typename T>                 \
  struct optional_##name<true, T> {     \
    using name = T;                     \
  };

EREDU_TEST_OPTIONAL_ALIAS(error_type)
EREDU_TEST_OPTIONAL_ALIAS(prefill_input)
EREDU_TEST_OPTIONAL_ALIAS(decode_input)
EREDU_TEST_OPTIONAL_ALIAS(output)
EREDU_TEST_OPTIONAL_ALIAS(observation)
EREDU_TEST_OPTIONAL_ALIAS(completion)
EREDU_TEST_OPTIONAL_ALIAS(model_config)
EREDU_TEST_OPTIONAL_ALIAS(model)
EREDU_TEST_OPTIONAL_ALIAS(session)
EREDU_TEST_OPTIONAL_ALIAS(error)
EREDU_TEST_OPTIONAL_ALIAS(tensor)
EREDU_TEST_OPTIONAL_ALIAS(weight)
EREDU_TEST_OPTIONAL_ALIAS(kv_cache)
EREDU_TEST_OPTIONAL_ALIAS(parameter)
EREDU_TEST_OPTIONAL_ALIAS(materialized_weight)
EREDU_TEST_OPTIONAL_ALIAS(materialization_context)
EREDU_TEST_OPTIONAL_ALIAS(materialization)
EREDU_TEST_OPTIONAL_ALIAS(parameter_error)
EREDU_TEST_OPTIONAL_ALIAS(load_options)
EREDU_TEST_OPTIONAL_ALIAS(selected_preparation)
EREDU_TEST_OPTIONAL_ALIAS(backend)
EREDU_TEST_OPTIONAL_ALIAS(drafter_preparation)
EREDU_TEST_OPTIONAL_ALIAS(drafter)

#undef EREDU_TEST_OPTIONAL_ALIAS

struct MoveOnly {
  MoveOnly() = default;
  MoveOnly(const MoveOnly&) = delete;
  MoveOnly& operator=(const MoveOnly&) = delete;
  MoveOnly(MoveOnly&&) = default;
  MoveOnly& operator=(MoveOnly&&) = default;
  ~MoveOnly() = default;
};
struct Immovable {
  Immovable() = default;
  Immovable(const Immovable&) = delete;
  Immovable& operator=(const Immovable&) = delete;
  Immovable(Immovable&&) = delete;
  Immovable& operator=(Immovable&&) = delete;
  ~Immovable() = default;
};
struct Copyable {};

// A backend error: describes itself, and is constructible from eredu::Error (so the default of
// session_capability_mismatch applies to it).
struct MockError {
  std::string message;
  explicit MockError(std::string text) : message(std::move(text)) {}
  explicit MockError(const Error& error) : message(error.what()) {}
  [[nodiscard]] std::string what() const { return message; }
};
// A second, distinct error type (for "completion error differs from the backend error").
struct OtherError {
  std::string message;
  [[nodiscard]] std::string what() const { return message; }
};
// Describes itself but cannot be built from eredu::Error: no default mismatch error.
struct OpaqueError {
  std::string message;
  [[nodiscard]] std::string what() const { return message; }
};
// Cannot describe itself (no what()).
struct SilentError {
  std::string message;
};

// ---- Completion ---------------------------------------------------------------------------------

enum class CompletionDefect {
  kNone,
  kNoErrorType,
  kNoIsComplete,
  kIsCompleteReturnsBool,
  kNoWait,
  kCopyable,
  kNotMovable,
};

template <CompletionDefect CD>
using completion_copy_policy = std::conditional_t<
    CD == CompletionDefect::kCopyable, Copyable,
    std::conditional_t<CD == CompletionDefect::kNotMovable, Immovable, MoveOnly>>;

// Work that already finished (like a synchronous CPU submission), successfully or with `failure`.
template <CompletionDefect CD, typename E>
class MockCompletion : public optional_error_type<CD != CompletionDefect::kNoErrorType, E>,
                       public completion_copy_policy<CD> {
 public:
  MockCompletion() = default;
  explicit MockCompletion(E failure) : failure_(std::move(failure)) {}

  Result<bool, E> is_complete() requires(CD != CompletionDefect::kNoIsComplete &&
                                         CD != CompletionDefect::kIsCompleteReturnsBool) {
    return true;
  }
  bool is_complete() requires(CD == CompletionDefect::kIsCompleteReturnsBool);

  Result<void, E> wait() requires(CD != CompletionDefect::kNoWait) {
    if (failure_) return Unexpected<E>(*failure_);
    return ok<E>();
  }

 private:
  std::optional<E> failure_;
};

// ---- BackendSession -----------------------------------------------------------------------------

struct MockPrefillInput {
  std::vector<std::uint32_t> tokens;
};
struct MockDecodeInput {
  std::uint32_t token = 0;
};
struct MockOutput {
  std::size_t positions = 0;  // cached positions after the submission
};
struct MockObservation {
  std::size_t positions = 0;
};

enum class SessionDefect {
  kNone,
  kNoPrefillInput,
  kNoDecodeInput,
  kNoOutput,
  kNoObservation,
  kNoCompletion,
  kCompletionNotCompletion,
  kCompletionErrorDiffers,
  kNotMovable,
  kNoCapabilities,
  kCapabilitiesReturnsDeviceCapabilities,
  kNoPrefill,
  kPrefillReturnsBareSubmission,
  kNoDecode,
  kDecodeWithoutBackend,
  kNoObserveOutput,
  kObserveOutputNotConst,
};

template <SessionDefect SD, typename E>
using session_completion_t =
    std::conditional_t<SD == SessionDefect::kCompletionNotCompletion,
                       MockCompletion<CompletionDefect::kCopyable, E>,
                       std::conditional_t<SD == SessionDefect::kCompletionErrorDiffers,
                                          MockCompletion<CompletionDefect::kNone, OtherError>,
                                          MockCompletion<CompletionDefect::kNone, E>>>;

// A session that counts cached positions and realizes the capabilities it was created with.
template <SessionDefect SD, typename B, typename E>
class MockSession
    : public optional_prefill_input<SD != SessionDefect::kNoPrefillInput, MockPrefillInput>,
      public optional_decode_input<SD != SessionDefect::kNoDecodeInput, MockDecodeInput>,
      public optional_output<SD != SessionDefect::kNoOutput, MockOutput>,
      public optional_observation<SD != SessionDefect::kNoObservation, MockObservation>,
      public optional_completion<SD != SessionDefect::kNoCompletion, session_completion_t<SD, E>>,
      public std::conditional_t<SD == SessionDefect::kNotMovable, Immovable, MoveOnly> {
 public:
  using good_completion = MockCompletion<CompletionDefect::kNone, E>;
  using good_submission = Submission<MockOutput, good_completion>;

  explicit MockSession(SessionCapabilities realized) : realized_(realized) {}

  SessionCapabilities capabilities() const
      requires(SD != SessionDefect::kNoCapabilities &&
               SD != SessionDefect::kCapabilitiesReturnsDeviceCapabilities) {
    return realized_;
  }
  DeviceCapabilities capabilities() const
      requires(SD == SessionDefect::kCapabilitiesReturnsDeviceCapabilities);

  Result<good_submission, E> prefill(const B& /*backend*/, MockPrefillInput&& input) requires(
      SD != SessionDefect::kNoPrefill && SD != SessionDefect::kPrefillReturnsBareSubmission) {
    positions_ += input.tokens.size();
    return good_submission{MockOutput{positions_}, good_completion{}};
  }
  good_submission prefill(const B& backend, MockPrefillInput&& input) requires(
      SD == SessionDefect::kPrefillReturnsBareSubmission);

  Result<good_submission, E> decode(const B& /*backend*/, MockDecodeInput&& /*input*/) requires(
      SD != SessionDefect::kNoDecode && SD != SessionDefect::kDecodeWithoutBackend) {
    positions_ += 1;
    return good_submission{MockOutput{positions_}, good_completion{}};
  }
  Result<good_submission, E> decode(MockDecodeInput&& input) requires(
      SD == SessionDefect::kDecodeWithoutBackend);

  Result<MockObservation, E> observe_output(const B& /*backend*/, const MockOutput& result) const
      requires(SD != SessionDefect::kNoObserveOutput &&
               SD != SessionDefect::kObserveOutputNotConst) {
    return MockObservation{result.positions};
  }
  Result<MockObservation, E> observe_output(const B& backend, const MockOutput& result) requires(
      SD == SessionDefect::kObserveOutputNotConst);

 private:
  SessionCapabilities realized_;
  std::size_t positions_ = 0;
};

// A stand-in backend for session-only tests: just the error type a session needs.
struct SessionHost {
  using error = MockError;
};

// ---- backends: BackendProvider, NeuralBackend, ParameterBackend, ModelLoadingBackend ------------

// The portable request: what to admit, and what the prepared executable will actually realize
// (tests set them apart to provoke a capability mismatch).
struct MockModelConfig {
  SessionCapabilities admitted;
  SessionCapabilities realized;
};
struct MockModel {
  SessionCapabilities realized;
};
struct ImmovableModel : Immovable {};

struct MockTensor {
  std::vector<float> values;
};
struct ImmovableTensor : Immovable {};
struct MockWeight {
  std::vector<float> values;
};
struct MockKvCache {
  std::vector<float> keys;
  std::vector<float> values;
};
struct MockParameter {
  std::optional<MockWeight> bound;
};
struct MockMaterializedWeight {
  MockWeight weight;
};
struct MockMaterializationContext {};
struct MockMaterialization {
  MockMaterializedWeight weight;
};
struct MockLoadOptions {
  SessionCapabilities required;
};
struct MockSelectedPreparation {
  std::string architecture;
};

inline constexpr OperatorCapabilities kMockOperators{OptionalOperator::kSigmoid,
                                                     OptionalOperator::kL2Norm};

struct ConstexprOperatorCapabilities {
  static constexpr OperatorCapabilities operator_capabilities = kMockOperators;
};
struct RuntimeOperatorCapabilities {
  static const OperatorCapabilities operator_capabilities;  // not a constant expression
};
struct IntegerOperatorCapabilities {
  static constexpr std::uint32_t operator_capabilities = 3;
};
struct NoOperatorCapabilities {};

enum class Defect {
  kNone,
  // variants that still satisfy every concept
  kUsesDefaultMismatch,  // no session_capability_mismatch member; error constructible from Error
  // BackendProvider
  kNoModelConfig,
  kNoModel,
  kNoSession,
  kNoError,
  kErrorWithoutWhat,
  kModelNotMovable,
  kNoDescriptor,
  kDescriptorReturnsString,
  kNoDevices,
  kDevicesReturnsBareList,
  kNoPrepareModel,
  kPrepareModelReturnsBareModel,
  kPrepareModelTakesLvalue,
  kNoCreateSession,
  kCreateSessionReturnsModel,
  kCreateSessionBorrowsModel,
  kSessionNotBackendSession,
  kNoMismatchFallback,  // no member, and an error type that cannot be built from eredu::Error
  // NeuralBackend
  kNoTensor,
  kNoWeight,
  kNoKvCache,
  kTensorNotMovable,
  kNoOperatorCapabilities,
  kOperatorCapabilitiesNotConstexpr,
  kOperatorCapabilitiesWrongType,
  kNoEmbedding,
  kEmbeddingTakesVector,
  kNoLinear,
  kLinearReturnsBareTensor,
  kNoRmsNorm,
  kNoRotary,
  kNoCreateKvCache,
  kNoAttention,
  kAttentionWithoutCache,
  kNoSwiglu,
  kNoAdd,
  kNoLogits,
  // ParameterBackend
  kNoParameter,
  kNoMaterializedWeight,
  kNoMaterializationContext,
  kNoMaterialization,
  kNoParameterError,
  kParameterErrorWithoutWhat,
  kNoPreflightRecipe,
  kPreflightRecipeNotStatic,
  kNoMaterialize,
  kMaterializeBorrowsLease,
  kMaterializeTakesLeaseByValue,  // accepted: by value consumes the lease too
  kNoMaterializeRecipe,
  kNoBorrowMaterializedWeight,
  kBorrowMaterializedWeightReturnsCopy,
  kNoFinishMaterialization,
  kNoShareMaterializedWeight,
  kNoValidateBind,
  kValidateBindReturnsBool,
  kNoBind,
  kBindNotNoexcept,
  // ModelLoadingBackend
  kNoLoadOptions,
  kNoSelectedPreparation,
  kNoPreparationPolicy,
  kNoSelectPreparation,
  kSelectPreparationReturnsBareSelection,
  kNoSessionCapabilities,
  kNoBuildModelConfig,
};

template <Defect D>
using error_for = std::conditional_t<
    D == Defect::kErrorWithoutWhat, SilentError,
    std::conditional_t<D == Defect::kNoMismatchFallback, OpaqueError, MockError>>;
template <Defect D>
using parameter_error_for =
    std::conditional_t<D == Defect::kParameterErrorWithoutWhat, SilentError, MockError>;
template <Defect D>
using model_for = std::conditional_t<D == Defect::kModelNotMovable, ImmovableModel, MockModel>;
template <Defect D>
using tensor_for = std::conditional_t<D == Defect::kTensorNotMovable, ImmovableTensor, MockTensor>;
template <Defect D>
using operator_capabilities_for = std::conditional_t<
    D == Defect::kNoOperatorCapabilities, NoOperatorCapabilities,
    std::conditional_t<
        D == Defect::kOperatorCapabilitiesNotConstexpr, RuntimeOperatorCapabilities,
        std::conditional_t<D == Defect::kOperatorCapabilitiesWrongType, IntegerOperatorCapabilities,
                           ConstexprOperatorCapabilities>>>;
constexpr SessionDefect session_defect_for(Defect d) {
  return d == Defect::kSessionNotBackendSession ? SessionDefect::kNoDecode : SessionDefect::kNone;
}

// One mock that, with D == kNone, satisfies BackendProvider, NeuralBackend, ParameterBackend and
// ModelLoadingBackend; the BackendProvider part is functional (ModelRuntime tests drive it).
template <Defect D>
class MockBackend
    : public optional_model_config<D != Defect::kNoModelConfig, MockModelConfig>,
      public optional_model<D != Defect::kNoModel, model_for<D>>,
      public optional_session<D != Defect::kNoSession,
                              MockSession<session_defect_for(D), MockBackend<D>, error_for<D>>>,
      public optional_error<D != Defect::kNoError, error_for<D>>,
      public optional_tensor<D != Defect::kNoTensor, tensor_for<D>>,
      public optional_weight<D != Defect::kNoWeight, MockWeight>,
      public optional_kv_cache<D != Defect::kNoKvCache, MockKvCache>,
      public operator_capabilities_for<D>,
      public optional_parameter<D != Defect::kNoParameter, MockParameter>,
      public optional_materialized_weight<D != Defect::kNoMaterializedWeight,
                                          MockMaterializedWeight>,
      public optional_materialization_context<D != Defect::kNoMaterializationContext,
                                              MockMaterializationContext>,
      public optional_materialization<D != Defect::kNoMaterialization, MockMaterialization>,
      public optional_parameter_error<D != Defect::kNoParameterError, parameter_error_for<D>>,
      public optional_load_options<D != Defect::kNoLoadOptions, MockLoadOptions>,
      public optional_selected_preparation<D != Defect::kNoSelectedPreparation,
                                           MockSelectedPreparation> {
  using E = error_for<D>;
  using PE = parameter_error_for<D>;
  using Model = model_for<D>;
  using Tensor = tensor_for<D>;
  using Session = MockSession<session_defect_for(D), MockBackend<D>, error_for<D>>;

 public:
  // -- BackendProvider --
  BackendDescriptor descriptor() const
      requires(D != Defect::kNoDescriptor && D != Defect::kDescriptorReturnsString) {
    return BackendDescriptor{"mock", "1.0"};
  }
  std::string descriptor() const requires(D == Defect::kDescriptorReturnsString);

  Result<std::vector<DeviceReport>, E> devices() const
      requires(D != Defect::kNoDevices && D != Defect::kDevicesReturnsBareList) {
    return std::vector<DeviceReport>{DeviceReport{DeviceDescriptor{"mock:0", "Mock", "mock", {}},
                                                  DeviceCapabilities{.exact_completion = true}}};
  }
  std::vector<DeviceReport> devices() const requires(D == Defect::kDevicesReturnsBareList);

  Result<PreparedModel<Model>, E> prepare_model(MockModelConfig&& config) const
      requires(D != Defect::kNoPrepareModel && D != Defect::kPrepareModelReturnsBareModel &&
               D != Defect::kPrepareModelTakesLvalue) {
    return PreparedModel<Model>(Model{config.realized}, config.admitted);
  }
  Result<Model, E> prepare_model(MockModelConfig&& config) const
      requires(D == Defect::kPrepareModelReturnsBareModel);
  Result<PreparedModel<Model>, E> prepare_model(MockModelConfig& config) const
      requires(D == Defect::kPrepareModelTakesLvalue);

  Result<Session, E> create_session(PreparedModel<Model>&& prepared) const
      requires(D != Defect::kNoCreateSession && D != Defect::kCreateSessionReturnsModel &&
               D != Defect::kCreateSessionBorrowsModel) {
    PreparedModelParts<Model> parts = std::move(prepared).into_parts();
    return Session(parts.model.realized);
  }
  Result<Model, E> create_session(PreparedModel<Model>&& prepared) const
      requires(D == Defect::kCreateSessionReturnsModel);
  Result<Session, E> create_session(const PreparedModel<Model>& prepared) const
      requires(D == Defect::kCreateSessionBorrowsModel);

  // The backend's own mismatch error (the customization point prefers it over the default).
  E session_capability_mismatch(const SessionCapabilities& admitted,
                                const SessionCapabilities& realized) const
      requires(D != Defect::kUsesDefaultMismatch && D != Defect::kNoMismatchFallback) {
    return E("mock backend: realized {" + describe_capabilities(realized) + "} != admitted {" +
             describe_capabilities(admitted) + "}");
  }

  // -- NeuralBackend --
  Result<Tensor, E> embedding(const MockWeight& table, std::span<const std::uint32_t> tokens) const
      requires(D != Defect::kNoEmbedding && D != Defect::kEmbeddingTakesVector);
  Result<Tensor, E> embedding(const MockWeight& table, std::vector<std::uint32_t>& tokens) const
      requires(D == Defect::kEmbeddingTakesVector);
  Result<Tensor, E> linear(const Tensor& x, const MockWeight& w) const
      requires(D != Defect::kNoLinear && D != Defect::kLinearReturnsBareTensor);
  Tensor linear(const Tensor& x, const MockWeight& w) const
      requires(D == Defect::kLinearReturnsBareTensor);
  Result<Tensor, E> rms_norm(const Tensor& x, const MockWeight& gain, const RmsNormSpec& spec) const
      requires(D != Defect::kNoRmsNorm);
  Result<Tensor, E> rotary(const Tensor& x, const RotarySpec& spec,
                           std::uint32_t first_position) const requires(D != Defect::kNoRotary);
  Result<MockKvCache, E> create_kv_cache(const KvCacheSpec& spec) const
      requires(D != Defect::kNoCreateKvCache);
  Result<Tensor, E> attention(const Tensor& q, const Tensor& k, const Tensor& v, MockKvCache& cache,
                              const AttentionSpec& spec, std::uint32_t first_position) const
      requires(D != Defect::kNoAttention && D != Defect::kAttentionWithoutCache);
  Result<Tensor, E> attention(const Tensor& q, const Tensor& k, const Tensor& v,
                              const AttentionSpec& spec, std::uint32_t first_position) const
      requires(D == Defect::kAttentionWithoutCache);
  Result<Tensor, E> swiglu(const Tensor& gate, const Tensor& up) const
      requires(D != Defect::kNoSwiglu);
  Result<Tensor, E> add(const Tensor& x, const Tensor& y) const requires(D != Defect::kNoAdd);
  Result<Tensor, E> logits(const Tensor& hidden, const MockWeight& output) const
      requires(D != Defect::kNoLogits);

  // -- ParameterBackend (static: no backend instance) --
  static Result<void, PE> preflight_recipe(
      const checkpoint::DerivedWeightRecipe& recipe,
      const checkpoint::CheckpointSource& source) requires(D != Defect::kNoPreflightRecipe &&
                                                           D != Defect::kPreflightRecipeNotStatic);
  Result<void, PE> preflight_recipe(const checkpoint::DerivedWeightRecipe& recipe,
                                    const checkpoint::CheckpointSource& source) const
      requires(D == Defect::kPreflightRecipeNotStatic);
  static Result<MockMaterialization, PE> materialize(
      checkpoint::CheckpointLease&& lease,
      const MockMaterializationContext&
          context) requires(D != Defect::kNoMaterialize && D != Defect::kMaterializeBorrowsLease &&
                            D != Defect::kMaterializeTakesLeaseByValue);
  static Result<MockMaterialization, PE> materialize(
      const checkpoint::CheckpointLease& lease,
      const MockMaterializationContext& context) requires(D == Defect::kMaterializeBorrowsLease);
  static Result<MockMaterialization, PE> materialize(
      checkpoint::CheckpointLease lease,
      const MockMaterializationContext& context) requires(D ==
                                                          Defect::kMaterializeTakesLeaseByValue);
  static Result<MockMaterialization, PE> materialize_recipe(
      const checkpoint::DerivedWeightRecipe& recipe, const checkpoint::CheckpointSource& source,
      const MockMaterializationContext& context) requires(D != Defect::kNoMaterializeRecipe);
  static const MockMaterializedWeight&
  borrow_materialized_weight(const MockMaterialization& in_flight) requires(
      D != Defect::kNoBorrowMaterializedWeight &&
      D != Defect::kBorrowMaterializedWeightReturnsCopy);
  static MockMaterializedWeight borrow_materialized_weight(
      const MockMaterialization& in_flight) requires(D ==
                                                     Defect::kBorrowMaterializedWeightReturnsCopy);
  static Result<MockMaterializedWeight, PE> finish_materialization(
      MockMaterialization&& in_flight) requires(D != Defect::kNoFinishMaterialization);
  static Result<MockMaterializedWeight, PE> share_materialized_weight(
      const MockMaterializedWeight& weight) requires(D != Defect::kNoShareMaterializedWeight);
  static Result<void, PE> validate_bind(
      const MockParameter& parameter,
      const MockMaterializedWeight& weight) requires(D != Defect::kNoValidateBind &&
                                                     D != Defect::kValidateBindReturnsBool);
  static bool validate_bind(
      const MockParameter& parameter,
      const MockMaterializedWeight& weight) requires(D == Defect::kValidateBindReturnsBool);
  static void bind(MockParameter& parameter, MockMaterializedWeight&& weight) noexcept
      requires(D != Defect::kNoBind && D != Defect::kBindNotNoexcept);
  static void bind(MockParameter& parameter,
                   MockMaterializedWeight&& weight) requires(D == Defect::kBindNotNoexcept);

  // -- ModelLoadingBackend --
  PreparationPolicy preparation_policy(const MockLoadOptions& options) const
      requires(D != Defect::kNoPreparationPolicy);
  Result<MockSelectedPreparation, E> select_preparation(const ArtifactInspection& inspection,
                                                        const MockLoadOptions& options,
                                                        const PreparationPolicy& policy) const
      requires(D != Defect::kNoSelectPreparation &&
               D != Defect::kSelectPreparationReturnsBareSelection);
  MockSelectedPreparation select_preparation(const ArtifactInspection& inspection,
                                             const MockLoadOptions& options,
                                             const PreparationPolicy& policy) const
      requires(D == Defect::kSelectPreparationReturnsBareSelection);
  SessionCapabilities session_capabilities(const ArtifactInspection& inspection,
                                           const PreparationPolicy& policy) const
      requires(D != Defect::kNoSessionCapabilities);
  Result<MockModelConfig, E> build_model_config(const ModelPreparationPlan& plan,
                                                MockSelectedPreparation&& selected) const
      requires(D != Defect::kNoBuildModelConfig);
};

using CompleteMockBackend = MockBackend<Defect::kNone>;

// ---- planning: AutomaticPlanningBackend, ExecutionPlanBackendFactory ---------------------------

struct MockDrafterPreparation {
  std::string architecture;
};
struct MockDrafter {
  std::string model;
};

enum class FactoryDefect {
  kNone,
  // AutomaticPlanningBackend
  kNoBackendId,
  kBackendIdReturnsString,
  kNoDiscoverHardware,
  kNoAdmitCandidate,
  kAdmitCandidateReturnsBool,
  // ExecutionPlanBackendFactory
  kNoBackend,
  kBackendNotModelLoading,
  kNoDrafterPreparation,
  kNoDrafter,
  kNoRealizeTarget,
  kRealizeTargetReturnsBareBackend,
  kNoRealizeDrafting,
  kRealizeDraftingWithoutArtifact,
};

template <FactoryDefect FD>
using factory_backend_for =
    std::conditional_t<FD == FactoryDefect::kBackendNotModelLoading,
                       MockBackend<Defect::kNoBuildModelConfig>, CompleteMockBackend>;

template <FactoryDefect FD>
class MockFactory
    : public optional_backend<FD != FactoryDefect::kNoBackend, factory_backend_for<FD>>,
      public optional_drafter_preparation<FD != FactoryDefect::kNoDrafterPreparation,
                                          MockDrafterPreparation>,
      public optional_drafter<FD != FactoryDefect::kNoDrafter, MockDrafter> {
  using Backend = factory_backend_for<FD>;
  using PlanningError = plan::AutomaticPlanningError;

 public:
  BackendId backend_id() const
      requires(FD != FactoryDefect::kNoBackendId && FD != FactoryDefect::kBackendIdReturnsString);
  std::string backend_id() const requires(FD == FactoryDefect::kBackendIdReturnsString);
  Result<plan::HardwareProfile, PlanningError> discover_hardware() const
      requires(FD != FactoryDefect::kNoDiscoverHardware);
  Result<plan::CandidateAdmission, PlanningError> admit_candidate(
      const ArtifactInspection& inspection, const plan::ExecutionPlan& candidate) const
      requires(FD != FactoryDefect::kNoAdmitCandidate &&
               FD != FactoryDefect::kAdmitCandidateReturnsBool);
  bool admit_candidate(const ArtifactInspection& inspection,
                       const plan::ExecutionPlan& candidate) const
      requires(FD == FactoryDefect::kAdmitCandidateReturnsBool);

  Result<plan::ExecutionPlanTarget<Backend>, PlanningError> realize_target(
      const plan::ExecutionPlan& execution_plan) const
      requires(FD != FactoryDefect::kNoRealizeTarget &&
               FD != FactoryDefect::kRealizeTargetReturnsBareBackend);
  Result<Backend, PlanningError> realize_target(const plan::ExecutionPlan& execution_plan) const
      requires(FD == FactoryDefect::kRealizeTargetReturnsBareBackend);
  Result<plan::RealizedDrafting<MockDrafter>, PlanningError> realize_drafting(
      const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<Backend>& target,
      std::optional<plan::ExternalDraftArtifact<MockDrafterPreparation>>&& external_artifact) const
      requires(FD != FactoryDefect::kNoRealizeDrafting &&
               FD != FactoryDefect::kRealizeDraftingWithoutArtifact);
  Result<plan::RealizedDrafting<MockDrafter>, PlanningError> realize_drafting(
      const plan::ExecutionPlan& execution_plan, const runtime::ModelRuntime<Backend>& target) const
      requires(FD == FactoryDefect::kRealizeDraftingWithoutArtifact);
};

using CompleteMockFactory = MockFactory<FactoryDefect::kNone>;

}  // namespace eredu::concept_tests
