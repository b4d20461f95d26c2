#pragma once
// CudaBackend: runs every registered model family (model/registry.hpp) as CUDA kernels on one
// NVIDIA GPU. A pure executor like the CPU and Vulkan backends: operators, ParameterBackend hooks,
// devices, KV storage and the three execution hooks of the generic session; admission,
// preparation and the session itself are the generic runtime's.
//
// Contracts (static_asserts at the end of this header): NeuralBackend (with the optional
// operators bias_add, head_rms_norm, rotary_frequency_factors), ParameterBackend,
// BackendProvider, ModelLoadingBackend, TextGenerationBackend, model::ModelBackend.
//
// Execution model:
//   - one CUDA stream per backend instance (a model and its sessions); every operator ENQUEUES
//     its kernel on that stream and returns at once: its output tensor is valid in stream order,
//     for later kernels, and for the host after a completion or read();
//   - device memory comes from the device's cudaMallocAsync pool (never managed memory), kept in
//     the pool when freed, so a steady decode asks the driver for nothing; a buffer is freed in
//     stream order when its last holder lets go;
//   - weights are uploaded once at materialize (packed blocks stay packed; kernels decode them;
//     vectors become F32); finish_materialization waits for the upload;
//   - a session's prefill/decode enqueues the forward pass, the copy of the logits into pinned host
//     memory and an event; its CudaCompletion waits for that event only;
//   - the KV cache lives in device memory per session (F16 or F32 as the load options say; the
//     planner, and so eredu-run, picks F16), written by a kernel inside the forward pass;
//     checkpoint() / truncate(p) as on the CPU;
//   - decode steps run as captured CUDA graphs (submit_forward below).
// One backend instance (and its sessions) is used from one thread at a time.
//
// Use:
//   auto backend = CudaBackend::create(CudaBackendOptions{});   // Result: no device -> error
//   auto runtime = eredu::runtime::load_model(std::move(*backend), "stories260K.gguf", {});
//   auto sub = runtime->prefill({1, 400, 22});
//   auto logits = runtime->observe_output(sub->output);  // waits for that forward pass

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/backends/cuda/cuda_types.hpp"
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

namespace eredu::cuda {

// What a model load asks of the CUDA backend (the same options as every backend's).
using CudaLoadOptions = runtime::LoadOptions;

// A weight's upload in flight: the weight handle and the completion of its copy.
struct CudaMaterialization {
  CudaWeight weight;
  CudaCompletion upload;
};

// The stream weights are uploaded on (the backend's own, so kernels see them in order).
struct CudaMaterializationContext {
  std::shared_ptr<CudaStream> stream;
};

class CudaBackend : public runtime::FamilyRuntimeBackend<CudaBackend>,
                    public runtime::HostSamplingTextGeneration<CudaBackend, CudaReadyCompletion> {
 public:
  // NeuralBackend
  using error = Error;
  using tensor = CudaTensor;
  using weight = CudaWeight;
  using kv_cache = CudaKvCache;
  static constexpr OperatorCapabilities operator_capabilities{
      OptionalOperator::kBiasAdd, OptionalOperator::kHeadRmsNorm,
      OptionalOperator::kRotaryFrequencyFactors};
  // ParameterBackend
  using parameter = CudaWeight;
  using materialized_weight = CudaWeight;
  using materialization_context = CudaMaterializationContext;
  using materialization = CudaMaterialization;
  using parameter_error = Error;
  static constexpr std::string_view message_name = "cuda backend";
  // The session's execution hooks (runtime::ForwardSubmitter)
  using forward_completion = CudaCompletion;

  // Opens the selected device and creates the backend's stream. kCapabilityMissing when there is
  // no driver or device; kNotFound when options.device matches none (the message lists them).
  [[nodiscard]] static Result<CudaBackend> create(const CudaBackendOptions& options = {});

  // The CUDA device ordinal the backend runs on.
  [[nodiscard]] int device_index() const noexcept;
  // Decode steps captured and replayed so far by this backend's sessions.
  [[nodiscard]] DecodeGraphStats decode_graph_stats() const noexcept;
  // The device index, the stream, its pool (complete in the backend's sources only).
  [[nodiscard]] CudaStream& stream() const noexcept { return *stream_; }
  [[nodiscard]] const std::shared_ptr<CudaStream>& stream_ptr() const noexcept { return stream_; }

  // --- NeuralBackend operators: each enqueues its kernels on the stream ---
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

  // An F32 [rows, cols] activation holding `values` (tests and tools), enqueued on the stream.
  [[nodiscard]] Result<tensor> upload(std::span<const float> values, std::size_t rows,
                                      std::size_t cols) const;
  // Waits for everything enqueued so far and copies `t` to the host (tests and tools).
  [[nodiscard]] Result<std::vector<float>> read(const tensor& t) const;
  // The completion of everything enqueued so far.
  [[nodiscard]] Result<CudaCompletion> flush() const;

  // --- ParameterBackend (static: the context names the stream) ---
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
    return CudaWeight{std::move(id), DType::kF32, std::move(shape), nullptr, 0, nullptr};
  }
  [[nodiscard]] static const weight& parameter_weight(const parameter& p) noexcept { return p; }

