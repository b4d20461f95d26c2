#pragma once
// The `llama` family: Llama 1/2/3.x (and Llama-architecture models such as TinyLlama, SmolLM). GGUF
// stores Q/K rows permuted to consecutive rotary pairs (llama.cpp rope type NORM). Llama 3.x files
// carry rotary frequency factors (rope_freqs.weight); Llama-3.2-1B has tied embeddings (no
// output.weight). It is the decoder block (model/decoder/) with these traits; see
// model/architecture.hpp for what a family provides and model/registry.hpp for the line that
// registers it.

#include <string_view>
#include <vector>

#include "eredu/model/decoder/config.hpp"
#include "eredu/model/decoder/model.hpp"
#include "eredu/model/decoder/schema.hpp"

namespace eredu::model::llama {

struct Family {
  static constexpr std::string_view name = "llama";
  static constexpr decoder::DecoderTraits traits{RotaryLayout::kInterleaved, /*qkv_bias=*/false,
                                                 /*qk_norm=*/false, /*rotary_factors=*/true};
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

}  // namespace eredu::model::llama
