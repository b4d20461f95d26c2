// The AMX table: the AVX-512 table with the prompt products of the 32-code block encodings (Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL; amx/quant_prompt_amx.cpp) and of the K-quants (Q2_K..Q6_K;
// amx/kquant_prompt_amx.cpp) on AMX int8 tiles, whose values are the AVX-512 prompt tiles' bit for
// bit; everything else, decode included, is the AVX-512 table's. K-quant weights are read from
// their row groups as on the AVX-512 table, their prompts on the AMX tiles.
// This file only assembles the table and is built for the baseline; dispatch.cpp selects it only
// when cpuid lists AMX-TILE and AMX-INT8, XCR0 has the tile state and the kernel granted this
// process tile data (arch_prctl(ARCH_REQ_XCOMP_PERM)).
#include "vec_ops.hpp"

namespace eredu::cpu::detail {

const VecOps& vec_ops_amx() noexcept {
  static const VecOps ops = [] {
    VecOps o = vec_ops_avx512();
    o.quant_prompt_gemm = quant_prompt_gemm_amx;
    o.kquant_prompt_gemm = kquant_prompt_gemm_amx;
    // Row groups: decode on the AVX-512 product, K-quant prompts on the AMX tiles.
    o.row_group_products = row_group_products_amx;
    return o;
  }();
  return ops;
}

}  // namespace eredu::cpu::detail
