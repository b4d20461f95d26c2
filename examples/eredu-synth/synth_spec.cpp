#include "synth_spec.hpp"

#include <cctype>
#include <cmath>
#include <string>

#include "eredu/checkpoint/encoding/codec.hpp"

namespace eredu::synth {

std::optional<ModelShape> preset_shape(std::string_view name) {
  if (name == "smol135m") {
    return ModelShape{.hidden = 576,
                      .layers = 30,
                      .heads = 9,
                      .kv_heads = 3,
                      .head_dim = 64,
                      .ffn = 1536,
                      .vocab = 49152,
                      .context = 2048,
                      .rope_base = 100000.0f,
                      .rms_eps = 1e-5f};
  }
  if (name == "llama1b") {
    return ModelShape{.hidden = 2048,
                      .layers = 16,
                      .heads = 32,
                      .kv_heads = 8,
                      .head_dim = 64,
                      .ffn = 8192,
                      .vocab = 32000,
                      .context = 4096,
                      .rope_base = 10000.0f,
                      .rms_eps = 1e-5f};
  }
  return std::nullopt;
}

Result<void> validate(const ModelShape& s) {
  const auto positive = [](std::uint32_t v, const char* field) -> Result<void> {
    if (v == 0) {
      return fail(Error(ErrorCode::kInvalidArgument, std::string(field) + " must be positive")
                      .with_subject(field));
    }
    return ok();
  };
  EREDU_TRY_VOID(positive(s.hidden, "hidden"));
  EREDU_TRY_VOID(positive(s.layers, "layers"));
  EREDU_TRY_VOID(positive(s.heads, "heads"));
  EREDU_TRY_VOID(positive(s.kv_heads, "kv-heads"));
  EREDU_TRY_VOID(positive(s.head_dim, "head-dim"));
  EREDU_TRY_VOID(positive(s.ffn, "ffn"));
  EREDU_TRY_VOID(positive(s.context, "context"));
  if (s.heads % s.kv_heads != 0) {
    return fail(Error(ErrorCode::kInvalidArgument, "heads (" + std::to_string(s.heads) +
                                                       ") must be a multiple of kv-heads (" +
                                                       std::to_string(s.kv_heads) + ")")
                    .with_subject("kv-heads"));
  }
  if (s.vocab < kReservedTokens) {
    return fail(Error(ErrorCode::kInvalidArgument,
                      "vocab (" + std::to_string(s.vocab) + ") must hold at least the " +
                          std::to_string(kReservedTokens) +
                          " reserved tokens (<unk>, <s>, </s> and 256 byte tokens)")
                    .with_subject("vocab"));
  }
  if (!(std::isfinite(s.rope_base) && s.rope_base > 0.0f)) {
    return fail(Error(ErrorCode::kInvalidArgument, "rope-base must be finite and positive")
                    .with_subject("rope-base"));
  }
  if (!(std::isfinite(s.rms_eps) && s.rms_eps > 0.0f)) {
    return fail(Error(ErrorCode::kInvalidArgument, "rms-eps must be finite and positive")
                    .with_subject("rms-eps"));
  }
  return ok();
}

Result<DType> parse_encoding(std::string_view name) {
  std::string upper(name);
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // llama.cpp's mixture names (Q4_K_M, Q3_K_S, ...) denote K-quant files; name their base type.
  std::string base = upper;
  for (const char* suffix : {"_K_S", "_K_M", "_K_L"}) {
    if (base.size() > 4 && base.ends_with(suffix)) base = base.substr(0, base.size() - 2);
  }
  for (const DTypeInfo& info : all_dtypes()) {
    if (!info.ggml_type_id || info.name != base) continue;
    if (encoding::can_quantize(info.dtype)) return info.dtype;
    std::string writable;
    for (DType d : encoding::quantizable_dtypes())
      writable += (writable.empty() ? "" : ", ") + std::string(to_string(d));
    return fail(Error(ErrorCode::kUnsupported,
                      "no reference quantizer for " + upper + " exists in eredu (" +
                          std::string(info.name) +
                          " can be read but not written); writable types: " + writable)
                    .with_subject(upper));
  }
  return fail(
      Error(ErrorCode::kInvalidArgument,
            "unknown tensor type " + std::string(name) +
                " (expected F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, "
                "Q5_K, Q6_K, IQ4_NL or IQ4_XS)")
          .with_subject(std::string(name)));
}

Mixture parse_mixture(std::string_view name) {
  std::string upper(name);
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper == "Q4_K_M" || upper == "Q5_K_M" ? Mixture::kMedium : Mixture::kNone;
}

bool uses_more_bits(std::uint32_t layer, std::uint32_t layers) noexcept {
  const std::uint32_t eighth = layers / 8;
  return layer < eighth || layer >= 7 * layers / 8 ||
         (layer >= eighth && (layer - eighth) % 3 == 2);
}

std::uint32_t llama_file_type(DType dtype, Mixture mixture) noexcept {
  // LLAMA_FTYPE_MOSTLY_Q4_K_M = 15, MOSTLY_Q5_K_M = 17.
  if (mixture == Mixture::kMedium && dtype == DType::kQ4_K) return 15;
  if (mixture == Mixture::kMedium && dtype == DType::kQ5_K) return 17;
  // llama_ftype (llama.h): LLAMA_FTYPE_ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2,
  // MOSTLY_Q4_1 = 3, MOSTLY_Q8_0 = 7, MOSTLY_Q5_0 = 8, MOSTLY_Q5_1 = 9, MOSTLY_Q2_K = 10,
  // MOSTLY_Q3_K_S = 11, MOSTLY_Q4_K_S = 14, MOSTLY_Q5_K_S = 16, MOSTLY_Q6_K = 18,
  // MOSTLY_BF16 = 32. Without a mixture eredu writes every matrix in the one K-quant type, which
  // is nearest to llama.cpp's "small" (_S) variants.
  switch (dtype) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kQ4_0:
      return 2;
    case DType::kQ4_1:
      return 3;
    case DType::kQ8_0:
      return 7;
    case DType::kQ5_0:
      return 8;
    case DType::kQ5_1:
      return 9;
    case DType::kQ2_K:
      return 10;
    case DType::kQ3_K:
      return 11;
    case DType::kQ4_K:
      return 14;
    case DType::kQ5_K:
      return 16;
    case DType::kQ6_K:
      return 18;
    case DType::kBF16:
      return 32;
    case DType::kIQ4_NL:
      return 25;  // LLAMA_FTYPE_MOSTLY_IQ4_NL
    case DType::kIQ4_XS:
      return 30;  // LLAMA_FTYPE_MOSTLY_IQ4_XS
    default:
      return 1;  // not reached: parse_encoding admits only the types above
  }
}

}  // namespace eredu::synth
