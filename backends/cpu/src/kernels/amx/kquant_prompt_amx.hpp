#pragma once
// Internal: the AMX prompt product for Q2_K, Q3_K, Q4_K, Q5_K and Q6_K weights, written against a
// tile-instruction policy `Tiles` (see quant_prompt_amx.hpp): HardwareTiles in
// kquant_prompt_amx.cpp, an emulation in the unit tests. Needs AVX-512 for the integer scaling and
// the float steps.
//
// Values: the AVX-512 prompt tiles' (avx512/kquant_prompt_avx512.cpp), hence each element's scalar
// definition (reference::dot_q8_K), bit for bit. Per 256-block, per scale unit (32 codes, or 16
// for Q3_K / Q6_K / Q2_K's units of 16), the exact dot of the unit's codes with the activation
// bytes, times the unit's scale, summed in int32; the minimum term from the activation's 16-element
// sums; then the definition's float steps (finish_block). Here one TDPBSSD forms a unit's 16 x 16
// dots for a 16-row group and 16 tokens: the codes (0..63, so as signed bytes too) are already the
// instruction's right-hand layout after the group's repack (dword g of row r at codes[g][r]), and
// the q8_K activation bytes are read in place, token t's block b at x + (t0 + t) * n_blocks + b.
// IQ4_XS, whose offset codes reach 241, stays on the AVX-512 tiles, as does a last tile of fewer
// than 16 tokens (8 tokens at a time: the same values).
//
// Registers (palette 1): tile 0 the int32 dots (16 tokens x 16 rows), tile 1 the 16 tokens'
// activation bytes of one unit (16 x 32 or 16 x 16 bytes), tile 2 the group's codes of the unit
// (8 or 4 rows of 64 bytes).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx512/kquant_prompt_groups_avx512.hpp"
#include "../avx512/row_groups_avx512.hpp"
#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "tile_config.hpp"

namespace eredu::cpu::detail {
namespace {

namespace kquant_tiles {

constexpr std::size_t kKQuantAmxTokens = 16;  // tokens per AMX tile: the dots tile's 16 rows

// The configuration for scale units of kUnitCodes codes.
template <int kUnitCodes>
constexpr TileConfig kquant_tile_config() {
  TileConfig c{};
  c.palette_id = 1;
  c.rows[0] = static_cast<std::uint8_t>(kKQuantAmxTokens);
  c.colsb[0] = static_cast<std::uint16_t>(kLanes * sizeof(std::int32_t));
  c.rows[1] = static_cast<std::uint8_t>(kKQuantAmxTokens);
  c.colsb[1] = kUnitCodes;
  c.rows[2] = kUnitCodes / 4;
  c.colsb[2] = static_cast<std::uint16_t>(kLanes * sizeof(std::int32_t));
  return c;
}
// In constant storage: LDTILECFG reads all 64 bytes from memory.
template <int kUnitCodes>
inline constexpr TileConfig kKQuantTileConfig = kquant_tile_config<kUnitCodes>();

template <typename F>
constexpr int kUnitCodesOf = F::kScalePer32 ? 32 : 16;

// The minimum term of one token's block: the rows' minimums (int16 pairs) against the token's
// 16-element activation sums.
inline __m512i min_sum(const GroupBlock& gb, const enc::BlockQ8_K& xb) {
  __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    std::int32_t two;
    std::memcpy(&two, xb.bsums + 2 * i, 4);
    msum = _mm512_dpwssd_epi32(msum, _mm512_load_si512(gb.mins[i]), _mm512_set1_epi32(two));
  }
  return msum;
}

// One 16-row group x 16 consecutive tokens (the first's blocks at x) over all blocks: token t's
// 16 row values go to y + t * ldy (the rows in `rows`).
template <typename Tiles, typename F>
void amx_kquant_group_tile(const GroupBlock* group, std::size_t n_blocks, const enc::BlockQ8_K* x,
                           __mmask16 rows, float* y, std::size_t ldy) {
  constexpr int kUnitCodes = kUnitCodesOf<F>;
  constexpr int kUnits = 256 / kUnitCodes;
  constexpr int kDwordsPerUnit = kUnitCodes / 4;
  const std::size_t x_stride = n_blocks * sizeof(enc::BlockQ8_K);  // bytes between tokens
  alignas(64) float acc[kKQuantAmxTokens][kLanes] = {};
  alignas(64) std::int32_t dots[kKQuantAmxTokens][kLanes];
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupBlock& gb = group[b];
    __m512i isum[kKQuantAmxTokens];
#pragma GCC unroll 16
    for (std::size_t t = 0; t < kKQuantAmxTokens; ++t)
      isum[t] = _mm512_setzero_si512();
    for (int u = 0; u < kUnits; ++u) {
      Tiles::template zero<0>();
      Tiles::template load<1>(x[b].qs + kUnitCodes * u, x_stride);
      Tiles::template load<2>(gb.codes[kDwordsPerUnit * u], sizeof gb.codes[0]);
      Tiles::template dpbssd<0, 1, 2>();
      Tiles::template store<0>(dots, sizeof dots[0]);
      const __m512i scale = _mm512_load_si512(gb.scale[u]);
#pragma GCC unroll 16
      for (std::size_t t = 0; t < kKQuantAmxTokens; ++t)
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(_mm512_load_si512(dots[t]), scale));
    }
    const __m512 d = _mm512_load_ps(gb.d);
    const __m512 dmin = _mm512_load_ps(gb.dmin);
#pragma GCC unroll 16
    for (std::size_t t = 0; t < kKQuantAmxTokens; ++t) {
      const enc::BlockQ8_K& xb = x[t * n_blocks + b];
      _mm512_store_ps(
          acc[t], finish_block<F>(d, dmin, isum[t], min_sum(gb, xb), xb.d, _mm512_load_ps(acc[t])));
    }
  }
#pragma GCC unroll 16
  for (std::size_t t = 0; t < kKQuantAmxTokens; ++t)
    _mm512_mask_storeu_ps(y + t * ldy, rows, _mm512_load_ps(acc[t]));
}

