#pragma once
// CpuBackend: the default backend. Runs every registered model family (model/registry.hpp) on
// the host with the dispatched kernels of kernels.hpp (scalar / AVX2, chosen once from cpuid) over
// a thread pool owned by the backend instance (CpuBackendOptions::threads). It is a pure executor:
// its operators, its ParameterBackend hooks, its device report and its KV storage; admission,
// preparation and the session are the generic runtime's (runtime/family_model.hpp,
// runtime/family_session.hpp), so nothing here names a family.
//
// Contracts (static_asserts at the end of this header): BackendProvider, NeuralBackend (with the
// optional operators bias_add, head_rms_norm, rotary_frequency_factors), ParameterBackend,
// ModelLoadingBackend, TextGenerationBackend.
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
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/backends/cpu/cpu_types.hpp"
#include "eredu/backends/cpu/huge_pages.hpp"
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
#include "eredu/runtime/family_backend.hpp"
#include "eredu/runtime/host_sampling.hpp"

namespace eredu::cpu {

// What a model load asks of the CPU backend (the same options as every backend's).
using CpuLoadOptions = runtime::LoadOptions;

// The in-flight materialization of one weight. The CPU realizes synchronously: the lease's packed
// bytes are copied as they are and the lease is released before materialize returns.
struct CpuMaterialization {
  CpuWeight weight;
};
// What materialize may use beyond the lease: the backend's threads, which lay weights out in the
// kernel table's row groups (KernelTable::row_group_bytes) in parallel; null: the calling thread.
struct CpuMaterializationContext {
  ThreadPool* pool = nullptr;  // packs row groups on the backend's threads
  bool rows_only = false;      // an embedding table only read by rows: no row groups
  // When row groups are advised into huge pages (huge_pages.hpp); unset: the process's choice,
  // weights_huge_page_advice().
  std::optional<HugePageAdvice> huge_pages = std::nullopt;
};

class CpuBackend : public runtime::FamilyRuntimeBackend<CpuBackend>,
                   public runtime::HostSamplingTextGeneration<CpuBackend, CpuReadyCompletion> {
 public:
  // NeuralBackend
  using error = Error;
  using tensor = CpuTensor;
  using weight = CpuWeight;
  using kv_cache = CpuKvCache;
  static constexpr OperatorCapabilities operator_capabilities{
      OptionalOperator::kBiasAdd, OptionalOperator::kHeadRmsNorm,
      OptionalOperator::kRotaryFrequencyFactors, OptionalOperator::kSharedInputLinear};
  // ParameterBackend
  using parameter = CpuWeight;
  using materialized_weight = CpuWeight;
  using materialization_context = CpuMaterializationContext;
  using materialization = CpuMaterialization;
  using parameter_error = Error;
  // BackendProvider (model_config, model, session) and ModelLoadingBackend (load_options,
  // selected_preparation) types and members: runtime::FamilyRuntimeBackend.
  static constexpr std::string_view message_name = "cpu backend";
  // The session's execution hooks (runtime::ForwardSubmitter)
  using forward_completion = CpuReadyCompletion;
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
  // Optional operators (optional_operators.hpp).
  [[nodiscard]] Result<tensor> add_bias(const tensor& x, const weight& bias) const;
  [[nodiscard]] Result<tensor> head_rms_norm(const tensor& x, const weight& gain,
                                             const RmsNormSpec& spec) const;
  [[nodiscard]] Result<tensor> rotary_scaled(const tensor& x, const RotarySpec& spec,
                                             std::uint32_t first_position,
                                             const weight& factors) const;
  // The activation's forms made once for every weight, and for one token every weight's rows in
  // one pool job (KernelTable::matmul_shared_input).
  [[nodiscard]] Result<std::vector<tensor>> linear_shared_input(
      const tensor& x, std::span<const weight* const> ws) const;

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
    slot.bytes = w.bytes;
    slot.row_group_storage = std::move(w.row_group_storage);
    slot.row_groups = w.row_groups;
  }
  // For the families' models (model::ModelBackend).
  [[nodiscard]] static parameter declare_parameter(std::string id,
                                                   std::vector<std::uint64_t> shape) {
    return CpuWeight{std::move(id), DType::kF32, std::move(shape), nullptr, {}, nullptr, {}};
  }
  [[nodiscard]] static const weight& parameter_weight(const parameter& p) noexcept { return p; }

  // --- BackendProvider ---
  [[nodiscard]] BackendDescriptor descriptor() const;
  [[nodiscard]] Result<std::vector<DeviceReport>> devices() const;
  [[nodiscard]] materialization_context materialization_context_for_load() const noexcept {
    return {pool_.get()};
  }

  // --- Execution hooks of the generic session (runtime::ForwardSubmitter) ---
  // The CPU runs the forward pass to completion here; its completion is born complete. A failed
  // pass leaves rows past `first_position` in the cache, which the session's position ignores.
  template <typename Record>
  [[nodiscard]] Result<Submission<tensor, forward_completion>> submit_forward(
      kv_cache& cache, std::uint32_t /*first_position*/, Record&& record) const {
    EREDU_TRY(tensor logits, record(cache));
    return Submission<tensor, forward_completion>{std::move(logits), forward_completion{}};
  }
  [[nodiscard]] Result<std::vector<float>> observe_forward(const tensor& logits) const;
  // Positions past the session's are never read, so there is nothing to clear.
  [[nodiscard]] static Result<void> truncate_kv_cache(kv_cache&, std::uint32_t) { return ok(); }

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

// The generic runtime's types on this backend, under the names earlier code used.
using CpuModel = runtime::FamilyModel<CpuBackend>;
using CpuSession = runtime::FamilySession<CpuBackend>;

static_assert(diagnose::neural_backend<CpuBackend>());
static_assert(diagnose::parameter_backend<CpuBackend>());
static_assert(diagnose::backend_provider<CpuBackend>());
static_assert(diagnose::model_loading_backend<CpuBackend>());
static_assert(diagnose::optional_operators<CpuBackend>());
static_assert(model::ModelBackend<CpuBackend>);
static_assert(runtime::ForwardSubmitter<CpuBackend>);
static_assert(diagnose::text_generation_backend<CpuBackend>());

}  // namespace eredu::cpu
