// AVX-512 VNNI prompt tiles for the K-quants (Q2_K..Q6_K) and IQ4_XS: the products of more than
// kTokenTile tokens. Compiled with the AVX-512 flags (backends/cpu/CMakeLists.txt) and
// reached only through vec_ops_avx512().
//
// Each element is exactly its scalar definition (reference::dot_q8_K), as in kquant_avx512.cpp:
// per 256-block the exact integer sums isum = sum_u scale_u * (codes . activations)_u and
// msum = sum_j min_j * bsum_j, then the definition's one or two fused multiply-adds, block after
// block. Only the way the integers are formed differs, so prompts, short batches and decode give
// the same values (tested bit for bit against the definition, test_kquant_dot.cpp).
//
// Layout: a work item first repacks its rows in groups of 16, once for all its tokens. Per block,
// 4-code slices of the 16 rows lie side by side (dword g of row r at codes[g][r]), so one vpdpbusd
// adds 4 products to each of 16 rows' sums for one token (the 4 activation bytes broadcast to every
// lane from memory); per scale unit (32 or 16 codes) one vpmulld applies the 16 rows' scales, and
// 8 vpdpwssd form the minimum term from the activation's 16-element sums. The tiles that keep one
// (row, token) per accumulator spend most of their time reducing lanes and unpacking scales.
#include <cstddef>

#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "kquant_prompt_groups_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

using namespace kquant_tiles;

template <typename F>
void prompt_gemm(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
                 std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  static_assert(F::kHasMin && !F::kSigned, "unsigned codes with a minimum term");
  GroupBlock* groups = group_scratch<GroupBlock>((m + kLanes - 1) / kLanes * n_blocks);
  const auto* wb = static_cast<const std::byte*>(w);
  run_prompt_item<kLanes, kTokens>(
      m, n,
      [&](std::size_t g, std::size_t rows) {
        repack_group<F>(wb + g * kLanes * w_stride, w_stride, rows, n_blocks,
                        groups + g * n_blocks);
      },
      [&](std::size_t g, std::size_t rows, std::size_t t0, std::size_t rn, auto token) {
        const enc::BlockQ8_K* xt[kTokens];
        for (std::size_t t = 0; t < kTokens; ++t)
          xt[t] = x + token(t) * n_blocks;
        tile<F, kTokens>(groups + g * n_blocks, n_blocks, xt, rn,
                         static_cast<__mmask16>((1U << rows) - 1U), y + t0 * ldy + g * kLanes, ldy);
      });
}

}  // namespace

KQuantGemm kquant_prompt_gemm_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return prompt_gemm<Q2K>;
    case DType::kQ3_K:
      return prompt_gemm<Q3K>;
    case DType::kQ4_K:
      return prompt_gemm<Q4K>;
    case DType::kQ5_K:
      return prompt_gemm<Q5K>;
    case DType::kQ6_K:
      return prompt_gemm<Q6K>;
    case DType::kIQ4_XS:
      return prompt_gemm<IQ4XSOffset>;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
