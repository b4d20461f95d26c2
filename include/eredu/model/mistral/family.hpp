#pragma once
// The `mistral` family: Mistral 7B and its relatives, converted as general.architecture = mistral:
// the llama block (consecutive rotary pairs) with mistral.-prefixed keys. It is the decoder block
// (model/decoder/) with these traits; see model/architecture.hpp for what a family provides and
// model/registry.hpp for the line that registers it.

#include <string_view>

#include "eredu/model/decoder/family.hpp"

namespace eredu::model::mistral {

struct Family : decoder::DecoderFamily<Family> {
  static constexpr std::string_view name = "mistral";
  static constexpr decoder::DecoderTraits traits{RotaryLayout::kInterleaved, /*qkv_bias=*/false,
                                                 /*qk_norm=*/false, /*rotary_factors=*/true};
};

}  // namespace eredu::model::mistral