  // --- BackendProvider ---
  [[nodiscard]] BackendDescriptor descriptor() const;
  // Every CUDA device: id "cuda:<index>", name with compute capability, memory, capabilities.
  [[nodiscard]] Result<std::vector<DeviceReport>> devices() const;
  [[nodiscard]] materialization_context materialization_context_for_load() const {
    return materialization_context{stream_};
  }

  // --- Execution hooks of the generic session (runtime::ForwardSubmitter) ---
  // Enqueues the forward pass, the copy of its logits into pinned host memory and an event; the
  // completion waits for that event. A failure while enqueueing rolls the cache back to
  // `first_position` (kernels already enqueued write only buffers that are then dropped and KV
  // rows past the rolled-back length).
  //
  // A decode step (one token, one row of logits) runs as a CUDA graph: the pass is first run dry
  // (operators check their arguments and sign the pass, nothing is enqueued); when the session's
  // captured graph has the same signature it is replayed with this step's position and token,
  // else the pass is captured into a new graph first (src/backend/decode_graph.hpp). Any other
  // pass, a capture that fails, or EREDU_CUDA_GRAPHS=0 runs eagerly.
  template <typename Record>
  [[nodiscard]] Result<Submission<tensor, forward_completion>> submit_forward(
      kv_cache& cache, std::uint32_t first_position, Record&& record) const {
    if (decode_graphs_enabled(cache)) {
      PassGuard guard(*this, cache);  // an early return or exception leaves no capture behind
      begin_dry_run();
      auto dry = record(cache);
      EREDU_TRY(DecodePlan plan, end_dry_run(std::move(dry), cache));
      if (plan == DecodePlan::kCapture) {
        EREDU_TRY(bool capturing, begin_capture(cache));
        if (capturing) {
          auto captured = record(cache);
          EREDU_TRY(bool ready, end_capture(std::move(captured), cache));
          if (ready) plan = DecodePlan::kReplay;
        }
      }
      guard.release();
      if (plan == DecodePlan::kReplay) {
        EREDU_TRY(auto replayed, replay_decode(cache, first_position));
        if (replayed) return std::move(*replayed);
        // The graph could not be launched: it is dropped and this pass runs eagerly.
      }
    }
    auto logits = record(cache);
    if (!logits) {
      abandon_forward(cache, first_position);
      return fail(std::move(logits).error());
    }
    return finish_forward(std::move(logits).value(), cache, first_position);
  }
  // Waits for the output's forward pass and returns its logits.
  [[nodiscard]] Result<std::vector<float>> observe_forward(const tensor& logits) const;
  [[nodiscard]] static Result<void> truncate_kv_cache(kv_cache& cache, std::uint32_t position);

  [[nodiscard]] static SessionCapabilities realized_session_capabilities() noexcept {
    SessionCapabilities caps;
    caps.persistent_cache = true;
    caps.output_observation = true;
    return caps;
  }

