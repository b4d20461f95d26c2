#pragma once
// VulkanBackend: runs the llama family (GGUF `llama`, `mistral`) as GLSL compute shaders on one
// Vulkan device (NVIDIA, AMD, Intel, MoltenVK, or Mesa's llvmpipe on the CPU).
//
// Contracts (static_asserts at the end of this header): NeuralBackend, ParameterBackend,
// BackendProvider, ModelLoadingBackend, TextGenerationBackend, model::llama::LlamaBackend.
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
#include "eredu/model/llama/config.hpp"
#include "eredu/model/llama/model.hpp"
#include "eredu/model/llama/schema.hpp"
#include "eredu/runtime/host_sampling.hpp"

namespace eredu::vulkan {

class VulkanContext;  // the device and the open recording (src/backend/context.hpp)
struct VulkanModel;
struct VulkanModelConfig;
struct VulkanSelectedPreparation;
class VulkanSession;

// A weight's upload in flight: the weight handle and the completion of its staging copy.
struct VulkanMaterialization {
  VulkanWeight weight;
  Completion upload;
};
// The device weights are uploaded to.
struct VulkanMaterializationContext {
  std::shared_ptr<Device> device;
};

class VulkanBackend
    : public runtime::HostSamplingTextGeneration<VulkanBackend, VulkanReadyCompletion> {
 public:
  // NeuralBackend
  using error = Error;
  using tensor = VulkanTensor;
  using weight = VulkanWeight;
  using kv_cache = VulkanKvCache;
  static constexpr OperatorCapabilities operator_capabilities{};
  // ParameterBackend
  using parameter = VulkanWeight;
  using materialized_weight = VulkanWeight;
  using materialization_context = VulkanMaterializationContext;
  using materialization = VulkanMaterialization;
  using parameter_error = Error;
  // BackendProvider
  using model_config = VulkanModelConfig;
  using model = VulkanModel;
  using session = VulkanSession;
  // ModelLoadingBackend
  using load_options = VulkanLoadOptions;
  using selected_preparation = VulkanSelectedPreparation;
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
  }
  [[nodiscard]] static parameter declare_parameter(std::string id,
                                                   std::vector<std::uint64_t> shape) {
    return VulkanWeight{std::move(id), DType::kF32, std::move(shape), nullptr, 0};
  }
  [[nodiscard]] static const weight& parameter_weight(const parameter& p) noexcept { return p; }

  // --- BackendProvider ---
  [[nodiscard]] BackendDescriptor descriptor() const;
  // Every physical device: id "vulkan:<index>", name, type, memory, capabilities.
  [[nodiscard]] Result<std::vector<DeviceReport>> devices() const;
  [[nodiscard]] Result<PreparedModel<model>> prepare_model(model_config&& config) const;
  [[nodiscard]] Result<session> create_session(PreparedModel<model>&& prepared) const;

  // --- ModelLoadingBackend ---
  [[nodiscard]] PreparationPolicy preparation_policy(const load_options& options) const;
  [[nodiscard]] Result<selected_preparation> select_preparation(
      const ArtifactInspection& inspection, const load_options& options,
      const PreparationPolicy& policy) const;
  [[nodiscard]] SessionCapabilities session_capabilities(const ArtifactInspection& inspection,
                                                         const PreparationPolicy& policy) const;
  [[nodiscard]] Result<model_config> build_model_config(const ModelPreparationPlan& plan,
                                                        selected_preparation&& selected) const;

  [[nodiscard]] static SessionCapabilities realized_session_capabilities() noexcept {
    SessionCapabilities caps;
    caps.persistent_cache = true;
    caps.output_observation = true;
    return caps;
  }

  [[nodiscard]] VulkanContext& context() const noexcept { return *context_; }

 private:
  explicit VulkanBackend(std::shared_ptr<VulkanContext> context) : context_(std::move(context)) {}
  std::shared_ptr<VulkanContext> context_;
};

// What devices() reports for these devices: id "vulkan:<index>", the name with type, API
// version, subgroup size and features, device-local memory, and exact completion where usable.
[[nodiscard]] std::vector<DeviceReport> device_reports(std::span<const DeviceInfo> infos);
// The same for every physical device, without opening one (kCapabilityMissing: no driver).
[[nodiscard]] Result<std::vector<DeviceReport>> discover_device_reports();

// The materialized llama model and the session geometry chosen at load.
struct VulkanModel {
  std::shared_ptr<const ::eredu::model::llama::LlamaModel<VulkanBackend>> llama;
  std::uint32_t max_positions = 0;
  KvCacheType kv_cache_type = KvCacheType::kF32;
};

struct VulkanSelectedPreparation {
  ::eredu::model::llama::LlamaConfig config;
  std::vector<::eredu::model::llama::ParameterSchema> schema;
  std::uint32_t max_positions = 0;
  KvCacheType kv_cache_type = KvCacheType::kF32;
};

struct VulkanModelConfig {
  VulkanSelectedPreparation selected;
  std::shared_ptr<const checkpoint::CheckpointSource> source;
  SessionCapabilities admitted;
};

// One session: the model, its device KV cache and the number of cached positions.
class VulkanSession {
 public:
  using prefill_input = std::vector<std::uint32_t>;
  using decode_input = std::uint32_t;
  using output = VulkanTensor;             // the last token's logits [1, n_vocab]
  using observation = std::vector<float>;  // those logits on the host
  using completion = VulkanCompletion;

  VulkanSession(VulkanModel model, VulkanKvCache cache)
      : model_(std::move(model)), cache_(std::move(cache)) {}

  [[nodiscard]] SessionCapabilities capabilities() const noexcept {
    return VulkanBackend::realized_session_capabilities();
  }
  // Records the forward pass of `tokens` at the next positions and submits it once. Rejected
  // before anything is recorded (state unchanged): an empty input, a token id >= n_vocab, or more
  // positions than the cache holds. A failure while recording leaves the session as it was.
  [[nodiscard]] Result<Submission<output, completion>> prefill(const VulkanBackend& backend,
                                                               prefill_input&& tokens);
  [[nodiscard]] Result<Submission<output, completion>> decode(const VulkanBackend& backend,
                                                              decode_input&& token);
  // Waits for the output's submission and returns its logits.
  [[nodiscard]] Result<observation> observe_output(const VulkanBackend& backend,
                                                   const output& out) const;

  [[nodiscard]] std::uint32_t checkpoint() const noexcept { return position_; }
  // Forgets every position >= `position` (which must be <= checkpoint()).
  [[nodiscard]] Result<void> truncate(std::uint32_t position);
  [[nodiscard]] std::uint32_t max_positions() const noexcept { return model_.max_positions; }
  [[nodiscard]] const ::eredu::model::llama::LlamaConfig& config() const noexcept {
    return model_.llama->config();
  }

 private:
  VulkanModel model_;
  VulkanKvCache cache_;
  std::uint32_t position_ = 0;
};

static_assert(diagnose::neural_backend<VulkanBackend>());
static_assert(diagnose::parameter_backend<VulkanBackend>());
static_assert(diagnose::backend_provider<VulkanBackend>());
static_assert(diagnose::model_loading_backend<VulkanBackend>());
static_assert(::eredu::model::llama::LlamaBackend<VulkanBackend>);
static_assert(diagnose::text_generation_backend<VulkanBackend>());

}  // namespace eredu::vulkan
