#pragma once
// The `qwen3` family: Qwen3 (dense): no q/k/v biases but per-head RMS norms of Q and K (attn_q_norm
// / attn_k_norm) before the NEOX rotary, and an explicit head size (qwen3.attention.key_length,
// which need not be embedding_length / head_count). It is the decoder block (model/decoder/) with
// these traits; see model/architecture.hpp for what a family provides and model/registry.hpp for
// the line that registers it.

#include <string_view>

#include "eredu/model/decoder/family.hpp"

namespace eredu::model::qwen3 {

struct Family : decoder::DecoderFamily<Family> {
  static constexpr std::string_view name = "qwen3";
  static constexpr decoder::DecoderTraits traits{RotaryLayout::kHalfSplit, /*qkv_bias=*/false,
                                                 /*qk_norm=*/true, /*rotary_factors=*/false};
};

}  // namespace eredu::model::qwen3
