#pragma once
// Internal: the AMX prompt product for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL weights, written
// against a tile-instruction policy `Tiles`: HardwareTiles (hardware_tiles.hpp) in
// quant_prompt_amx.cpp, and an emulation of the same instructions in the unit tests
// (tests/unit/cpu_amx), which run this code on CPUs without AMX. Needs AVX-512 for the float steps.
//
// Values: the AVX-512 prompt tiles' (avx512/quant_prompt_avx512.cpp) bit for bit. Both form, per
// (row, token) and block, the exact integer sum of the 32 code products (activations entering as
// unsigned, value + 128, and 128 * the row's code sum taken off), then run the same float steps
// (add_block) block after block. Only who forms the integers differs: here one TDPBUSD forms the
// 16 x 16 sums of a 16-row group and 16 tokens for a block (the group's repacked codes are already
// the instruction's right-hand layout: dword g of row r at codes[g][r], 8 rows of 64 bytes), where
// the VNNI tile spends 8 vpdpbusd per token. A last tile of fewer than 16 tokens runs the VNNI
// tile, 8 tokens at a time, so every element still gets the same value.
//
// Registers (palette 1): tile 0 the int32 sums (16 tokens x 16 rows), tile 1 the 16 tokens'
// activation codes for the block (16 x 32 bytes, read in place: token t's block b at
// codes + (t0 + t) * 32 * n_blocks + 32 * b), tile 2 the group's codes for the block (8 x 64).
#include <cstddef>
#include <cstdint>

#include "../avx512/quant_prompt_groups_avx512.hpp"
#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "tile_config.hpp"

