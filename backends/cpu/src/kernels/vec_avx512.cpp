// The AVX-512 table: the AVX2 primitives, with the kernels that have an AVX-512 form (avx512/*.cpp)
// replaced by it. This file only assembles the table and is built for the baseline; the table is
// selected at run time only when cpuid reports AVX-512 F/BW/VL/DQ and VNNI and the OS saves the
// AVX-512 register state (dispatch.cpp).
//
// Decode and batches of up to 16 tokens give exactly the AVX2 table's results (the K-quant products
// are bit-identical to their scalar definition on both; the Q4_0 / Q8_0 products perform the AVX2
// kernels' float steps on the same exact integers). Prompts (more than 16 tokens): the K-quant
// prompt tiles keep the definition's values, and the Q4_0 / Q5_0 / Q8_0 prompt tiles the AVX2
// table's own prompt numerics (exact block sums); the float prompt tiles (16-lane chains instead of
// 8-lane ones) differ from the AVX2 table by float rounding.
#include "eredu/backends/cpu/kernels.hpp"
#include "vec_ops.hpp"

namespace eredu::cpu::detail {

namespace {

QuantRowDot row_dot(DType dtype) {
  const QuantRowDot own = quant_row_dot_avx512(dtype);
  return own != nullptr ? own : vec_ops_avx2().quant_row_dot(dtype);
}

QuantGemm gemm(DType dtype) {
  const QuantGemm own = quant_gemm_avx512(dtype);
  return own != nullptr ? own : vec_ops_avx2().quant_gemm(dtype);
}

}  // namespace

const VecOps& vec_ops_avx512() noexcept {
  static const VecOps ops = [] {
    VecOps o = vec_ops_avx2();
    o.kquant_gemm = kquant_gemm_avx512;
    o.kquant_prompt_gemm = kquant_prompt_gemm_avx512;
    o.row_group_products = row_group_products_avx512;
    o.quant_row_dot = row_dot;
    o.quant_matvec = quant_matvec_avx512;
    o.quant_gemm = gemm;
    o.quant_prompt_gemm = quant_prompt_gemm_avx512;
    o.float_gemm = float_gemm_avx512;
    o.float_gemm_row_tile = kFloatGemmRowsAvx512;
    // Where 512-bit operations run as two 256-bit halves, a 512-bit F16 widening costs more than
    // two 256-bit ones, and the 8-lane tile outruns the 16-lane one (float_gemm_avx512.cpp).
    o.f16_gemm = cpu_features().avx512_split ? f16_gemm_avx512_half_width : f16_gemm_avx512;
    o.dot_f16_f16_tokens = dot_f16_f16_tokens_avx512;
    o.dot_bf16_bf16_tokens = dot_bf16_bf16_tokens_avx512;
    o.attention_block = attention_block_avx512;
    // AVX512_BF16 is not part of the table's requirements: its BF16 tile is chosen here, once.
    o.bf16_gemm = cpu_features().avx512bf16 ? bf16_dot_gemm_avx512 : bf16_gemm_avx512;
    return o;
  }();
  return ops;
}

}  // namespace eredu::cpu::detail
