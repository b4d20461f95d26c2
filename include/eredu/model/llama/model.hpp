#pragma once
// LlamaModel<B>: the parameter slots of a llama / mistral model on backend B, and its forward
// pass written once over NeuralBackend (llama_forward).
//
// Beyond NeuralBackend and ParameterBackend the model needs two small things of B (LlamaBackend):
//   B::declare_parameter(std::string id, std::vector<std::uint64_t> shape) -> B::parameter
//       an unbound slot that knows its expected shape (validate_bind checks against it);
//   B::parameter_weight(const B::parameter&) -> const B::weight&
//       the weight bound to a slot, as the operators consume it;
// and its error types convert to eredu::Error.
//
// Forward (one call for a prefill of n tokens or a decode of 1), per layer:
//   h = x + Wo * attn(rope(Wq * norm(x)), rope(Wk * norm(x)), Wv * norm(x))
//   x = h + Wdown * (silu(Wgate * norm(h)) * Wup * norm(h))
// then logits = Woutput * norm(x) of the last token. Rotary is applied as GGUF stores Q/K
// (interleaved pairs, llama.cpp rope type NORM).

#include <cmath>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/concepts/neural_backend.hpp"
#include "eredu/core/concepts/parameter_backend.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/operator_capabilities.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/llama/config.hpp"
#include "eredu/model/llama/schema.hpp"

namespace eredu::model::llama {

template <typename B>
concept LlamaBackend = NeuralBackend<B> && ParameterBackend<B> &&
    std::convertible_to<typename B::error, Error> &&
    std::convertible_to<typename B::parameter_error, Error> &&
    requires(std::string id, std::vector<std::uint64_t> shape, const typename B::parameter& p) {
  { B::declare_parameter(std::move(id), std::move(shape)) } -> std::same_as<typename B::parameter>;
  { B::parameter_weight(p) } -> std::same_as<const typename B::weight&>;
};

// The optional operators the llama family needs: none (it uses the core set only).
inline constexpr OperatorCapabilities kLlamaRequiredOperators{};

template <typename B>
struct LlamaLayer {
  typename B::parameter attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up,
      ffn_down;
};

template <typename B>
class LlamaModel {
 public:
  // Checks B's operators first (before anything is built), then declares every slot of `schema`.
  [[nodiscard]] static Result<LlamaModel> declare(
      const LlamaConfig& config,
      const std::vector<ParameterSchema>& schema) requires LlamaBackend<B> {
    EREDU_TRY_VOID(require_operators(kLlamaRequiredOperators, B::operator_capabilities));
    EREDU_TRY_VOID(validate_llama_config(config));
    LlamaModel m;
    m.config_ = config;
    m.layers_.resize(config.n_layer);
    std::size_t declared = 0;
    for (const ParameterSchema& p : schema) {
      typename B::parameter* slot = m.slot(p.id);
      if (slot == nullptr) {
        return fail(Error(ErrorCode::kInvalidModel, "schema names unknown parameter '" + p.id + "'")
                        .with_subject(p.id));
      }
      *slot = B::declare_parameter(p.id, p.shape);
      ++declared;
    }
    if (declared != 3 + 9 * static_cast<std::size_t>(config.n_layer)) {
      return fail(ErrorCode::kInvalidModel, "llama schema does not cover every parameter");
    }
    return m;
  }

  [[nodiscard]] const LlamaConfig& config() const noexcept { return config_; }

  // The slot named `id`, or nullptr (tests and tools; linear in the number of parameters).
  [[nodiscard]] const typename B::parameter* find_parameter(std::string_view id) const {
    return const_cast<LlamaModel*>(this)->slot(id);
  }

