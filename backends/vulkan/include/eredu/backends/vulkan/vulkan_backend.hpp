#pragma once
// VulkanBackend: runs every registered model family (model/registry.hpp) as GLSL compute shaders
// on one Vulkan device (NVIDIA, AMD, Intel, MoltenVK, or Mesa's llvmpipe on the CPU). A pure
// executor like the CPU backend: operators, ParameterBackend hooks, devices, KV storage and the
// three execution hooks of the generic session; admission, preparation and the session itself are
// the generic runtime's.
//
// Contracts (static_asserts at the end of this header): NeuralBackend (with the optional
// operators bias_add, head_rms_norm, rotary_frequency_factors), ParameterBackend,
// BackendProvider, ModelLoadingBackend, TextGenerationBackend, model::ModelBackend.
//
// Execution model:
//   - weights are uploaded once at materialize (staging -> device-local; packed blocks stay
//     packed and are decoded in the shaders); finish_materialization waits for the upload;
//   - every operator RECORDS its dispatch into one open command buffer held by the backend (the
//     const operators share that mutable recording through a shared context) and returns a tensor
//     whose buffer is only valid once the recording is submitted and completes; activations come
//     from the device's buffer pool and return to it when their submission is done;
//   - a session's prefill/decode uploads the token ids, records the whole forward pass and the
//     download of the logits, submits ONCE and returns a Submission whose VulkanCompletion waits
//     for that submission's timeline value only; observe_output waits and returns the logits;
//   - the KV cache is device-local per session (F32 or F16), written by a shader in the same
//     command buffer; checkpoint() / truncate(p) as on the CPU.
// One backend instance (and its sessions) is used from one thread at a time.
//
// Use:
//   auto backend = VulkanBackend::create(VulkanBackendOptions{});   // Result: no device -> error
//   auto runtime = eredu::runtime::load_model(std::move(*backend), "stories260K.gguf", {});
//   auto sub = runtime->prefill({1, 400, 22});
//   auto logits = runtime->observe_output(sub->output);  // waits for that submission

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/backends/vulkan/vulkan_types.hpp"
#include "eredu/checkpoint/lease.hpp"
#include "eredu/checkpoint/recipe.hpp"
#include "eredu/checkpoint/source.hpp"
#include "eredu/core/capabilities.hpp"
#include "eredu/core/completion.hpp"
#include "eredu/core/concepts.hpp"
#include "eredu/core/descriptors.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/core/text_generation.hpp"
#include "eredu/runtime/family_backend.hpp"
#include "eredu/runtime/host_sampling.hpp"

