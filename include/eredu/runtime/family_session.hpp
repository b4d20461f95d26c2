#pragma once
// FamilySession<B>: one session of any registered family on backend B, written once: positions,
// the KV cache, input checks, checkpoint/truncate. What differs between backends is how a forward
// pass is submitted, so B provides three execution hooks (ForwardSubmitter<B>):
//
//   b.submit_forward(cache, first_position, record) -> Result<Submission<tensor, completion>>
//       runs / records `record(cache) -> Result<tensor>` (the family's forward pass) and submits
//       it; on failure the cache holds no position >= first_position and the backend stays usable;
//   b.observe_forward(const tensor& logits) -> Result<std::vector<float>>
//       the logits of a submission on the host (waits for that submission only);
//   B::truncate_kv_cache(cache, position) -> Result<void>   (static)
//       forgets cached positions >= position;
// plus B::forward_completion (the completion submit_forward returns) and
// b.create_kv_cache_of(KvCacheSpec, KvCacheType).
//
// An input is rejected before anything runs (state unchanged): no tokens, a token id >= n_vocab,
// or more positions than the cache holds.

#include <concepts>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "eredu/core/capabilities.hpp"
#include "eredu/core/completion.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/prepared_model.hpp"
#include "eredu/model/admission.hpp"
#include "eredu/model/logit_rows.hpp"
#include "eredu/runtime/family_model.hpp"

namespace eredu::runtime {

// A stand-in for the forward pass in the hook's signature (any callable of this shape is passed).
template <typename B>
struct ForwardRecordProbe {
  Result<typename B::tensor> operator()(typename B::kv_cache&) const;
};

template <typename B>
concept ForwardSubmitter = model::ModelBackend<B> && requires {
  typename B::forward_completion;
} && requires(const B& b, typename B::kv_cache& cache, const typename B::tensor& t,
              std::uint32_t position, ForwardRecordProbe<B> record, const KvCacheSpec& spec,
              KvCacheType type) {
  {
    b.submit_forward(cache, position, record)
    } -> std::same_as<Result<Submission<typename B::tensor, typename B::forward_completion>>>;
  { b.observe_forward(t) } -> std::same_as<Result<std::vector<float>>>;
  { B::truncate_kv_cache(cache, position) } -> std::same_as<Result<void>>;
  { b.create_kv_cache_of(spec, type) } -> std::same_as<Result<typename B::kv_cache>>;
};

template <typename B>
class FamilySession {
 public:
  using prefill_input = std::vector<std::uint32_t>;
  using decode_input = std::uint32_t;
  using output = typename B::tensor;       // the last token's logits [1, n_vocab]
  using observation = std::vector<float>;  // those logits on the host
  using completion = typename B::forward_completion;

  FamilySession(FamilyModel<B> model, typename B::kv_cache cache)
      : model_(std::move(model)), cache_(std::move(cache)) {}

  [[nodiscard]] SessionCapabilities capabilities() const noexcept {
    return B::realized_session_capabilities();
  }

  [[nodiscard]] Result<Submission<output, completion>> prefill(const B& backend,
                                                               prefill_input&& tokens) {
    return run(backend, tokens, model::LogitRows::kLast);
  }
  // Like prefill, but the output holds every token's logits [n, n_vocab] (observe_output gives
  // n * n_vocab values, row by row): speculative decoding scores a whole draft in one pass.
  [[nodiscard]] Result<Submission<output, completion>> verify(
      const B& backend, std::span<const std::uint32_t> tokens) {
    return run(backend, tokens, model::LogitRows::kAll);
  }
  [[nodiscard]] Result<Submission<output, completion>> decode(const B& backend,
                                                              decode_input&& token) {
    prefill_input tokens;
    try {
      tokens.push_back(token);
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "decode: cannot allocate the token");
    }
    return prefill(backend, std::move(tokens));
  }
  [[nodiscard]] Result<observation> observe_output(const B& backend, const output& out) const {
    return backend.observe_forward(out);
  }

  // Cached positions so far.
  [[nodiscard]] std::uint32_t checkpoint() const noexcept { return position_; }
  // Forgets every position >= `position` (which must be <= checkpoint()).
  [[nodiscard]] Result<void> truncate(std::uint32_t position) {
    if (position > position_) {
      return fail(ErrorCode::kInvalidArgument, "truncate: position " + std::to_string(position) +
                                                   " is beyond the " + std::to_string(position_) +
                                                   " cached positions");
    }
    EREDU_TRY_VOID(B::truncate_kv_cache(cache_, position));
    position_ = position;
    return ok();
  }
  [[nodiscard]] std::uint32_t max_positions() const noexcept { return model_.max_positions; }
  [[nodiscard]] std::uint32_t n_vocab() const noexcept { return model_.geometry.n_vocab; }
  [[nodiscard]] const model::ModelGeometry& geometry() const noexcept { return model_.geometry; }
  // The family's model (tests and tools: std::visit over the registry's model types).
  [[nodiscard]] const model::AnyModel<B>& model() const noexcept { return *model_.model; }

 private:
  Result<Submission<output, completion>> run(const B& backend, std::span<const std::uint32_t> input,
                                             model::LogitRows rows) {
    EREDU_TRY_VOID(model::check_forward_input(input, model_.geometry.n_vocab, position_,
                                              model_.max_positions));
    const std::uint32_t first = position_;
    auto submitted = backend.submit_forward(cache_, first, [&](typename B::kv_cache& cache) {
      return std::visit(
          [&](const auto& m) { return m.forward(backend, cache, input, first, rows); },
          *model_.model);
    });
    if (!submitted) return fail(to_eredu_error(std::move(submitted).error()));
    position_ += static_cast<std::uint32_t>(input.size());
    return std::move(submitted).value();
  }

  FamilyModel<B> model_;
  typename B::kv_cache cache_;
  std::uint32_t position_ = 0;
};

template <ForwardSubmitter B>
[[nodiscard]] Result<FamilySession<B>> create_family_session(
    const B& backend, PreparedModel<FamilyModel<B>>&& prepared) {
  auto parts = std::move(prepared).into_parts();
  const model::ModelGeometry& g = parts.model.geometry;
  const KvCacheSpec spec{g.n_layer, g.n_head_kv, g.head_dim, parts.model.max_positions};
  EREDU_TRY(auto cache, backend.create_kv_cache_of(spec, parts.model.kv_cache_type));
  return FamilySession<B>(std::move(parts.model), std::move(cache));
}

}  // namespace eredu::runtime