  // Calls f(id, parameter&) for every slot, in schema order.
  template <typename F>
  void visit_parameters(F&& f) {
    f(std::string_view(kTokenEmbd), token_embd_);
    f(std::string_view(kOutputNorm), output_norm_);
    f(std::string_view(kOutput), output_);
    for (std::uint32_t i = 0; i < layers_.size(); ++i) {
      const LayerNames n = layer_names(i);
      LlamaLayer<B>& l = layers_[i];
      f(std::string_view(n.attn_norm), l.attn_norm);
      f(std::string_view(n.attn_q), l.attn_q);
      f(std::string_view(n.attn_k), l.attn_k);
      f(std::string_view(n.attn_v), l.attn_v);
      f(std::string_view(n.attn_output), l.attn_output);
      f(std::string_view(n.ffn_norm), l.ffn_norm);
      f(std::string_view(n.ffn_gate), l.ffn_gate);
      f(std::string_view(n.ffn_up), l.ffn_up);
      f(std::string_view(n.ffn_down), l.ffn_down);
    }
  }

  // Runs `tokens` at positions [first_position, first_position + n) through the model, appending
  // their keys/values to `cache`; returns the last token's logits [1, n_vocab].
  [[nodiscard]] Result<typename B::tensor> forward(
      const B& b, typename B::kv_cache& cache, std::span<const std::uint32_t> tokens,
      std::uint32_t first_position) const requires LlamaBackend<B> {
    const LlamaConfig& c = config_;
    auto w = [](const typename B::parameter& p) -> const typename B::weight& {
      return B::parameter_weight(p);
    };
    const RmsNormSpec norm{c.rms_eps};
    const RotarySpec rope_q{c.n_head,         c.head_dim,        c.n_rot,
                            c.rope_freq_base, c.rope_freq_scale, RotaryLayout::kInterleaved};
    const RotarySpec rope_k{c.n_head_kv,      c.head_dim,        c.n_rot,
                            c.rope_freq_base, c.rope_freq_scale, RotaryLayout::kInterleaved};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

    EREDU_TRY(auto x, b.embedding(w(token_embd_), tokens));
    for (std::uint32_t i = 0; i < c.n_layer; ++i) {
      const LlamaLayer<B>& l = layers_[i];
      EREDU_TRY(auto xn, b.rms_norm(x, w(l.attn_norm), norm));
      EREDU_TRY(auto q0, b.linear(xn, w(l.attn_q)));
      EREDU_TRY(auto k0, b.linear(xn, w(l.attn_k)));
      EREDU_TRY(auto v, b.linear(xn, w(l.attn_v)));
      EREDU_TRY(auto q, b.rotary(q0, rope_q, first_position));
      EREDU_TRY(auto k, b.rotary(k0, rope_k, first_position));
      const AttentionSpec attn{i, c.n_head, c.n_head_kv, c.head_dim, scale};
      EREDU_TRY(auto a, b.attention(q, k, v, cache, attn, first_position));
      EREDU_TRY(auto o, b.linear(a, w(l.attn_output)));
      EREDU_TRY(auto h, b.add(x, o));
      EREDU_TRY(auto hn, b.rms_norm(h, w(l.ffn_norm), norm));
      EREDU_TRY(auto gate, b.linear(hn, w(l.ffn_gate)));
      EREDU_TRY(auto up, b.linear(hn, w(l.ffn_up)));
      EREDU_TRY(auto act, b.swiglu(gate, up));
      EREDU_TRY(auto down, b.linear(act, w(l.ffn_down)));
      EREDU_TRY(auto next, b.add(h, down));
      x = std::move(next);
    }
    EREDU_TRY(auto xn, b.rms_norm(x, w(output_norm_), norm));
    return b.logits(xn, w(output_));
  }

 private:
  typename B::parameter* slot(std::string_view id) {
    typename B::parameter* found = nullptr;
    visit_parameters([&](std::string_view name, typename B::parameter& p) {
      if (name == id) found = &p;
    });
    return found;
  }

  LlamaConfig config_;
  typename B::parameter token_embd_{}, output_norm_{}, output_{};
  std::vector<LlamaLayer<B>> layers_;
};

}  // namespace eredu::model::llama
