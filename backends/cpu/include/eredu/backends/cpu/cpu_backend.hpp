#pragma once
// CpuBackend: the default backend. Runs the llama family (GGUF `llama`, `mistral`) on the host
// with the dispatched kernels of kernels.hpp (scalar / AVX2, chosen once from cpuid) over a thread
// pool owned by the backend instance (CpuBackendOptions::threads).
//
// Contracts (static_asserts at the end of this header): BackendProvider, NeuralBackend,
// ParameterBackend, ModelLoadingBackend.
//
// Use (see eredu/runtime/load_model.hpp for the whole pipeline):
//   auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{.threads = 2}),
//                                             "stories260K.gguf", CpuLoadOptions{});
//   auto sub = runtime->prefill({1, 400, 22});           // Submission<CpuTensor, completion>
//   auto logits = runtime->observe_output(sub->output);  // std::vector<float> of n_vocab
//   auto next = runtime->decode(std::uint32_t{42});       // one token at the next position
// Sessions own their KV cache; `checkpoint()` returns the current position and `truncate(p)`
// rolls the cache back to p positions (e.g. to re-run from a prefix).
//
// Completion: the CPU computes synchronously, so prefill/decode return after the work is done and
// their completion (CpuReadyCompletion) is born complete.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_types.hpp"
#include "eredu/backends/cpu/thread_pool.hpp"
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

namespace eredu::cpu {

struct CpuModel;
struct CpuModelConfig;
struct CpuSelectedPreparation;
class CpuSession;

// The in-flight materialization of one weight. The CPU realizes synchronously: the lease's packed
// bytes are copied as they are and the lease is released before materialize returns.
struct CpuMaterialization {
  CpuWeight weight;
};
struct CpuMaterializationContext {};

class CpuBackend : public runtime::HostSamplingTextGeneration<CpuBackend, CpuReadyCompletion> {
 public:
  // NeuralBackend
  using error = Error;
  using tensor = CpuTensor;
  using weight = CpuWeight;
  using kv_cache = CpuKvCache;
  static constexpr OperatorCapabilities operator_capabilities{};
  // ParameterBackend
  using parameter = CpuWeight;
  using materialized_weight = CpuWeight;
  using materialization_context = CpuMaterializationContext;
  using materialization = CpuMaterialization;
  using parameter_error = Error;
  // BackendProvider
  using model_config = CpuModelConfig;
  using model = CpuModel;
  using session = CpuSession;
  // ModelLoadingBackend
  using load_options = CpuLoadOptions;
  using selected_preparation = CpuSelectedPreparation;
  // TextGenerationBackend: text_prompt, text_token, text_state, text_completion and the
  // operations come from runtime::HostSamplingTextGeneration (the sampler runs on the host).

  explicit CpuBackend(CpuBackendOptions options = {});

  [[nodiscard]] std::size_t threads() const noexcept { return pool_->size(); }
  [[nodiscard]] ThreadPool* pool() const noexcept { return pool_.get(); }

  // --- NeuralBackend operators (see neural_backend.hpp) ---
  [[nodiscard]] Result<tensor> embedding(const weight& table,
                                         std::span<const std::uint32_t> tokens) const;
  [[nodiscard]] Result<tensor> linear(const tensor& x, const weight& w) const;
  [[nodiscard]] Result<tensor> rms_norm(const tensor& x, const weight& gain,
                                        const RmsNormSpec& spec) const;
  [[nodiscard]] Result<tensor> rotary(const tensor& x, const RotarySpec& spec,
                                      std::uint32_t first_position) const;
  // An F32 cache; create_kv_cache_of picks the element type.
  [[nodiscard]] Result<kv_cache> create_kv_cache(const KvCacheSpec& spec) const;
  [[nodiscard]] Result<kv_cache> create_kv_cache_of(const KvCacheSpec& spec,
                                                    KvCacheType type) const;
  [[nodiscard]] Result<tensor> attention(const tensor& q, const tensor& k, const tensor& v,
                                         kv_cache& cache, const AttentionSpec& spec,
                                         std::uint32_t first_position) const;
  [[nodiscard]] Result<tensor> swiglu(const tensor& gate, const tensor& up) const;
  [[nodiscard]] Result<tensor> add(const tensor& a, const tensor& b) const;
  [[nodiscard]] Result<tensor> logits(const tensor& hidden, const weight& output) const;

