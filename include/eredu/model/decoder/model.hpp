#pragma once
// DecoderModel<B>: the parameter slots of a decoder model on backend B and its forward pass,
// written once over NeuralBackend for every family built on the decoder block.
//
// Forward (one call for a prefill of n tokens or a decode of 1), per layer:
//   xn = norm(x)
//   q = Wq xn (+ bq), k = Wk xn (+ bk), v = Wv xn (+ bv)           biases: qkv_bias
//   q = head_norm(q), k = head_norm(k)                             per-head norms: qk_norm
//   q, k = rope(q), rope(k)                                         angles / rope_freqs: factors
//   h = x + Wo attn(q, k, v)
//   x = h + Wdown (silu(Wgate norm(h)) * Wup norm(h))
// then logits = Woutput norm(x) of the last token (Woutput = token_embd when tied), or of every
// token with LogitRows::kAll (speculative verification).
// Optional operators are called only under `if constexpr (provides<B, op>)`; declare() has
// already checked (require_operators) that B provides every one this config needs.

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/core/concepts/optional_operators.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/decoder/config.hpp"
#include "eredu/model/decoder/schema.hpp"
#include "eredu/model/geometry.hpp"
#include "eredu/model/logit_rows.hpp"
#include "eredu/model/model_backend.hpp"
#include "eredu/model/parameter_schema.hpp"

namespace eredu::model::decoder {

template <typename B>
struct DecoderLayer {
  typename B::parameter attn_norm, attn_q, attn_k, attn_v, attn_q_bias, attn_k_bias, attn_v_bias,
      attn_q_norm, attn_k_norm, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down;
};

template <typename B>
class DecoderModel {
 public:
  using config_type = DecoderConfig;

  // Checks B's operators first (before anything is built), then declares every slot `config`
  // has, each with its schema shape. kInvalidModel when the schema and the config disagree.
  [[nodiscard]] static Result<DecoderModel> declare(
      const DecoderConfig& config,
      const std::vector<ParameterSchema>& schema) requires ModelBackend<B> {
    EREDU_TRY_VOID(require_operators(required_operators(config), B::operator_capabilities));
    EREDU_TRY_VOID(validate_decoder_config(config));
    std::unordered_map<std::string_view, const ParameterSchema*> by_id;
    for (const ParameterSchema& p : schema)
      by_id.emplace(p.id, &p);
    DecoderModel m;
    m.config_ = config;
    m.layers_.resize(config.n_layer);
    std::optional<Error> failure;
    std::size_t declared = 0;
    m.visit_parameters([&](std::string_view id, typename B::parameter& slot) {
      if (failure) return;
      auto found = by_id.find(id);
      if (found == by_id.end()) {
        failure = Error(ErrorCode::kInvalidModel, "schema lacks parameter '" + std::string(id) +
                                                      "' of the " + config.architecture + " model")
                      .with_subject(std::string(id));
        return;
      }
      slot = B::declare_parameter(std::string(id), found->second->shape);
      ++declared;
    });
    if (failure) return fail(std::move(*failure));
    if (declared != schema.size()) {
      return fail(ErrorCode::kInvalidModel,
                  "schema names parameters the " + config.architecture + " model does not have");
    }
    return m;
  }

  [[nodiscard]] const DecoderConfig& config() const noexcept { return config_; }
  [[nodiscard]] ModelGeometry geometry() const noexcept { return decoder::geometry(config_); }

  // The slot named `id`, or nullptr (tests and tools; linear in the number of parameters).
  [[nodiscard]] const typename B::parameter* find_parameter(std::string_view id) const {
    const typename B::parameter* found = nullptr;
    const_cast<DecoderModel*>(this)->visit_parameters(
        [&](std::string_view name, typename B::parameter& p) {
          if (name == id) found = &p;
        });
    return found;
  }

  // Calls f(id, parameter&) for every slot this config has, in schema order.
  template <typename F>
  void visit_parameters(F&& f) {
    const DecoderConfig& c = config_;
    f(std::string_view(kTokenEmbd), token_embd_);
    f(std::string_view(kOutputNorm), output_norm_);
    f(std::string_view(kOutput), output_);
    if (c.rotary_factors) f(std::string_view(kRopeFreqs), rope_freqs_);
    for (std::uint32_t i = 0; i < layers_.size(); ++i) {
      const LayerNames n = layer_names(i);
      DecoderLayer<B>& l = layers_[i];
      f(std::string_view(n.attn_norm), l.attn_norm);
      f(std::string_view(n.attn_q), l.attn_q);
      f(std::string_view(n.attn_k), l.attn_k);
      f(std::string_view(n.attn_v), l.attn_v);
      if (c.qkv_bias) {
        f(std::string_view(n.attn_q_bias), l.attn_q_bias);
        f(std::string_view(n.attn_k_bias), l.attn_k_bias);
        f(std::string_view(n.attn_v_bias), l.attn_v_bias);
      }
      if (c.qk_norm) {
        f(std::string_view(n.attn_q_norm), l.attn_q_norm);
        f(std::string_view(n.attn_k_norm), l.attn_k_norm);
      }
      f(std::string_view(n.attn_output), l.attn_output);
      f(std::string_view(n.ffn_norm), l.ffn_norm);
      f(std::string_view(n.ffn_gate), l.ffn_gate);
      f(std::string_view(n.ffn_up), l.ffn_up);
      f(std::string_view(n.ffn_down), l.ffn_down);
    }
  }

