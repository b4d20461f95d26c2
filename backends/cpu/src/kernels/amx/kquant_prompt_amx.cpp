// AMX prompt tiles for Q2_K..Q6_K weights (kquant_prompt_amx.hpp) on the hardware's tile
// instructions; IQ4_XS keeps the AVX-512 prompt tiles. Compiled with the AVX-512 and AMX-TILE /
// AMX-INT8 flags (backends/cpu/CMakeLists.txt) and reached only through vec_ops_amx().
#include "kquant_prompt_amx.hpp"
#include "hardware_tiles.hpp"

namespace eredu::cpu::detail {

KQuantGemm kquant_prompt_gemm_amx(DType dtype) {
  const KQuantGemm own = kquant_tiles::amx_kquant_prompt_gemm_for<HardwareTiles>(dtype);
  return own != nullptr ? own : kquant_prompt_gemm_avx512(dtype);
}

}  // namespace eredu::cpu::detail
