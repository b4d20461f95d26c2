// AVX-512 VNNI prompt tiles for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL weights: the products of
// more than kTokenTile tokens (a prompt), where a work item's rows are read by many tokens.
// Compiled with the AVX-512 flags (backends/cpu/CMakeLists.txt) and reached only through
// vec_ops_avx512().
//
// Numerics (tested bit for bit against this definition, test_quant_prompt_tiles.cpp): per
// (row, token), block after block, the exact integer dot S_b of the block's 32 codes with the 32
// activation bytes, then acc = fma(d_w * d_x, float(S_b), acc), and for Q4_1 / Q5_1 (value =
// d * code + m) acc = fma(m_w, s_x, acc) with s_x the activation block's scaled sum
// (ActQ8Block::s). The one-token row dots (quant_avx512.cpp) keep the AVX2 table's 8 float lanes
// per block instead; the two differ by float rounding, which is why short batches (a speculative
// verification) keep the row-dot tiles and give every token its one-token value.
//
// Layout: a work item first repacks its rows in groups of 16, once for all its tokens. Per block,
// 4-code slices of the 16 rows lie side by side (dword g of row r at codes[g][r]), so one vpdpbusd
// adds 4 products to each of 16 rows' sums for one token, the 4 activation bytes broadcast to every
// lane from memory: 8 instructions form a block's 16 exact sums, and one conversion, one product
// of scales and one fused multiply-add per 16 rows finish it. The tile that keeps the AVX2 lanes
// needs, per 8 rows x 2 tokens, two lanes' worth of conversion, scaling and accumulation per block.
//
// vpdpbusd multiplies unsigned by signed bytes: the activations enter as unsigned (value + 128,
// the sign bit flipped) and the codes as signed; the offset's share, 128 * (sum of the row's
// codes), is computed at the repack and is the start value of every token's sum.
//
// Weights the table laid out in row groups at load (row_groups.hpp: the pairs of blocks of 32, read
// by their one-token products) are repacked from those groups, not from the rows as stored: a
// group pair's code vectors already hold the 16 rows' dwords side by side, so the repack is a mask
// and a shift per vector, with an offset, a codebook look-up or the fifth bits (Q8_0: one xor), and
// a prompt never reads the stored rows, whose mapped pages the load let go (so a prompt does not
// bring a second copy of the weights back into memory).
#include <cstddef>

#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "quant_prompt_groups_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

using namespace block_tiles;

template <typename F>
void prompt_gemm(const void* w, std::size_t w_stride, std::size_t m, const PromptActivations& x,
                 std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  using Group = GroupBlock<F::kAffine>;
  Group* groups = group_scratch<Group>((m + kLanes - 1) / kLanes * n_blocks);
  const auto* wb = static_cast<const std::byte*>(w);
  run_prompt_item<kLanes, kTokens>(
      m, n,
      [&](std::size_t g, std::size_t rows) {
        repack_group<F>(wb + g * kLanes * w_stride, w_stride, rows, n_blocks,
                        groups + g * n_blocks);
      },
      [&](std::size_t g, std::size_t rows, std::size_t t0, std::size_t rn, auto token) {
        tile<F, kTokens>(groups + g * n_blocks, n_blocks,
                         token_tile<kTokens>(x, n_blocks, token, 0), rn,
                         static_cast<__mmask16>((1U << rows) - 1U), y + t0 * ldy + g * kLanes, ldy);
      });
}

template <typename F>
void group_prompt_gemm(const void* groups, std::size_t n_groups, const PromptActivations& x,
                       std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  using Group = GroupBlock<F::kAffine>;
  Group* unpacked = group_scratch<Group>(n_groups * n_blocks);
  run_prompt_item<kLanes, kTokens>(
      n_groups * kLanes, n,
      [&](std::size_t g, std::size_t) { repack_row_group<F>(groups, g, n_blocks, unpacked); },
      [&](std::size_t g, std::size_t, std::size_t t0, std::size_t rn, auto token) {
        tile<F, kTokens>(unpacked + g * n_blocks, n_blocks,
                         token_tile<kTokens>(x, n_blocks, token, 0), rn,
                         static_cast<__mmask16>(0xFFFF), y + t0 * ldy + g * kLanes, ldy);
      });
}

}  // namespace

RowGroupGemmQ8 row_group_prompt_gemm_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return group_prompt_gemm<Q4_0>;
    case DType::kIQ4_NL:
      return group_prompt_gemm<IQ4_NL>;
    case DType::kQ8_0:
      return group_prompt_gemm<Q8_0>;
    case DType::kQ4_1:
      return group_prompt_gemm<Q4_1>;
    case DType::kQ5_0:
      return group_prompt_gemm<Q5_0>;
    case DType::kQ5_1:
      return group_prompt_gemm<Q5_1>;
    default:
      return nullptr;
  }
}

QuantPromptGemm quant_prompt_gemm_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return prompt_gemm<Q4_0>;
    case DType::kQ4_1:
      return prompt_gemm<Q4_1>;
    case DType::kQ5_0:
      return prompt_gemm<Q5_0>;
    case DType::kQ5_1:
      return prompt_gemm<Q5_1>;
    case DType::kQ8_0:
      return prompt_gemm<Q8_0>;
    case DType::kIQ4_NL:
      return prompt_gemm<IQ4_NL>;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
