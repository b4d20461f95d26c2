// Built with the AVX-512 flags (CMakeLists.txt beside this file), so it follows the backend's rule
// for ISA translation units (vec_ops.hpp): only the kernels' own headers, the emulation (C headers
// and plain types) and the declarations it defines; everything but those in an anonymous
// namespace.
#include "emulated_amx_kernels.hpp"

#include <cstring>

#include "amx/kquant_prompt_amx.hpp"
#include "amx/quant_prompt_amx.hpp"
#include "emulated_tiles.hpp"

namespace eredu::testing::amx {
namespace {

namespace detail = cpu::detail;

// A K-quant the AMX kernel takes on emulated tiles, the AVX-512 prompt tile otherwise (IQ4_XS).
detail::KQuantGemm emulated_kquant_prompt_gemm(DType dtype) {
  const detail::KQuantGemm own =
      detail::kquant_tiles::amx_kquant_prompt_gemm_for<EmulatedTiles>(dtype);
  return own != nullptr ? own : detail::kquant_prompt_gemm_avx512(dtype);
}

detail::RowGroupProducts emulated_row_group_products(DType dtype) {
  detail::RowGroupProducts p = detail::row_group_products_avx512(dtype);
  if (auto gemm = detail::kquant_tiles::amx_row_group_gemm_for<EmulatedTiles>(dtype)) p.gemm = gemm;
  if (auto gemm = detail::block_tiles::amx_row_group_prompt_gemm_for<EmulatedTiles>(dtype))
    p.gemm_q8 = gemm;
  return p;
}

}  // namespace

cpu::detail::VecOps avx512_ops_with_emulated_amx_prompts() {
  detail::VecOps ops = detail::vec_ops_avx512();
  ops.quant_prompt_gemm = detail::block_tiles::amx_prompt_gemm_for<EmulatedTiles>;
  ops.kquant_prompt_gemm = emulated_kquant_prompt_gemm;
  return ops;
}

cpu::detail::VecOps avx512_ops_with_emulated_amx_row_groups() {
  detail::VecOps ops = detail::vec_ops_avx512();
  ops.row_group_products = emulated_row_group_products;
  return ops;
}

EmulationReport emulated_amx_report() {
  EmulationReport report{};
  report.products = EmulatedTiles::products().load();
  report.faults = EmulatedTiles::faults().count.load();
  std::memcpy(report.first_fault, EmulatedTiles::faults().first, sizeof report.first_fault);
  return report;
}

}  // namespace eredu::testing::amx