  // --- ParameterBackend (static: no instance needed) ---
  // Metadata only: the recipe must be a whole-tensor Source whose encoding the kernels read.
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
  [[nodiscard]] static Result<materialized_weight> finish_materialization(
      materialization&& in_flight) {
    return std::move(in_flight.weight);
  }
  [[nodiscard]] static Result<materialized_weight> share_materialized_weight(
      const materialized_weight& w) {
    return w;  // shares the storage (shared_ptr), no re-read
  }
  // The weight must hold storage, have the slot's shape, and an encoding the kernels read (norm
  // vectors: F32/F16/BF16).
  [[nodiscard]] static Result<void> validate_bind(const parameter& slot,
                                                  const materialized_weight& w);
  static void bind(parameter& slot, materialized_weight&& w) noexcept {
    slot.dtype = w.dtype;
    slot.storage = std::move(w.storage);
  }
  // For the llama model (LlamaBackend).
  [[nodiscard]] static parameter declare_parameter(std::string id,
                                                   std::vector<std::uint64_t> shape) {
    return CpuWeight{std::move(id), DType::kF32, std::move(shape), nullptr};
  }
  [[nodiscard]] static const weight& parameter_weight(const parameter& p) noexcept { return p; }

  // --- BackendProvider ---
  [[nodiscard]] BackendDescriptor descriptor() const;
  [[nodiscard]] Result<std::vector<DeviceReport>> devices() const;
  // Declares the model, preflights every recipe (metadata only), materializes all weights
  // (one bounded lease at a time), validates every binding and then binds all.
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

  // What a CPU session realizes: a persistent KV cache and host-readable outputs.
  [[nodiscard]] static SessionCapabilities realized_session_capabilities() noexcept {
    SessionCapabilities caps;
    caps.persistent_cache = true;
    caps.output_observation = true;
    return caps;
  }

 private:
  std::shared_ptr<ThreadPool> pool_;
};

// The materialized llama model and the session geometry chosen at load.
struct CpuModel {
  std::shared_ptr<const ::eredu::model::llama::LlamaModel<CpuBackend>> llama;
  std::uint32_t max_positions = 0;
  KvCacheType kv_cache_type = KvCacheType::kF32;
};

// What select_preparation admitted (header-only facts + load options).
struct CpuSelectedPreparation {
  ::eredu::model::llama::LlamaConfig config;
  std::vector<::eredu::model::llama::ParameterSchema> schema;
  std::uint32_t max_positions = 0;
  KvCacheType kv_cache_type = KvCacheType::kF32;
};

// The input of prepare_model: the admitted preparation and the source its weights come from.
struct CpuModelConfig {
  CpuSelectedPreparation selected;
  std::shared_ptr<const checkpoint::CheckpointSource> source;
  SessionCapabilities admitted;
};

// One session: the model, its KV cache and the number of cached positions.
class CpuSession {
 public:
  using prefill_input = std::vector<std::uint32_t>;
  using decode_input = std::uint32_t;
  using output = CpuTensor;                // the last token's logits [1, n_vocab]
  using observation = std::vector<float>;  // those logits on the host
  using completion = CpuReadyCompletion;

  CpuSession(CpuModel model, CpuKvCache cache)
      : model_(std::move(model)), cache_(std::move(cache)) {}

  [[nodiscard]] SessionCapabilities capabilities() const noexcept {
    return CpuBackend::realized_session_capabilities();
  }
  // Runs the tokens at the next positions. Rejected before any compute (state unchanged): an empty
  // input, a token id >= n_vocab, or more positions than the cache holds.
  [[nodiscard]] Result<Submission<output, completion>> prefill(const CpuBackend& backend,
                                                               prefill_input&& tokens);
  [[nodiscard]] Result<Submission<output, completion>> decode(const CpuBackend& backend,
                                                              decode_input&& token);
  [[nodiscard]] Result<observation> observe_output(const CpuBackend& backend,
                                                   const output& out) const;

  // Cached positions so far.
  [[nodiscard]] std::uint32_t checkpoint() const noexcept { return position_; }
  // Forgets every position >= `position` (which must be <= checkpoint()).
  [[nodiscard]] Result<void> truncate(std::uint32_t position);
  [[nodiscard]] std::uint32_t max_positions() const noexcept { return model_.max_positions; }
  [[nodiscard]] const ::eredu::model::llama::LlamaConfig& config() const noexcept {
    return model_.llama->config();
  }

 private:
  CpuModel model_;
  CpuKvCache cache_;
  std::uint32_t position_ = 0;
};

static_assert(diagnose::neural_backend<CpuBackend>());
static_assert(diagnose::parameter_backend<CpuBackend>());
static_assert(diagnose::backend_provider<CpuBackend>());
static_assert(diagnose::model_loading_backend<CpuBackend>());
static_assert(::eredu::model::llama::LlamaBackend<CpuBackend>);
static_assert(diagnose::text_generation_backend<CpuBackend>());

}  // namespace eredu::cpu
