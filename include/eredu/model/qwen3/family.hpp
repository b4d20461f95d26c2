#pragma once
// The `qwen3` family: Qwen3 (dense): no q/k/v biases but per-head RMS norms of Q and K (attn_q_norm
// / attn_k_norm) before the NEOX rotary, and an explicit head size (qwen3.attention.key_length,
// which need not be embedding_length / head_count). It is the decoder block (model/decoder/) with
// these traits; see model/architecture.hpp for what a family provides and model/registry.hpp for
// the line that registers it.

#include <string_view>
#include <vector>

#include "eredu/model/decoder/config.hpp"
#include "eredu/model/decoder/model.hpp"
#include "eredu/model/decoder/schema.hpp"

namespace eredu::model::qwen3 {

struct Family {
  static constexpr std::string_view name = "qwen3";
  static constexpr decoder::DecoderTraits traits{RotaryLayout::kHalfSplit, /*qkv_bias=*/false,
                                                 /*qk_norm=*/true, /*rotary_factors=*/false};
  using config = decoder::DecoderConfig;
  template <typename B>
  using model = decoder::DecoderModel<B>;

  [[nodiscard]] static Result<config> read_config(const checkpoint::GgufContents& gguf,
                                                  const checkpoint::TensorCatalog& catalog) {
    return decoder::read_family_config(gguf, catalog, name, traits);
  }
  [[nodiscard]] static Result<std::vector<ParameterSchema>> schema(
      const config& c, const checkpoint::TensorCatalog& catalog) {
    return decoder::decoder_schema(c, catalog);
  }
  [[nodiscard]] static OperatorCapabilities required_operators(const config& c) noexcept {
    return decoder::required_operators(c);
  }
  [[nodiscard]] static ModelGeometry geometry(const config& c) noexcept {
    return decoder::geometry(c);
  }
};

}  // namespace eredu::model::qwen3
