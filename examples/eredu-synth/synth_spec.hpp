#pragma once
// What eredu-synth writes: the model shape (presets or custom), the encoding and the seed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::synth {

// The hyperparameters of a Llama-architecture model, in llama.cpp's vocabulary.
struct ModelShape {
  std::uint32_t hidden = 0;    // llama.embedding_length
  std::uint32_t layers = 0;    // llama.block_count
  std::uint32_t heads = 0;     // llama.attention.head_count
  std::uint32_t kv_heads = 0;  // llama.attention.head_count_kv
  std::uint32_t head_dim = 0;  // llama.rope.dimension_count (and key/value length)
  std::uint32_t ffn = 0;       // llama.feed_forward_length
  std::uint32_t vocab = 0;     // llama.vocab_size
  std::uint32_t context = 0;   // llama.context_length
  float rope_base = 10000.0f;  // llama.rope.freq_base
  float rms_eps = 1e-5f;       // llama.attention.layer_norm_rms_epsilon
};

// "smol135m" (SmolLM-135M's shape) and "llama1b" (Llama-3.2-1B's shape with a 32000 vocabulary);
// nullopt for another name.
[[nodiscard]] std::optional<ModelShape> preset_shape(std::string_view name);

// Tokens every synthesized vocabulary starts with: <unk>, <s>, </s> and 256 byte tokens.
inline constexpr std::uint32_t kReservedTokens = 3 + 256;

// Checks the shape: every size positive, heads a multiple of kv_heads, a vocabulary that holds
// at least the reserved tokens, finite positive rope base and epsilon. kInvalidArgument naming the
// offending field.
[[nodiscard]] Result<void> validate(const ModelShape& shape);

// The encoding named `name` (case-insensitive, e.g. "q8_0"), when eredu can write it. Errors:
// kUnsupported naming the type when it is a known ggml type (or llama.cpp mixture such as Q4_K_M)
// with no reference quantizer in eredu; kInvalidArgument for a name that is no type at all.
[[nodiscard]] Result<DType> parse_encoding(std::string_view name);

// Which matrices take another type than the base encoding.
enum class Mixture {
  kNone,    // every matrix in the base encoding
  kMedium,  // llama-quantize's Q4_K_M / Q5_K_M: output and some attn_v / ffn_down in Q6_K
};

// The mixture a --type name asks for: kMedium for Q4_K_M and Q5_K_M (any case), else kNone (the
// other mixture names mean their base type, see parse_encoding).
[[nodiscard]] Mixture parse_mixture(std::string_view name);

// Whether llama-quantize gives layer `layer` of `layers` more bits in a medium mixture: the first
// and last eighth of the layers and every third layer between (llama.cpp's use_more_bits).
[[nodiscard]] bool uses_more_bits(std::uint32_t layer, std::uint32_t layers) noexcept;

// llama.cpp's llama_ftype for a file whose matrices are `dtype` (general.file_type), in the
// given mixture (Q4_K_M 15, Q5_K_M 17).
[[nodiscard]] std::uint32_t llama_file_type(DType dtype, Mixture mixture = Mixture::kNone) noexcept;

struct SynthSpec {
  ModelShape shape;
  DType encoding = DType::kF16;
  Mixture mixture = Mixture::kNone;
  std::uint64_t seed = 0;
  std::string name;      // general.name
  unsigned threads = 1;  // generation threads (the output does not depend on it)
};

}  // namespace eredu::synth