namespace eredu::cpu::detail {
namespace {

namespace block_tiles {

constexpr std::size_t kAmxTokens = 16;  // tokens per AMX tile: the sums tile's 16 rows
constexpr int kSumsTile = 0;
constexpr int kActsTile = 1;
constexpr int kCodesTile = 2;

constexpr TileConfig prompt_tile_config() {
  TileConfig c{};
  c.palette_id = 1;
  c.rows[kSumsTile] = static_cast<std::uint8_t>(kAmxTokens);
  c.colsb[kSumsTile] = static_cast<std::uint16_t>(kLanes * sizeof(std::int32_t));
  c.rows[kActsTile] = static_cast<std::uint8_t>(kAmxTokens);
  c.colsb[kActsTile] = 32;  // one block of codes
  c.rows[kCodesTile] = 32 / 4;
  c.colsb[kCodesTile] = static_cast<std::uint16_t>(kLanes * sizeof(std::int32_t));
  return c;
}
// In constant storage: LDTILECFG reads all 64 bytes from memory.
inline constexpr TileConfig kPromptTileConfig = prompt_tile_config();

// One 16-row group x 16 consecutive tokens over all blocks: token t's codes start at
// xu + t * x_stride, its block scales and scaled sums at xd + t * n_blocks, xs + t * n_blocks; its
// 16 row values go to y + t * ldy (the rows in `rows`).
template <typename Tiles, typename F>
void amx_group_tile(const GroupBlock<F::kAffine>* group, std::size_t n_blocks,
                    const std::uint8_t* xu, std::size_t x_stride, const float* xd, const float* xs,
                    __mmask16 rows, float* y, std::size_t ldy) {
  __m512 acc[kAmxTokens];
#pragma GCC unroll 16
  for (std::size_t t = 0; t < kAmxTokens; ++t)
    acc[t] = _mm512_setzero_ps();
  alignas(64) std::int32_t sums[kAmxTokens][kLanes];
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupBlock<F::kAffine>& gb = group[b];
    Tiles::template zero<kSumsTile>();
    Tiles::template load<kActsTile>(xu + 32 * b, x_stride);
    Tiles::template load<kCodesTile>(gb.codes, sizeof gb.codes[0]);
    Tiles::template dpbusd<kSumsTile, kActsTile, kCodesTile>();
    Tiles::template store<kSumsTile>(sums, sizeof sums[0]);
    const __m512i start = _mm512_load_si512(gb.start);
    const __m512 wd = _mm512_load_ps(gb.d);
#pragma GCC unroll 16
    for (std::size_t t = 0; t < kAmxTokens; ++t) {
      const __m512i sum = _mm512_add_epi32(start, _mm512_load_si512(sums[t]));
      acc[t] = add_block<F>(gb, wd, sum, xd[t * n_blocks + b], xs[t * n_blocks + b], acc[t]);
    }
  }
#pragma GCC unroll 16
  for (std::size_t t = 0; t < kAmxTokens; ++t)
    _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
}

// One work item of m rows (groups of 16, repack(g, rows) filling group g's blocks in `groups`) x n
// tokens: the AMX tile for 16 tokens at a time, the VNNI tile for the last few.
template <typename Tiles, typename F, typename Repack>
void amx_prompt_item(GroupBlock<F::kAffine>* groups, std::size_t m, const PromptActivations& x,
                     std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy,
                     Repack&& repack) {
  const std::size_t x_stride = 32 * n_blocks;  // bytes of one token's codes
  Tiles::configure(kPromptTileConfig);
  run_prompt_item<kLanes, kAmxTokens>(
      m, n, repack,
      [&](std::size_t g, std::size_t rows, std::size_t t0, std::size_t rn, auto token) {
        const auto mask = static_cast<__mmask16>((1U << rows) - 1U);
        float* yt = y + t0 * ldy + g * kLanes;
        if (rn == kAmxTokens) {
          amx_group_tile<Tiles, F>(groups + g * n_blocks, n_blocks, x.codes + t0 * x_stride,
                                   x_stride, x.d + t0 * n_blocks, x.s + t0 * n_blocks, mask, yt,
                                   ldy);
          return;
        }
        for (std::size_t h = 0; h < rn; h += kTokens) {
          const std::size_t hn = rn - h < kTokens ? rn - h : kTokens;
          tile<F, kTokens>(groups + g * n_blocks, n_blocks,
                           token_tile<kTokens>(x, n_blocks, token, h), hn, mask, yt + h * ldy, ldy);
        }
      });
  Tiles::release();
}

// The rows as stored.
template <typename Tiles, typename F>
void amx_prompt_gemm(const void* w, std::size_t w_stride, std::size_t m, const PromptActivations& x,
                     std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  using Group = GroupBlock<F::kAffine>;
  Group* groups = group_scratch<Group>((m + kLanes - 1) / kLanes * n_blocks);
  const auto* wb = static_cast<const std::byte*>(w);
  amx_prompt_item<Tiles, F>(groups, m, x, n_blocks, n, y, ldy,
                            [&](std::size_t g, std::size_t rows) {
                              repack_group<F>(wb + g * kLanes * w_stride, w_stride, rows, n_blocks,
                                              groups + g * n_blocks);
                            });
}

// A load's row groups (row_groups.hpp), so that a prompt does not read the stored rows back.
template <typename Tiles, typename F>
void amx_group_prompt_gemm(const void* row_groups, std::size_t n_groups, const PromptActivations& x,
                           std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  using Group = GroupBlock<F::kAffine>;
  Group* groups = group_scratch<Group>(n_groups * n_blocks);
  amx_prompt_item<Tiles, F>(
      groups, n_groups * kLanes, x, n_blocks, n, y, ldy,
      [&](std::size_t g, std::size_t) { repack_row_group<F>(row_groups, g, n_blocks, groups); });
}

// The product for an encoding with tile policy Tiles, or null.
template <typename Tiles>
QuantPromptGemm amx_prompt_gemm_for(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return amx_prompt_gemm<Tiles, Q4_0>;
    case DType::kQ4_1:
      return amx_prompt_gemm<Tiles, Q4_1>;
    case DType::kQ5_0:
      return amx_prompt_gemm<Tiles, Q5_0>;
    case DType::kQ5_1:
      return amx_prompt_gemm<Tiles, Q5_1>;
    case DType::kQ8_0:
      return amx_prompt_gemm<Tiles, Q8_0>;
    case DType::kIQ4_NL:
      return amx_prompt_gemm<Tiles, IQ4_NL>;
    default:
      return nullptr;
  }
}

// The product of a load's row groups for an encoding with tile policy Tiles, or null.
template <typename Tiles>
RowGroupGemmQ8 amx_row_group_prompt_gemm_for(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return amx_group_prompt_gemm<Tiles, Q4_0>;
    case DType::kQ4_1:
      return amx_group_prompt_gemm<Tiles, Q4_1>;
    case DType::kQ5_0:
      return amx_group_prompt_gemm<Tiles, Q5_0>;
    case DType::kQ5_1:
      return amx_group_prompt_gemm<Tiles, Q5_1>;
    case DType::kQ8_0:
      return amx_group_prompt_gemm<Tiles, Q8_0>;
    case DType::kIQ4_NL:
      return amx_group_prompt_gemm<Tiles, IQ4_NL>;
    default:
      return nullptr;
  }
}

}  // namespace block_tiles
}  // namespace
}  // namespace eredu::cpu::detail
