// Normalization and validation of the decoder configuration (see config.hpp).
#include "eredu/model/decoder/config.hpp"

#include <cmath>
#include <string>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/model/decoder/schema.hpp"
#include "eredu/model/hyperparameters.hpp"

namespace eredu::model::decoder {

Result<void> validate_decoder_config(const DecoderConfig& c) {
  const std::string p = c.architecture + ".";
  auto positive = [&](std::uint32_t v, const char* key) -> Result<void> {
    if (v == 0) return fail(hyperparameter_error(p + key, "must be positive"));
    return ok();
  };
  EREDU_TRY_VOID(positive(c.n_layer, "block_count"));
  EREDU_TRY_VOID(positive(c.n_embd, "embedding_length"));
  EREDU_TRY_VOID(positive(c.n_ff, "feed_forward_length"));
  EREDU_TRY_VOID(positive(c.n_head, "attention.head_count"));
  EREDU_TRY_VOID(positive(c.n_head_kv, "attention.head_count_kv"));
  EREDU_TRY_VOID(positive(c.head_dim, "attention.key_length"));
  if (c.n_head % c.n_head_kv != 0) {
    return fail(hyperparameter_error(p + "attention.head_count_kv",
                                     "head_count " + std::to_string(c.n_head) +
                                         " is not a multiple of head_count_kv " +
                                         std::to_string(c.n_head_kv)));
  }
  if (static_cast<std::uint64_t>(c.n_head) * c.head_dim > kMaxEmbedding) {
    return fail(
        hyperparameter_error(p + "attention.key_length", "head_count * key_length is absurd"));
  }
  if (c.n_rot == 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    return fail(hyperparameter_error(p + "rope.dimension_count",
                                     "value " + std::to_string(c.n_rot) +
                                         " must be even, positive and at most the head dimension " +
                                         std::to_string(c.head_dim)));
  }
  EREDU_TRY_VOID(positive(c.n_ctx_train, "context_length"));
  EREDU_TRY_VOID(positive(c.n_vocab, "vocab_size"));
  if (!std::isfinite(c.rms_eps) || !(c.rms_eps > 0.0f)) {
    return fail(hyperparameter_error(p + "attention.layer_norm_rms_epsilon",
                                     "must be finite and positive"));
  }
  if (!std::isfinite(c.rope_freq_base) || !(c.rope_freq_base > 0.0f)) {
    return fail(hyperparameter_error(p + "rope.freq_base", "must be finite and positive"));
  }
  if (!std::isfinite(c.rope_freq_scale) || !(c.rope_freq_scale > 0.0f)) {
    return fail(hyperparameter_error(p + "rope.scaling.factor", "must be finite and positive"));
  }
  return ok();
}

OperatorCapabilities required_operators(const DecoderConfig& c) noexcept {
  OperatorCapabilities required;
  if (c.qkv_bias) required = required.with(OptionalOperator::kBiasAdd);
  if (c.qk_norm) required = required.with(OptionalOperator::kHeadRmsNorm);
  if (c.rotary_factors) required = required.with(OptionalOperator::kRotaryFrequencyFactors);
  return required;
}

Result<DecoderConfig> read_decoder_config(const checkpoint::GgufContents& gguf,
                                          const checkpoint::TensorCatalog& catalog,
                                          std::string_view architecture,
                                          const DecoderTraits& traits) {
  DecoderConfig c;
  c.architecture = std::string(architecture);
  c.rotary_layout = traits.rotary_layout;
  c.qkv_bias = traits.qkv_bias;
  c.qk_norm = traits.qk_norm;
  c.rotary_factors = traits.rotary_factors && catalog.contains(kRopeFreqs);
  c.tied_output = !catalog.contains(kOutput);
  const std::string p = c.architecture + ".";

  EREDU_TRY(c.n_layer, required_u32(gguf, p + "block_count", 1, kMaxLayers));
  EREDU_TRY(c.n_embd, required_u32(gguf, p + "embedding_length", 1, kMaxEmbedding));
  EREDU_TRY(c.n_ff, required_u32(gguf, p + "feed_forward_length", 1, kMaxFeedForward));
  EREDU_TRY(c.n_head, required_u32(gguf, p + "attention.head_count", 1, kMaxHeads));
  EREDU_TRY(c.n_head_kv, optional_u32(gguf, p + "attention.head_count_kv", 1, kMaxHeads, c.n_head));
  EREDU_TRY(c.n_ctx_train, required_u32(gguf, p + "context_length", 1, kMaxContext));
  // Divisions only after their divisors are checked (G46: SIGFPE upstream).
  if (c.n_head % c.n_head_kv != 0) {
    return fail(hyperparameter_error(p + "attention.head_count_kv",
                                     "head_count " + std::to_string(c.n_head) +
                                         " is not a multiple of head_count_kv " +
                                         std::to_string(c.n_head_kv)));
  }
  const std::string key_length = p + "attention.key_length";
  if (gguf.find_metadata(key_length) != nullptr) {
    EREDU_TRY(c.head_dim, required_u32(gguf, key_length, 1, kMaxEmbedding));
  } else {
    if (c.n_embd % c.n_head != 0) {
      return fail(hyperparameter_error(p + "attention.head_count",
                                       "embedding_length " + std::to_string(c.n_embd) +
                                           " is not divisible by head_count " +
                                           std::to_string(c.n_head)));
    }
    c.head_dim = c.n_embd / c.n_head;
  }
  const std::string value_length = p + "attention.value_length";
  EREDU_TRY(std::uint32_t n_v, optional_u32(gguf, value_length, 1, kMaxEmbedding, c.head_dim));
  if (n_v != c.head_dim) {
    return fail(Error(ErrorCode::kUnsupported,
                      "value_length " + std::to_string(n_v) + " differs from key_length " +
                          std::to_string(c.head_dim) + " (attention with unequal K/V heads)")
                    .with_subject(value_length));
  }
  EREDU_TRY(c.n_rot, optional_u32(gguf, p + "rope.dimension_count", 1, kMaxEmbedding, c.head_dim));

  const std::string eps_key = p + "attention.layer_norm_rms_epsilon";
  if (gguf.find_metadata(eps_key) == nullptr) {
    return fail(
        hyperparameter_error(eps_key, "missing (required by the " + c.architecture + " family)"));
  }
  EREDU_TRY(c.rms_eps, optional_positive_float(gguf, eps_key, 1e-5f));
  EREDU_TRY(c.rope_freq_base, optional_positive_float(gguf, p + "rope.freq_base", 10000.0f));

  const std::string scaling_type_key = p + "rope.scaling.type";
  EREDU_TRY(std::string scaling_type, optional_string(gguf, scaling_type_key, "none"));
  EREDU_TRY(float factor, optional_positive_float(gguf, p + "rope.scaling.factor", 1.0f));
  if (scaling_type == "linear") {
    c.rope_freq_scale = 1.0f / factor;
  } else if (scaling_type != "none") {
    return fail(Error(ErrorCode::kUnsupported,
                      "rope scaling type '" + scaling_type + "' is not supported (none, linear)")
                    .with_subject(scaling_type_key));
  }

  // Vocabulary size: explicit key, else the tokenizer's token list, else token_embd's rows.
  std::uint64_t vocab = 0;
  if (gguf.find_metadata(p + "vocab_size") != nullptr) {
    EREDU_TRY(std::uint32_t v, required_u32(gguf, p + "vocab_size", 1, kMaxVocab));
    vocab = v;
  } else if (gguf.find_metadata("tokenizer.ggml.tokens") != nullptr) {
    EREDU_TRY(auto tokens, gguf.get_array("tokenizer.ggml.tokens"));
    vocab = tokens->size();
  } else if (const checkpoint::TensorMetadata* embd = catalog.find(kTokenEmbd);
             embd != nullptr && embd->shape.size() == 2) {
    vocab = embd->shape[0];
  }
  if (vocab == 0 || vocab > kMaxVocab) {
    return fail(hyperparameter_error(p + "vocab_size", "vocabulary size " + std::to_string(vocab) +
                                                           " is missing or outside [1, " +
                                                           std::to_string(kMaxVocab) + "]"));
  }
  c.n_vocab = static_cast<std::uint32_t>(vocab);
  EREDU_TRY_VOID(validate_decoder_config(c));
  return c;
}

Result<DecoderConfig> read_family_config(const checkpoint::GgufContents& gguf,
                                         const checkpoint::TensorCatalog& catalog,
                                         std::string_view architecture,
                                         const DecoderTraits& traits) {
  EREDU_TRY(std::string arch, read_architecture(gguf));
  if (arch != architecture) {
    return fail(Error(ErrorCode::kUnsupported,
                      "architecture '" + arch + "' is not " + std::string(architecture))
                    .with_subject("general.architecture"));
  }
  return read_decoder_config(gguf, catalog, architecture, traits);
}

}  // namespace eredu::model::decoder
