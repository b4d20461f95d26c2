// AVX2 prompt tiles for the K-quants with unsigned codes (Q2_K..Q6_K): the products of more than
// kTokenTile tokens. Compiled with -mavx2 -mfma -mf16c like the other avx2/ units and reached only
// through vec_ops_avx2() (the AVX-512 table has its own, avx512/kquant_prompt_avx512.cpp).
//
// Each element is exactly its scalar definition (reference::dot_q8_K), as in kquant_avx2.cpp: per
// 256-block the exact integer sums isum = sum_u scale_u * (codes . activations)_u and
// msum = sum_j min_j * bsum_j, then the definition's one or two fused multiply-adds, block after
// block (tested bit for bit, test_kquant_dot.cpp).
//
// Layout: a work item first repacks its rows in groups of 8, once for all its tokens. Per block,
// 4-code slices of the 8 rows lie side by side (dword g of row r at codes[g][r]); per slice and
// token, _mm256_maddubs_epi16 multiplies the 8 rows' codes with the 4 activation bytes broadcast
// to every lane (two int16 pair sums per row, at most 2 * 63 * 128: no saturation), and
// _mm256_madd_epi16 with the rows' scale (as an int16 pair) adds the pair and applies the scale in
// one step. The minimum term is one _mm256_madd_epi16 per two 16-code units.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "kquant_codes_avx2.hpp"
#include "transpose_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

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