 private:
  explicit CudaBackend(std::shared_ptr<CudaStream> stream) : stream_(std::move(stream)) {}
  // Rotary embedding, angles divided by `factors` (rotated_dims / 2 F32 values on the device)
  // when given.
  [[nodiscard]] Result<tensor> rotate(const tensor& x, const RotarySpec& spec,
                                      std::uint32_t first_position, const float* factors) const;
  static void abandon_forward(kv_cache& cache, std::uint32_t first_position) noexcept;
  // The decode-graph steps of submit_forward (src/backend/decode_graph.cpp).
  enum class DecodePlan : std::uint8_t { kEager, kReplay, kCapture };
  [[nodiscard]] bool decode_graphs_enabled(const kv_cache& cache) const noexcept;
  void begin_dry_run() const noexcept;
  // Back to eager operators; the plan for this pass, or the dry run's error (nothing ran).
  [[nodiscard]] Result<DecodePlan> end_dry_run(Result<tensor>&& dry, const kv_cache& cache) const;
  // Starts capturing the stream: false when capturing cannot start (graphs are then off for the
  // cache, and the pass runs eagerly).
  [[nodiscard]] Result<bool> begin_capture(kv_cache& cache) const;
  // Ends the capture and instantiates the graph: true when it is ready to replay, false when the
  // capture failed (logged once; the cache's passes then run eagerly).
  [[nodiscard]] Result<bool> end_capture(Result<tensor>&& captured, kv_cache& cache) const;
  // Launches the cache's graph at `first_position`; nothing when the launch fails (the graph is
  // then dropped and graphs are off for the cache: the caller runs the pass eagerly).
  [[nodiscard]] Result<std::optional<Submission<tensor, forward_completion>>> replay_decode(
      kv_cache& cache, std::uint32_t first_position) const;
  // Back to eager operators, ending a capture under way (its graph is dropped and graphs are off
  // for the cache) and restoring the cache's length: what a pass that left submit_forward early
  // (an error or an exception) leaves behind.
  void abort_pass(kv_cache& cache) const noexcept;
  class PassGuard {
   public:
    PassGuard(const CudaBackend& backend, kv_cache& cache) noexcept
        : backend_(&backend), cache_(&cache) {}
    PassGuard(const PassGuard&) = delete;
    PassGuard& operator=(const PassGuard&) = delete;
    ~PassGuard() {
      if (backend_ != nullptr) backend_->abort_pass(*cache_);
    }
    void release() noexcept { backend_ = nullptr; }

   private:
    const CudaBackend* backend_;
    kv_cache* cache_;
  };
  [[nodiscard]] Result<Submission<tensor, forward_completion>> finish_forward(
      tensor&& logits, kv_cache& cache, std::uint32_t first_position) const;
  std::shared_ptr<CudaStream> stream_;
};

// The device ordinal `options.device` names (see CudaBackendOptions): kCapabilityMissing without a
// driver or device, kNotFound (listing the devices) when it matches none.
[[nodiscard]] Result<int> select_device(const CudaBackendOptions& options);

// What devices() reports for every CUDA device, without opening a stream (kCapabilityMissing: no
// driver or device): id "cuda:<index>", the name with compute capability and multiprocessors,
// total and free memory, exact completion (events).
[[nodiscard]] Result<std::vector<DeviceReport>> discover_device_reports();

// The generic runtime's types on this backend.
using CudaModel = runtime::FamilyModel<CudaBackend>;
using CudaSession = runtime::FamilySession<CudaBackend>;

static_assert(diagnose::neural_backend<CudaBackend>());
static_assert(diagnose::parameter_backend<CudaBackend>());
static_assert(diagnose::backend_provider<CudaBackend>());
static_assert(diagnose::model_loading_backend<CudaBackend>());
static_assert(diagnose::optional_operators<CudaBackend>());
static_assert(model::ModelBackend<CudaBackend>);
static_assert(runtime::ForwardSubmitter<CudaBackend>);
static_assert(diagnose::text_generation_backend<CudaBackend>());

}  // namespace eredu::cuda
