// AMX prompt tiles for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL weights (quant_prompt_amx.hpp) on
// the hardware's tile instructions, for their rows as stored and their row groups. Compiled with
// the AVX-512 and AMX-TILE / AMX-INT8 flags (backends/cpu/CMakeLists.txt) and reached only through
// vec_ops_amx(), which dispatch.cpp selects only after cpuid lists AMX, XCR0 has the tile state and
// the kernel granted this process tile data (arch_prctl(ARCH_REQ_XCOMP_PERM)).
#include "quant_prompt_amx.hpp"
#include "hardware_tiles.hpp"

namespace eredu::cpu::detail {

QuantPromptGemm quant_prompt_gemm_amx(DType dtype) {
  return block_tiles::amx_prompt_gemm_for<HardwareTiles>(dtype);
}

RowGroupGemmQ8 row_group_prompt_gemm_amx(DType dtype) {
  return block_tiles::amx_row_group_prompt_gemm_for<HardwareTiles>(dtype);
}

}  // namespace eredu::cpu::detail
