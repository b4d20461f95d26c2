#pragma once
// Internal, AVX-512 translation units only (avx512/kquant_prompt_avx512.cpp, amx/*.cpp): the
// 16-row groups of the K-quant and IQ4_XS prompt tiles, their repack, the definition's float steps
// and the VNNI token tile, shared by the AVX-512 prompt product and the AMX one (which forms the
// same exact integer sums on tiles, so the two agree bit for bit). Numerics and layout:
// kquant_prompt_avx512.cpp. Internal linkage (anonymous namespace), see vec_ops.hpp.
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

// Named, so that one translation unit (the AMX tests) can hold these and the block groups.
namespace kquant_tiles {

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

// The definition's float steps (block_step) for one token's block, lane by lane: the rows' d and
// dmin, the block's exact integer sums isum and msum, the token's activation scale xd.
template <typename F>
inline __m512 finish_block(__m512 d, __m512 dmin, __m512i isum, __m512i msum, float xd,
                           __m512 acc) {
  const __m512 xdv = _mm512_set1_ps(xd);
  const __m512 dd = _mm512_mul_ps(d, xdv);
  if constexpr (F::kSeparateMin) {
    acc = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(isum), acc);
    const __m512 dm = _mm512_xor_ps(_mm512_mul_ps(dmin, xdv), _mm512_set1_ps(-0.0F));
    return _mm512_fmadd_ps(dm, _mm512_cvtepi32_ps(msum), acc);
  } else {
    return _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(_mm512_sub_epi32(isum, msum)), acc);
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
    const __m512 d = _mm512_load_ps(gb.d);
    const __m512 dmin = _mm512_load_ps(gb.dmin);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t)
      acc[t] = finish_block<F>(d, dmin, isum[t], msum[t], xt[t][b].d, acc[t]);
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    if (static_cast<std::size_t>(t) < rn) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
  }
}

}  // namespace kquant_tiles
}  // namespace
}  // namespace eredu::cpu::detail
