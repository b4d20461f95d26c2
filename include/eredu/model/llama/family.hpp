#pragma once
// The `llama` family: Llama 1/2/3.x (and Llama-architecture models such as TinyLlama, SmolLM). GGUF
// stores Q/K rows permuted to consecutive rotary pairs (llama.cpp rope type NORM). Llama 3.x files
// carry rotary frequency factors (rope_freqs.weight); Llama-3.2-1B has tied embeddings (no
// output.weight). It is the decoder block (model/decoder/) with these traits; see
// model/architecture.hpp for what a family provides and model/registry.hpp for the line that
// registers it.

#include <string_view>

#include "eredu/model/decoder/family.hpp"

namespace eredu::model::llama {

struct Family : decoder::DecoderFamily<Family> {
  static constexpr std::string_view name = "llama";
  static constexpr decoder::DecoderTraits traits{RotaryLayout::kInterleaved, /*qkv_bias=*/false,
                                                 /*qk_norm=*/false, /*rotary_factors=*/true};
};

}  // namespace eredu::model::llama
