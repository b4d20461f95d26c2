// AVX2 prompt tiles for the K-quants with unsigned codes (Q2_K..Q6_K): the products of more than
// kTokenTile tokens. Compiled with -mavx2 -mfma -mf16c like the other avx2/ units and reached only
// through vec_ops_avx2() (the AVX-512 table has its own, avx512/kquant_prompt_avx512.cpp).
//
// Each element is exactly its scalar definition (reference::dot_q8_K), as in kquant_avx2.cpp: per
// 256-block the exact integer sums isum = sum_u scale_u * (codes . activations)_u and
// msum = sum_j min_j * bsum_j, then the definition's one or two fused multiply-adds, block after
// block (tested bit for bit, test_kquant_dot.cpp).
//
// Layout (kquant_prompt_tile_avx2.hpp): a work item first repacks its rows in groups of 8, once for
// all its tokens. Per block, 4-code slices of the 8 rows lie side by side (dword g of row r at
// codes[g][r]); per slice and token, _mm256_maddubs_epi16 multiplies the 8 rows' codes with the 4
// activation bytes broadcast to every lane (two int16 pair sums per row, at most 2 * 63 * 128: no
// saturation), and _mm256_madd_epi16 with the rows' scale (as an int16 pair) adds the pair and
// applies the scale in one step. The minimum term is one _mm256_madd_epi16 per two 16-code units.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "kquant_codes_avx2.hpp"
#include "kquant_prompt_tile_avx2.hpp"
#include "transpose_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

using kquant_tile::GroupBlock;
using kquant_tile::kLanes;
using kquant_tile::kTokens;
using kquant_tile::tile;

// Repacks rows [0, rows) (rows <= 8) of a group into out[0 .. n_blocks); missing rows are zero.
template <typename F>
void repack_group(const std::byte* w, std::size_t w_stride, std::size_t rows, std::size_t n_blocks,
                  GroupBlock* out) {
  constexpr int kUnits = F::kScalePer32 ? 8 : 16;
  const auto row = [&](std::size_t r) {
    return reinterpret_cast<const typename F::Block*>(w + r * w_stride);
  };
  for (std::size_t b = 0; b < n_blocks; ++b) {
    GroupBlock& gb = out[b];
    std::memset(static_cast<void*>(&gb.scale), 0, sizeof gb.scale + sizeof gb.mins);
    std::memset(static_cast<void*>(&gb.d), 0, sizeof gb.d + sizeof gb.dmin);
    for (std::size_t r = 0; r < rows; ++r) {
      Scales s;
      F::scales(row(r)[b], s);
      for (int u = 0; u < kUnits; ++u) {
        const auto scale = static_cast<std::uint16_t>(s.scale[F::kScalePer32 ? 2 * u : u]);
        gb.scale[u][r] = scale | (static_cast<std::uint32_t>(scale) << 16);
      }
      for (int i = 0; i < 8; ++i)
        std::memcpy(&gb.mins[i][r], &s.min[2 * i], 4);
      gb.d[r] = s.d;
      gb.dmin[r] = s.dmin;
    }
    for (int c = 0; c < 8; ++c) {
      __m256i z[8];
      for (std::size_t r = 0; r < kLanes; ++r)
        z[r] = r < rows ? F::codes(row(r)[b], c) : _mm256_setzero_si256();
      transpose8(z);
      for (int g = 0; g < 8; ++g)
        _mm256_store_si256(reinterpret_cast<__m256i*>(gb.codes[8 * c + g]), z[g]);
    }
  }
}

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
        tile<F, kTokens>(groups + g * n_blocks, n_blocks, xt, rn, rows, y + t0 * ldy + g * kLanes,
                         ldy);
      });
}

}  // namespace

KQuantGemm kquant_prompt_gemm_avx2(DType dtype) {
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
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
