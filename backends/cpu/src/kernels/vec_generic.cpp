// Baseline primitives: portable loops, no ISA extensions. Used on CPUs without AVX2.
#include "eredu/checkpoint/encoding/half.hpp"
#include "vec_ops.hpp"

namespace eredu::cpu::detail {

namespace {

// Eight interleaved partial sums combined pairwise: the same grouping the SIMD path uses, so both
// are well conditioned and neither depends on anything but n.
float dot_f32(const float* a, const float* b, std::size_t n) {
  float lanes[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l)
      lanes[l] += a[i + l] * b[i + l];
  }
  for (std::size_t l = 0; i < n; ++i, ++l)
    lanes[l] += a[i] * b[i];
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
         ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

void axpy_f32(float alpha, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
}

void f16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = encoding::fp16_to_fp32(src[i]);
}

QuantRowDot no_quant_row_dot(DType /*dtype*/) {
  return nullptr;
}

QuantGemm no_quant_gemm(DType /*dtype*/) {
  return nullptr;
}

constexpr VecOps kGenericOps{
    .dot_f32 = dot_f32,
    .axpy_f32 = axpy_f32,
    .f16_to_f32 = f16_to_f32,
    .f32_to_f16 = nullptr,
    .f32_to_bf16 = nullptr,
    .dot_f32_tokens = nullptr,
    .dot_f16_f16_tokens = nullptr,
    .dot_bf16_bf16_tokens = nullptr,
    .quantize_act_q8 = nullptr,
    .quant_row_dot = no_quant_row_dot,
    .quant_matvec = nullptr,
    .quantize_act_q8k = nullptr,
    .kquant_gemm = nullptr,
    .kquant_prompt_gemm = nullptr,
    .row_group_products = nullptr,
    .round_act_to_half = nullptr,
    .quant_gemm = no_quant_gemm,
    .quant_prompt_gemm = nullptr,
    .float_gemm = nullptr,
    .float_gemm_row_tile = 1,
    .f16_gemm = nullptr,
    .bf16_gemm = nullptr,
    .attention_scores = nullptr,
    .attention_weighted_sum = nullptr,
    .attention_softmax = nullptr,
    .silu_mul = nullptr,
    .attention_block = nullptr,
};

}  // namespace

const VecOps& vec_ops_generic() noexcept {
  return kGenericOps;
}

}  // namespace eredu::cpu::detail
