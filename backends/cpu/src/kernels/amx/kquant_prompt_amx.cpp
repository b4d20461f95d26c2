// AMX prompt tiles for Q2_K..Q6_K weights (kquant_prompt_amx.hpp) on the hardware's tile
// instructions, and for their row groups (decode keeps the AVX-512 row-group product); IQ4_XS keeps
// the AVX-512 prompt tiles, for its rows and its row groups alike. Compiled with the AVX-512 and
// AMX-TILE / AMX-INT8 flags (backends/cpu/CMakeLists.txt) and reached only through vec_ops_amx().
#include "kquant_prompt_amx.hpp"
#include "hardware_tiles.hpp"

namespace eredu::cpu::detail {

KQuantGemm kquant_prompt_gemm_amx(DType dtype) {
  const KQuantGemm own = kquant_tiles::amx_kquant_prompt_gemm_for<HardwareTiles>(dtype);
  return own != nullptr ? own : kquant_prompt_gemm_avx512(dtype);
}

RowGroupProducts row_group_products_amx(DType dtype) {
  RowGroupProducts p = row_group_products_avx512(dtype);
  // IQ4_XS has no AMX product (its offset codes do not fit signed bytes): its groups keep the
  // AVX-512 prompt product, as its rows do on this table.
  if (RowGroupGemm amx = kquant_tiles::amx_row_group_gemm_for<HardwareTiles>(dtype); amx != nullptr)
    p.gemm = amx;
  // The encodings with blocks of 32: the AMX product of their groups (quant_prompt_amx.cpp).
  if (RowGroupGemmQ8 amx = row_group_prompt_gemm_amx(dtype); amx != nullptr) p.gemm_q8 = amx;
  return p;
}

}  // namespace eredu::cpu::detail
