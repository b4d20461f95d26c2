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
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "kquant_codes_avx512.hpp"
#include "transpose_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

constexpr std::size_t kLanes = 16;  // rows per group, one int32 lane each
constexpr int kTokens = 8;          // tokens per tile

// IQ4_XS as the tiles take it: its codebook values (-127..113) plus 128 as unsigned codes, and
// the offset's share, 128 * scale * (sum of the 16 activations), as a minimum term of 128 * scale
// per 16 codes, subtracted from the integer sum before the one float step, as Q6_K's code offset
// is. The integer isum - msum is the definition's isum exactly, so the value is too.
struct IQ4XSOffset : IQ4XS {
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = false;
  static void scales(const Block& b, Scales& s) {
    IQ4XS::scales(b, s);
    for (int j = 0; j < 16; ++j)
      s.min[j] = static_cast<std::int16_t>(128 * s.scale[j]);
  }
  static __m512i codes(const Block& b, int p) {
    return _mm512_xor_si512(IQ4XS::codes(b, p), _mm512_set1_epi8(static_cast<char>(0x80)));
  }
};

// One 256-block of a 16-row group, repacked.
struct GroupBlock {
  alignas(64) std::uint32_t codes[64][kLanes];  // 4 unsigned codes per row per dword
  alignas(64) std::int32_t scale[16][kLanes];   // per scale unit (8 of 32 codes, or 16 of 16)
  alignas(64) std::int32_t mins[8][kLanes];     // the minimums of 16-code units 2i, 2i + 1 (int16)
  alignas(64) float d[kLanes];
  alignas(64) float dmin[kLanes];
};

// Repacks rows [0, rows) (rows <= 16) of a group into out[0 .. n_blocks); missing rows are zero.
template <typename F>
void repack_group(const std::byte* w, std::size_t w_stride, std::size_t rows, std::size_t n_blocks,
                  GroupBlock* out) {
  constexpr int kUnits = F::kScalePer32 ? 8 : 16;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    GroupBlock& gb = out[b];
    std::memset(static_cast<void*>(&gb.scale), 0, sizeof gb.scale + sizeof gb.mins);
    std::memset(static_cast<void*>(&gb.d), 0, sizeof gb.d + sizeof gb.dmin);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto& block = reinterpret_cast<const typename F::Block*>(w + r * w_stride)[b];
      Scales s;
      F::scales(block, s);
      for (int u = 0; u < kUnits; ++u)
        gb.scale[u][r] = s.scale[F::kScalePer32 ? 2 * u : u];
      for (int i = 0; i < 8; ++i)
        std::memcpy(&gb.mins[i][r], &s.min[2 * i], 4);
      gb.d[r] = s.d;
      gb.dmin[r] = s.dmin;
    }
    // Codes 64p .. 64p + 63 of the 16 rows: 16 dwords per row, transposed.
    for (int p = 0; p < 4; ++p) {
      __m512i z[16];
      for (std::size_t r = 0; r < kLanes; ++r) {
        z[r] = r < rows
                   ? F::codes(reinterpret_cast<const typename F::Block*>(w + r * w_stride)[b], p)
                   : _mm512_setzero_si512();
      }
      transpose16(z);
      for (int g = 0; g < 16; ++g)
        _mm512_store_si512(gb.codes[16 * p + g], z[g]);
    }
  }
}

// One group of 16 rows x T tokens over all blocks: token t (activation blocks at xt[t]) writes its
// 16 row values to y + t * ldy (the rows in `rows`), for t < rn.
template <typename F, int T>
void tile(const GroupBlock* group, std::size_t n_blocks, const enc::BlockQ8_K* const (&xt)[T],
          std::size_t rn, __mmask16 rows, float* y, std::size_t ldy) {
  constexpr int kUnits = F::kScalePer32 ? 8 : 16;
  constexpr int kDwordsPerUnit = 64 / kUnits;
  __m512 acc[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t)
    acc[t] = _mm512_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupBlock& gb = group[b];
    __m512i isum[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t)
      isum[t] = _mm512_setzero_si512();
    for (int u = 0; u < kUnits; ++u) {
      __m512i dot[T];
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t)
        dot[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int g = 0; g < kDwordsPerUnit; ++g) {
        const int dword = u * kDwordsPerUnit + g;
        const __m512i codes = _mm512_load_si512(gb.codes[dword]);
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) {
          std::int32_t four;
          std::memcpy(&four, xt[t][b].qs + 4 * dword, 4);
          dot[t] = _mm512_dpbusd_epi32(dot[t], codes, _mm512_set1_epi32(four));
        }
      }
      const __m512i scale = _mm512_load_si512(gb.scale[u]);
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t)
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot[t], scale));
    }
    __m512i msum[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t)
      msum[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m512i mins = _mm512_load_si512(gb.mins[i]);
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) {
        std::int32_t two;
        std::memcpy(&two, xt[t][b].bsums + 2 * i, 4);
        msum[t] = _mm512_dpwssd_epi32(msum[t], mins, _mm512_set1_epi32(two));
      }
    }
    // The definition's float steps (block_step), lane by lane.
    const __m512 d = _mm512_load_ps(gb.d);
    const __m512 dmin = _mm512_load_ps(gb.dmin);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m512 xd = _mm512_set1_ps(xt[t][b].d);
      const __m512 dd = _mm512_mul_ps(d, xd);
      if constexpr (F::kSeparateMin) {
        acc[t] = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(isum[t]), acc[t]);
        const __m512 dm = _mm512_xor_ps(_mm512_mul_ps(dmin, xd), _mm512_set1_ps(-0.0F));
        acc[t] = _mm512_fmadd_ps(dm, _mm512_cvtepi32_ps(msum[t]), acc[t]);
      } else {
        acc[t] =
            _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(_mm512_sub_epi32(isum[t], msum[t])), acc[t]);
      }
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    if (static_cast<std::size_t>(t) < rn) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
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