namespace eredu::vulkan {

class VulkanContext;  // the device and the open recording (src/backend/context.hpp)
// What a model load asks of the Vulkan backend (the same options as every backend's).
using VulkanLoadOptions = runtime::LoadOptions;

// A weight's upload in flight: the weight handle and the completion of its staging copy.
struct VulkanMaterialization {
  VulkanWeight weight;
  Completion upload;
};
class VulkanPipelines;  // the backend's resolved pipelines (src/backend/pipelines.hpp)

// The device weights are uploaded to, and (when loading through a backend) its pipelines: the
// matmul / embed variant of each weight's encoding is resolved when the weight is materialized,
// so that no dispatch ever looks one up.
struct VulkanMaterializationContext {
  std::shared_ptr<Device> device;
  VulkanPipelines* pipelines = nullptr;
};

class VulkanBackend
    : public runtime::FamilyRuntimeBackend<VulkanBackend>,
      public runtime::HostSamplingTextGeneration<VulkanBackend, VulkanReadyCompletion> {
 public:
  // NeuralBackend
  using error = Error;
  using tensor = VulkanTensor;
  using weight = VulkanWeight;
  using kv_cache = VulkanKvCache;
  static constexpr OperatorCapabilities operator_capabilities{
      OptionalOperator::kBiasAdd, OptionalOperator::kHeadRmsNorm,
      OptionalOperator::kRotaryFrequencyFactors};
  // ParameterBackend
  using parameter = VulkanWeight;
  using materialized_weight = VulkanWeight;
  using materialization_context = VulkanMaterializationContext;
  using materialization = VulkanMaterialization;
  using parameter_error = Error;
  // BackendProvider (model_config, model, session) and ModelLoadingBackend (load_options,
  // selected_preparation) types and members: runtime::FamilyRuntimeBackend.
  static constexpr std::string_view message_name = "vulkan backend";
  // The session's execution hooks (runtime::ForwardSubmitter)
  using forward_completion = VulkanCompletion;
  // TextGenerationBackend: text_prompt, text_token, text_state, text_completion and the
  // operations come from runtime::HostSamplingTextGeneration (the sampler runs on the host).

  // Opens the Vulkan instance and the selected device. kCapabilityMissing when there is no Vulkan
  // driver or usable device; kNotFound when options.device matches none (the message lists them).
  [[nodiscard]] static Result<VulkanBackend> create(const VulkanBackendOptions& options = {});
  // A backend on an already opened device (tests share one device under the validation layer).
  [[nodiscard]] static Result<VulkanBackend> on_device(std::shared_ptr<Device> device);

  [[nodiscard]] Device& device() const noexcept;
  [[nodiscard]] const std::shared_ptr<Device>& device_ptr() const noexcept;

  // --- NeuralBackend operators: each records into the open command buffer ---
  [[nodiscard]] Result<tensor> embedding(const weight& table,
                                         std::span<const std::uint32_t> tokens) const;
  [[nodiscard]] Result<tensor> linear(const tensor& x, const weight& w) const;
  [[nodiscard]] Result<tensor> rms_norm(const tensor& x, const weight& gain,
                                        const RmsNormSpec& spec) const;
  [[nodiscard]] Result<tensor> rotary(const tensor& x, const RotarySpec& spec,
                                      std::uint32_t first_position) const;
  [[nodiscard]] Result<kv_cache> create_kv_cache(const KvCacheSpec& spec) const;
  [[nodiscard]] Result<kv_cache> create_kv_cache_of(const KvCacheSpec& spec,
                                                    KvCacheType type) const;
  [[nodiscard]] Result<tensor> attention(const tensor& q, const tensor& k, const tensor& v,
                                         kv_cache& cache, const AttentionSpec& spec,
                                         std::uint32_t first_position) const;
  [[nodiscard]] Result<tensor> swiglu(const tensor& gate, const tensor& up) const;
  [[nodiscard]] Result<tensor> add(const tensor& a, const tensor& b) const;
  [[nodiscard]] Result<tensor> logits(const tensor& hidden, const weight& output) const;
  // Optional operators (optional_operators.hpp).
  [[nodiscard]] Result<tensor> add_bias(const tensor& x, const weight& bias) const;
  [[nodiscard]] Result<tensor> head_rms_norm(const tensor& x, const weight& gain,
                                             const RmsNormSpec& spec) const;
  [[nodiscard]] Result<tensor> rotary_scaled(const tensor& x, const RotarySpec& spec,
                                             std::uint32_t first_position,
                                             const weight& factors) const;

  // Submits what is recorded so far (a completion of nothing when nothing is), for callers that
  // drive the operators directly.
  [[nodiscard]] Result<VulkanCompletion> flush() const;
  // Submits what is recorded, waits, and downloads `t` (tests and tools).
  [[nodiscard]] Result<std::vector<float>> read(const tensor& t) const;
  // Drops what is recorded and not yet submitted (after a failed forward pass).
  void abandon() const noexcept;
  // The dispatches recorded into the open command buffer so far.
  [[nodiscard]] std::size_t recorded_dispatches() const noexcept;

  // --- ParameterBackend (static: the context names the device) ---
  [[nodiscard]] static Result<void> preflight_recipe(const checkpoint::DerivedWeightRecipe& recipe,
                                                     const checkpoint::CheckpointSource& source);
  [[nodiscard]] static Result<materialization> materialize(checkpoint::CheckpointLease&& lease,
                                                           const materialization_context& context);
  [[nodiscard]] static Result<materialization> materialize_recipe(
      const checkpoint::DerivedWeightRecipe& recipe, const checkpoint::CheckpointSource& source,
      const materialization_context& context);
  [[nodiscard]] static const materialized_weight& borrow_materialized_weight(
      const materialization& in_flight) noexcept {
    return in_flight.weight;
  }
  // Waits for the weight's upload (a failed upload, e.g. a lost device, is its error).
  [[nodiscard]] static Result<materialized_weight> finish_materialization(
      materialization&& in_flight);
  [[nodiscard]] static Result<materialized_weight> share_materialized_weight(
      const materialized_weight& w) {
    return w;  // shares the device buffer
  }
  [[nodiscard]] static Result<void> validate_bind(const parameter& slot,
                                                  const materialized_weight& w);
  static void bind(parameter& slot, materialized_weight&& w) noexcept {
    slot.dtype = w.dtype;
    slot.bytes = w.bytes;
    slot.buffer = std::move(w.buffer);
    slot.host_values = std::move(w.host_values);
  }
  [[nodiscard]] static parameter declare_parameter(std::string id,
                                                   std::vector<std::uint64_t> shape) {
    return VulkanWeight{std::move(id), DType::kF32, std::move(shape), nullptr, 0, nullptr};
  }
  [[nodiscard]] static const weight& parameter_weight(const parameter& p) noexcept { return p; }

  // --- BackendProvider ---
  [[nodiscard]] BackendDescriptor descriptor() const;
  // Every physical device: id "vulkan:<index>", name, type, memory, capabilities.
  [[nodiscard]] Result<std::vector<DeviceReport>> devices() const;
  [[nodiscard]] materialization_context materialization_context_for_load() const {
    return materialization_context{device_ptr(), &pipelines()};
  }

  // --- Execution hooks of the generic session (runtime::ForwardSubmitter) ---
  // Records the forward pass into the open command buffer, appends the download of the logits
  // and submits once; the completion waits for that submission only. A failure while recording
  // or submitting drops the recording and rolls the cache back to `first_position`.
  template <typename Record>
  [[nodiscard]] Result<Submission<tensor, forward_completion>> submit_forward(
      kv_cache& cache, std::uint32_t first_position, Record&& record) const {
    EREDU_TRY_VOID(begin_forward());
    auto logits = record(cache);
    if (!logits) {
      abandon_forward(cache, first_position);
      return fail(std::move(logits).error());
    }
    return finish_forward(std::move(logits).value(), cache, first_position);
  }
  // Waits for the output's submission and returns its logits.
  [[nodiscard]] Result<std::vector<float>> observe_forward(const tensor& logits) const;
  [[nodiscard]] static Result<void> truncate_kv_cache(kv_cache& cache, std::uint32_t position);

  [[nodiscard]] static SessionCapabilities realized_session_capabilities() noexcept {
    SessionCapabilities caps;
    caps.persistent_cache = true;
    caps.output_observation = true;
    return caps;
  }

  [[nodiscard]] VulkanContext& context() const noexcept { return *context_; }
  [[nodiscard]] VulkanPipelines& pipelines() const noexcept;

 private:
  explicit VulkanBackend(std::shared_ptr<VulkanContext> context) : context_(std::move(context)) {}
  // Rotary embedding, angles divided by `factors` (rotated_dims / 2 values) when given.
  [[nodiscard]] Result<tensor> rotate(const tensor& x, const RotarySpec& spec,
                                      std::uint32_t first_position, const float* factors) const;
  // submit_forward's steps: submit what direct operator calls recorded (it is not this pass's);
  // drop the recording and roll the cache back; record the logits' download and submit.
  [[nodiscard]] Result<void> begin_forward() const;
  void abandon_forward(kv_cache& cache, std::uint32_t first_position) const noexcept;
  [[nodiscard]] Result<Submission<tensor, forward_completion>> finish_forward(
      tensor&& logits, kv_cache& cache, std::uint32_t first_position) const;
  std::shared_ptr<VulkanContext> context_;
};

// What devices() reports for these devices: id "vulkan:<index>", the name with type, API
// version, subgroup size and features, device-local memory, and exact completion where usable.
[[nodiscard]] std::vector<DeviceReport> device_reports(std::span<const DeviceInfo> infos);
// The same for every physical device, without opening one (kCapabilityMissing: no driver).
[[nodiscard]] Result<std::vector<DeviceReport>> discover_device_reports();

// The generic runtime's types on this backend, under the names earlier code used.
using VulkanModel = runtime::FamilyModel<VulkanBackend>;
using VulkanSession = runtime::FamilySession<VulkanBackend>;

static_assert(diagnose::neural_backend<VulkanBackend>());
static_assert(diagnose::parameter_backend<VulkanBackend>());
static_assert(diagnose::backend_provider<VulkanBackend>());
static_assert(diagnose::model_loading_backend<VulkanBackend>());
static_assert(diagnose::optional_operators<VulkanBackend>());
static_assert(model::ModelBackend<VulkanBackend>);
static_assert(runtime::ForwardSubmitter<VulkanBackend>);
static_assert(diagnose::text_generation_backend<VulkanBackend>());

}  // namespace eredu::vulkan