// The groups of an m-row item (repack(g, rows, out) lays group g out in the tiles' layout) times
// n tokens: 16-token AMX tiles, and a last tile of fewer tokens on the VNNI tile.
template <typename Tiles, typename F, typename Repack>
void amx_kquant_groups(std::size_t m, const enc::BlockQ8_K* x, std::size_t n_blocks, std::size_t n,
                       float* y, std::size_t ldy, Repack&& repack) {
  static_assert(F::kHasMin && !F::kSigned, "unsigned codes with a minimum term");
  GroupBlock* groups = group_scratch<GroupBlock>((m + kLanes - 1) / kLanes * n_blocks);
  Tiles::configure(kKQuantTileConfig<kUnitCodesOf<F>>);
  run_prompt_item<kLanes, kKQuantAmxTokens>(
      m, n, [&](std::size_t g, std::size_t rows) { repack(g, rows, groups + g * n_blocks); },
      [&](std::size_t g, std::size_t rows, std::size_t t0, std::size_t rn, auto token) {
        const auto mask = static_cast<__mmask16>((1U << rows) - 1U);
        float* yt = y + t0 * ldy + g * kLanes;
        if (rn == kKQuantAmxTokens) {
          amx_kquant_group_tile<Tiles, F>(groups + g * n_blocks, n_blocks, x + t0 * n_blocks, mask,
                                          yt, ldy);
          return;
        }
        for (std::size_t h = 0; h < rn; h += kTokens) {
          const enc::BlockQ8_K* xt[kTokens];
          for (std::size_t t = 0; t < kTokens; ++t)
            xt[t] = x + token(h + t) * n_blocks;
          const std::size_t hn = rn - h < kTokens ? rn - h : kTokens;
          tile<F, kTokens>(groups + g * n_blocks, n_blocks, xt, hn, mask, yt + h * ldy, ldy);
        }
      });
  Tiles::release();
}

// Weight rows as stored, repacked per work item.
template <typename Tiles, typename F>
void amx_kquant_prompt_gemm(const void* w, std::size_t w_stride, std::size_t m,
                            const enc::BlockQ8_K* x, std::size_t n_blocks, std::size_t n, float* y,
                            std::size_t ldy) {
  const auto* wb = static_cast<const std::byte*>(w);
  amx_kquant_groups<Tiles, F>(
      m, x, n_blocks, n, y, ldy, [&](std::size_t g, std::size_t rows, GroupBlock* out) {
        repack_group<F>(wb + g * kLanes * w_stride, w_stride, rows, n_blocks, out);
      });
}

// Row groups made at load (row_groups.hpp; L: row_groups::Q2KGroups .. Q6KGroups), unpacked per
// call: RowGroupGemm.
template <typename Tiles, typename L>
void amx_row_group_gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x,
                        std::size_t n_super, std::size_t n, float* y, std::size_t ldy) {
  const auto* blocks = static_cast<const typename L::Block*>(groups);
  amx_kquant_groups<Tiles, typename L::F>(n_groups * kLanes, x, n_super, n, y, ldy,
                                          [&](std::size_t g, std::size_t, GroupBlock* out) {
                                            L::unpack(blocks + g * n_super, n_super, out);
                                          });
}

// The AMX prompt product of an encoding's row groups, or null.
template <typename Tiles>
RowGroupGemm amx_row_group_gemm_for(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return amx_row_group_gemm<Tiles, row_groups::Q2KGroups>;
    case DType::kQ3_K:
      return amx_row_group_gemm<Tiles, row_groups::Q3KGroups>;
    case DType::kQ4_K:
      return amx_row_group_gemm<Tiles, row_groups::Q4KGroups>;
    case DType::kQ5_K:
      return amx_row_group_gemm<Tiles, row_groups::Q5KGroups>;
    case DType::kQ6_K:
      return amx_row_group_gemm<Tiles, row_groups::Q6KGroups>;
    default:
      return nullptr;
  }
}

// The product for a K-quant with tile policy Tiles; null for the other encodings (IQ4_XS
// included: its offset codes do not fit signed bytes).
template <typename Tiles>
KQuantGemm amx_kquant_prompt_gemm_for(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return amx_kquant_prompt_gemm<Tiles, Q2K>;
    case DType::kQ3_K:
      return amx_kquant_prompt_gemm<Tiles, Q3K>;
    case DType::kQ4_K:
      return amx_kquant_prompt_gemm<Tiles, Q4K>;
    case DType::kQ5_K:
      return amx_kquant_prompt_gemm<Tiles, Q5K>;
    case DType::kQ6_K:
      return amx_kquant_prompt_gemm<Tiles, Q6K>;
    default:
      return nullptr;
  }
}

}  // namespace kquant_tiles
}  // namespace
}  // namespace eredu::cpu::detail
