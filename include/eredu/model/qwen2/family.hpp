#pragma once
// The `qwen2` family: Qwen2 / Qwen2.5: q/k/v projections with biases, NEOX (half-split) rotary
// pairs; small ones (Qwen2.5-0.5B) tie the output matrix to token_embd. It is the decoder block
// (model/decoder/) with these traits; see model/architecture.hpp for what a family provides and
// model/registry.hpp for the line that registers it.

#include <string_view>

#include "eredu/model/decoder/family.hpp"

namespace eredu::model::qwen2 {

struct Family : decoder::DecoderFamily<Family> {
  static constexpr std::string_view name = "qwen2";
  static constexpr decoder::DecoderTraits traits{RotaryLayout::kHalfSplit, /*qkv_bias=*/true,
                                                 /*qk_norm=*/false, /*rotary_factors=*/false};
};

}  // namespace eredu::model::qwen2