  // Runs `tokens` at positions [first_position, first_position + n) through the model, appending
  // their keys/values to `cache`; returns the last token's logits [1, n_vocab], or with
  // LogitRows::kAll every token's [n, n_vocab] (the same output projection, over all rows).
  [[nodiscard]] Result<typename B::tensor> forward(
      const B& b, typename B::kv_cache& cache, std::span<const std::uint32_t> tokens,
      std::uint32_t first_position,
      LogitRows rows = LogitRows::kLast) const requires ModelBackend<B> {
    using tensor = typename B::tensor;
    const DecoderConfig& c = config_;
    auto w = [](const typename B::parameter& p) -> const typename B::weight& {
      return B::parameter_weight(p);
    };
    const RmsNormSpec norm{c.rms_eps};
    const RotarySpec rope_q{c.n_head,         c.head_dim,        c.n_rot,
                            c.rope_freq_base, c.rope_freq_scale, c.rotary_layout};
    const RotarySpec rope_k{c.n_head_kv,      c.head_dim,        c.n_rot,
                            c.rope_freq_base, c.rope_freq_scale, c.rotary_layout};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

    // The optional steps; each branch exists only where B provides the operator.
    auto bias = [&](tensor& x, const typename B::parameter& p) -> Result<void> {
      if constexpr (provides<B, OptionalOperator::kBiasAdd>) {
        EREDU_TRY(tensor y, b.add_bias(x, w(p)));
        x = std::move(y);
        return ok();
      } else {
        return require_operators({OptionalOperator::kBiasAdd}, B::operator_capabilities);
      }
    };
    auto head_norm = [&](tensor& x, const typename B::parameter& p) -> Result<void> {
      if constexpr (provides<B, OptionalOperator::kHeadRmsNorm>) {
        EREDU_TRY(tensor y, b.head_rms_norm(x, w(p), norm));
        x = std::move(y);
        return ok();
      } else {
        return require_operators({OptionalOperator::kHeadRmsNorm}, B::operator_capabilities);
      }
    };
    auto rope = [&](const tensor& x, const RotarySpec& spec) -> Result<tensor> {
      if (!c.rotary_factors) return b.rotary(x, spec, first_position);
      if constexpr (provides<B, OptionalOperator::kRotaryFrequencyFactors>) {
        return b.rotary_scaled(x, spec, first_position, w(rope_freqs_));
      } else {
        EREDU_TRY_VOID(require_operators({OptionalOperator::kRotaryFrequencyFactors},
                                         B::operator_capabilities));
        return fail(ErrorCode::kCapabilityMissing, "rotary frequency factors");
      }
    };

    // x through weights that all read it: one call where the backend reads x once for all of
    // them (shared_input_linear), one linear each otherwise; the values are linear's either way.
    using weight = typename B::weight;
    auto linears = [&](const tensor& x,
                       std::initializer_list<const weight*> ws) -> Result<std::vector<tensor>> {
      if constexpr (provides<B, OptionalOperator::kSharedInputLinear>) {
        return b.linear_shared_input(x, std::span<const weight* const>(ws.begin(), ws.size()));
      } else {
        std::vector<tensor> ys;
        try {
          ys.reserve(ws.size());
        } catch (const std::bad_alloc&) {
          return fail(ErrorCode::kCapacityExhausted, "decoder: cannot allocate a list of outputs");
        }
        for (const weight* wi : ws) {
          EREDU_TRY(tensor y, b.linear(x, *wi));
          ys.push_back(std::move(y));
        }
        return ys;
      }
    };

    EREDU_TRY(tensor x, b.embedding(w(token_embd_), tokens));
    for (std::uint32_t i = 0; i < c.n_layer; ++i) {
      const DecoderLayer<B>& l = layers_[i];
      EREDU_TRY(tensor xn, b.rms_norm(x, w(l.attn_norm), norm));
      EREDU_TRY(auto qkv, linears(xn, {&w(l.attn_q), &w(l.attn_k), &w(l.attn_v)}));
      tensor q0 = std::move(qkv[0]);
      tensor k0 = std::move(qkv[1]);
      tensor v = std::move(qkv[2]);
      if (c.qkv_bias) {
        EREDU_TRY_VOID(bias(q0, l.attn_q_bias));
        EREDU_TRY_VOID(bias(k0, l.attn_k_bias));
        EREDU_TRY_VOID(bias(v, l.attn_v_bias));
      }
      if (c.qk_norm) {
        EREDU_TRY_VOID(head_norm(q0, l.attn_q_norm));
        EREDU_TRY_VOID(head_norm(k0, l.attn_k_norm));
      }
      EREDU_TRY(tensor q, rope(q0, rope_q));
      EREDU_TRY(tensor k, rope(k0, rope_k));
      const AttentionSpec attn{i, c.n_head, c.n_head_kv, c.head_dim, scale};
      EREDU_TRY(tensor a, b.attention(q, k, v, cache, attn, first_position));
      EREDU_TRY(tensor o, b.linear(a, w(l.attn_output)));
      EREDU_TRY(tensor h, b.add(x, o));
      EREDU_TRY(tensor hn, b.rms_norm(h, w(l.ffn_norm), norm));
      EREDU_TRY(auto gate_up, linears(hn, {&w(l.ffn_gate), &w(l.ffn_up)}));
      EREDU_TRY(tensor act, b.swiglu(gate_up[0], gate_up[1]));
      EREDU_TRY(tensor down, b.linear(act, w(l.ffn_down)));
      EREDU_TRY(tensor next, b.add(h, down));
      x = std::move(next);
    }
    EREDU_TRY(tensor xn, b.rms_norm(x, w(output_norm_), norm));
    if (rows == LogitRows::kAll) return b.linear(xn, w(output_));
    return b.logits(xn, w(output_));
  }

 private:
  DecoderConfig config_;
  typename B::parameter token_embd_{}, output_norm_{}, output_{}, rope_freqs_{};
  std::vector<DecoderLayer<B>> layers_;
};

}  // namespace eredu::model::decoder
