#pragma once
// Internal, AVX2 translation units only (avx2/*.cpp): the K-quant prompt tile (Q2_K..Q6_K) and the
// layout it reads, shared by the products of rows as stored (kquant_prompt_avx2.cpp, which repacks
// a work item's rows into it) and of row groups (row_groups_avx2.cpp,
// bit_pair_row_groups_avx2.cpp, which repack a group's halves into it: the groups' layout with the
// codes unpacked, a few masks per vector). Internal linkage (anonymous namespace), see vec_ops.hpp.
//
// Each element is exactly its scalar definition (reference::dot_q8_K): per 256-block the exact
// integer sums isum = sum_u scale_u * (codes . activations)_u and msum = sum_j min_j * bsum_j, then
// the definition's one or two fused multiply-adds, block after block.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {
namespace kquant_tile {
namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kLanes = 8;  // rows per group, one int32 lane each
constexpr int kTokens = 4;         // tokens per tile: 4 integer and 4 float accumulators

// One 256-block of an 8-row group, repacked.
struct GroupBlock {
  alignas(32) std::uint32_t codes[64][kLanes];  // 4 unsigned codes per row per dword
  alignas(32) std::uint32_t scale[16][kLanes];  // per scale unit, the row's scale twice (int16)
  alignas(32) std::int32_t mins[8][kLanes];     // the minimums of 16-code units 2i, 2i + 1 (int16)
  alignas(32) float d[kLanes];
  alignas(32) float dmin[kLanes];
};

inline __m256i load8(const void* p) {
  return _mm256_load_si256(static_cast<const __m256i*>(p));
}

// One group of 8 rows x T tokens over all blocks: token t (activation blocks at xt[t]) writes its
// row values to y + t * ldy (the first `rows`), for t < rn.
template <typename F, int T>
void tile(const GroupBlock* group, std::size_t n_blocks, const enc::BlockQ8_K* const (&xt)[T],
          std::size_t rn, std::size_t rows, float* y, std::size_t ldy) {
  constexpr int kUnits = F::kScalePer32 ? 8 : 16;
  constexpr int kDwordsPerUnit = 64 / kUnits;
  __m256 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
    acc[t] = _mm256_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupBlock& gb = group[b];
    __m256i isum[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
      isum[t] = _mm256_setzero_si256();
    for (int u = 0; u < kUnits; ++u) {
      const __m256i scale = load8(gb.scale[u]);
#pragma GCC unroll 8
      for (int g = 0; g < kDwordsPerUnit; ++g) {
        const int dword = u * kDwordsPerUnit + g;
        const __m256i codes = load8(gb.codes[dword]);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          std::int32_t four;
          std::memcpy(&four, xt[t][b].qs + 4 * dword, 4);
          const __m256i pairs = _mm256_maddubs_epi16(codes, _mm256_set1_epi32(four));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(pairs, scale));
        }
      }
    }
    __m256i msum[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
      msum[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m256i mins = load8(gb.mins[i]);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        std::int32_t two;
        std::memcpy(&two, xt[t][b].bsums + 2 * i, 4);
        msum[t] = _mm256_add_epi32(msum[t], _mm256_madd_epi16(mins, _mm256_set1_epi32(two)));
      }
    }
    // The definition's float steps (block_step), lane by lane.
    const __m256 d = _mm256_load_ps(gb.d);
    const __m256 dmin = _mm256_load_ps(gb.dmin);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m256 xd = _mm256_set1_ps(xt[t][b].d);
      const __m256 dd = _mm256_mul_ps(d, xd);
      if constexpr (F::kSeparateMin) {
        acc[t] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(isum[t]), acc[t]);
        const __m256 dm = _mm256_xor_ps(_mm256_mul_ps(dmin, xd), _mm256_set1_ps(-0.0F));
        acc[t] = _mm256_fmadd_ps(dm, _mm256_cvtepi32_ps(msum[t]), acc[t]);
      } else {
        acc[t] =
            _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(_mm256_sub_epi32(isum[t], msum[t])), acc[t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    if (static_cast<std::size_t>(t) >= rn) continue;
    if (rows == kLanes) {
      _mm256_storeu_ps(y + t * ldy, acc[t]);
    } else {
      alignas(32) float v[kLanes];
      _mm256_store_ps(v, acc[t]);
      std::memcpy(y + t * ldy, v, rows * sizeof(float));
    }
  }
}

// The products of weights in row groups of 16 (row_groups.hpp) for several tokens: each half group
// (8 rows, a tile's group) repacked once per call by repack_half(group's blocks, half, out: n_super
// blocks), then the tiles, 4 tokens at a time; y[t * ldy + 16 g + r].
template <typename F, typename Block, typename RepackHalf>
void row_group_gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x,
                    std::size_t n_super, std::size_t n, float* y, std::size_t ldy,
                    RepackHalf repack_half) {
  static_assert(2 * kLanes == kRowGroupRows, "a half group is a tile's group");
  const auto* blocks = static_cast<const Block*>(groups);
  GroupBlock* halves = group_scratch<GroupBlock>(2 * n_groups * n_super);
  run_prompt_item<kLanes, kTokens>(
      n_groups * kRowGroupRows, n,
      [&](std::size_t half, std::size_t) {
        repack_half(blocks + half / 2 * n_super, half % 2, halves + half * n_super);
      },
      [&](std::size_t half, std::size_t, std::size_t t0, std::size_t rn, auto token) {
        const enc::BlockQ8_K* xt[kTokens];
        for (std::size_t t = 0; t < kTokens; ++t)
          xt[t] = x + token(t) * n_super;
        tile<F, kTokens>(halves + half * n_super, n_super, xt, rn, kLanes,
                         y + t0 * ldy + half * kLanes, ldy);
      });
}

}  // namespace
}  // namespace kquant_tile
}  // namespace eredu::cpu::detail
