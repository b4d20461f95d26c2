// Normalization and validation of the llama-family configuration (see config.hpp).
#include "eredu/model/llama/config.hpp"

#include <cmath>
#include <string>
#include <string_view>

#include "eredu/checkpoint/gguf.hpp"

namespace eredu::model::llama {
namespace {

Error config_error(const std::string& key, std::string message) {
  return Error(ErrorCode::kInvalidModel, "hyper-parameter '" + key + "': " + std::move(message))
      .with_subject(key);
}

// A required unsigned integer in [min, max]. A missing key or a value of another type is an error
// naming the key (G45); a value outside the range is an error naming it and the bounds (G46).
Result<std::uint32_t> required_u32(const checkpoint::GgufContents& gguf, const std::string& key,
                                   std::uint64_t min, std::uint64_t max) {
  if (gguf.find_metadata(key) == nullptr) {
    return fail(config_error(key, "missing (required by the llama family)"));
  }
  auto value = gguf.get_u64(key);
  if (!value) {
    return fail(
        config_error(key, "expected an unsigned integer (" + value.error().message() + ")"));
  }
  if (*value < min || *value > max) {
    return fail(config_error(key, "value " + std::to_string(*value) + " is outside [" +
                                      std::to_string(min) + ", " + std::to_string(max) + "]"));
  }
  return static_cast<std::uint32_t>(*value);
}

Result<std::uint32_t> optional_u32(const checkpoint::GgufContents& gguf, const std::string& key,
                                   std::uint64_t min, std::uint64_t max, std::uint32_t fallback) {
  if (gguf.find_metadata(key) == nullptr) return fallback;
  return required_u32(gguf, key, min, max);
}

// An optional float key; must be finite and positive when present.
Result<float> optional_positive_float(const checkpoint::GgufContents& gguf, const std::string& key,
                                      float fallback) {
  if (gguf.find_metadata(key) == nullptr) return fallback;
  auto value = gguf.get_float(key);
  if (!value) {
    return fail(config_error(key, "expected a float (" + value.error().message() + ")"));
  }
  if (!std::isfinite(*value) || !(*value > 0.0) || *value > 1e30) {
    return fail(
        config_error(key, "value " + std::to_string(*value) + " must be finite and positive"));
  }
  return static_cast<float>(*value);
}

}  // namespace

bool is_llama_architecture(std::string_view architecture) noexcept {
  return architecture == "llama" || architecture == "mistral";
}

Result<void> validate_llama_config(const LlamaConfig& c) {
  const std::string p = c.architecture + ".";
  if (c.n_layer == 0) return fail(config_error(p + "block_count", "must be positive"));
  if (c.n_embd == 0) return fail(config_error(p + "embedding_length", "must be positive"));
  if (c.n_ff == 0) return fail(config_error(p + "feed_forward_length", "must be positive"));
  if (c.n_head == 0) return fail(config_error(p + "attention.head_count", "must be positive"));
  if (c.n_head_kv == 0) {
    return fail(config_error(p + "attention.head_count_kv", "must be positive"));
  }
  if (c.n_embd % c.n_head != 0) {
    return fail(config_error(p + "attention.head_count",
                             "embedding_length " + std::to_string(c.n_embd) +
                                 " is not divisible by head_count " + std::to_string(c.n_head)));
  }
  if (c.n_head % c.n_head_kv != 0) {
    return fail(
        config_error(p + "attention.head_count_kv", "head_count " + std::to_string(c.n_head) +
                                                        " is not a multiple of head_count_kv " +
                                                        std::to_string(c.n_head_kv)));
  }
  if (c.head_dim != c.n_embd / c.n_head) {
    return fail(config_error(p + "embedding_length", "head dimension disagrees with head_count"));
  }
  if (c.n_rot == 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    return fail(config_error(p + "rope.dimension_count",
                             "value " + std::to_string(c.n_rot) +
                                 " must be even, positive and at most the head dimension " +
                                 std::to_string(c.head_dim)));
  }
  if (c.n_ctx_train == 0) return fail(config_error(p + "context_length", "must be positive"));
  if (c.n_vocab == 0) return fail(config_error(p + "vocab_size", "must be positive"));
  if (!std::isfinite(c.rms_eps) || !(c.rms_eps > 0.0f)) {
    return fail(
        config_error(p + "attention.layer_norm_rms_epsilon", "must be finite and positive"));
  }
  if (!std::isfinite(c.rope_freq_base) || !(c.rope_freq_base > 0.0f)) {
    return fail(config_error(p + "rope.freq_base", "must be finite and positive"));
  }
  if (!std::isfinite(c.rope_freq_scale) || !(c.rope_freq_scale > 0.0f)) {
    return fail(config_error(p + "rope.scaling.factor", "must be finite and positive"));
  }
  return ok();
}

Result<LlamaConfig> read_llama_config(const checkpoint::GgufContents& gguf,
                                      std::uint64_t token_embd_rows) {
  if (gguf.find_metadata("general.architecture") == nullptr) {
    return fail(Error(ErrorCode::kUnsupported, "general.architecture is missing")
                    .with_subject("general.architecture"));
  }
  auto arch = gguf.get_string("general.architecture");
  if (!arch) {
    return fail(
        config_error("general.architecture", "expected a string (" + arch.error().message() + ")"));
  }
  if (!is_llama_architecture(*arch)) {
    return fail(Error(ErrorCode::kUnsupported,
                      "architecture '" + std::string(*arch) + "' is not llama or mistral")
                    .with_subject("general.architecture"));
  }
  LlamaConfig c;
  c.architecture = std::string(*arch);
  const std::string p = c.architecture + ".";

  EREDU_TRY(auto n_layer, required_u32(gguf, p + "block_count", 1, kMaxLayers));
  EREDU_TRY(auto n_embd, required_u32(gguf, p + "embedding_length", 1, kMaxEmbedding));
  EREDU_TRY(auto n_ff, required_u32(gguf, p + "feed_forward_length", 1, kMaxFeedForward));
  EREDU_TRY(auto n_head, required_u32(gguf, p + "attention.head_count", 1, kMaxHeads));
  EREDU_TRY(auto n_head_kv,
            optional_u32(gguf, p + "attention.head_count_kv", 1, kMaxHeads, n_head));
  EREDU_TRY(auto n_ctx, required_u32(gguf, p + "context_length", 1, kMaxContext));
  c.n_layer = n_layer;
  c.n_embd = n_embd;
  c.n_ff = n_ff;
  c.n_head = n_head;
  c.n_head_kv = n_head_kv;
  c.n_ctx_train = n_ctx;
  // Division checks come before any division (G46: SIGFPE upstream).
  if (n_embd % n_head != 0 || n_head % n_head_kv != 0) {
    c.head_dim = 1;  // placeholder so validate names the real culprit
    c.n_rot = 2;
    c.n_vocab = 1;
    EREDU_TRY_VOID(validate_llama_config(c));
  }
  c.head_dim = n_embd / n_head;
  EREDU_TRY(auto n_rot,
            optional_u32(gguf, p + "rope.dimension_count", 1, kMaxEmbedding, c.head_dim));
  c.n_rot = n_rot;

  const std::string eps_key = p + "attention.layer_norm_rms_epsilon";
  if (gguf.find_metadata(eps_key) == nullptr) {
    return fail(config_error(eps_key, "missing (required by the llama family)"));
  }
  EREDU_TRY(auto eps, optional_positive_float(gguf, eps_key, 1e-5f));
  c.rms_eps = eps;
  EREDU_TRY(auto base, optional_positive_float(gguf, p + "rope.freq_base", 10000.0f));
  c.rope_freq_base = base;

  const std::string scaling_type_key = p + "rope.scaling.type";
  std::string scaling_type = "none";
  if (gguf.find_metadata(scaling_type_key) != nullptr) {
    auto value = gguf.get_string(scaling_type_key);
    if (!value) return fail(config_error(scaling_type_key, "expected a string"));
    scaling_type = std::string(*value);
  }
  EREDU_TRY(auto factor, optional_positive_float(gguf, p + "rope.scaling.factor", 1.0f));
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
    EREDU_TRY(auto v, required_u32(gguf, p + "vocab_size", 1, kMaxVocab));
    vocab = v;
  } else if (gguf.find_metadata("tokenizer.ggml.tokens") != nullptr) {
    EREDU_TRY(auto tokens, gguf.get_array("tokenizer.ggml.tokens"));
    vocab = tokens->size();
  } else {
    vocab = token_embd_rows;
  }
  if (vocab == 0 || vocab > kMaxVocab) {
    return fail(config_error(p + "vocab_size", "vocabulary size " + std::to_string(vocab) +
                                                   " is missing or outside [1, " +
                                                   std::to_string(kMaxVocab) + "]"));
  }
  c.n_vocab = static_cast<std::uint32_t>(vocab);
  EREDU_TRY_VOID(validate_llama_config(c));
  return c;
}

}  // namespace eredu::model::llama
