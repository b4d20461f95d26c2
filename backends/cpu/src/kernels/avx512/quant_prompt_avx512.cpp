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
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/block_codes_avx2.hpp"
#include "../avx2/simd_avx2.hpp"
#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "transpose_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kLanes = 16;  // rows per group, one int32 lane each
constexpr int kTokens = 8;          // tokens per tile: 8 integer and 8 float accumulators

// One block of a 16-row group, repacked (with the rows' minimums for the affine encodings).
template <bool kAffine>
struct GroupBlock {
  alignas(64) std::int32_t codes[8][kLanes];  // 4 codes per row per dword
  alignas(64) std::int32_t start[kLanes];     // -128 * sum of the row's 32 codes
  alignas(64) float d[kLanes];                // the row's block scale
};
template <>
struct GroupBlock<true> : GroupBlock<false> {
  alignas(64) float m[kLanes];  // the row's block minimum
};

// Per encoding: a block's 32 codes as bytes, in element order (block_codes_avx2.hpp; Q5_0 holds
// most rows of a Q4_K_M file whose rows are not whole K-quant super-blocks, Q5_1 those of a
// Q5_K_M file), and whether it has a minimum.
struct Q4_0 : Q4_0SignedCodes {
  static constexpr bool kAffine = false;
};
struct Q5_0 : Q5_0SignedCodes {
  static constexpr bool kAffine = false;
};
struct Q8_0 : Q8_0SignedCodes {
  static constexpr bool kAffine = false;
};
struct IQ4_NL : IQ4_NLSignedCodes {
  static constexpr bool kAffine = false;
};
struct Q4_1 : Q4_1Codes {
  static constexpr bool kAffine = true;
};
struct Q5_1 : Q5_1Codes {
  static constexpr bool kAffine = true;
};

// Loads 16 halves and widens them.
inline __m512 widen16(const std::uint16_t (&h)[kLanes]) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
}

// Repacks rows [0, rows) (rows <= 16) of a group into out[0 .. n_blocks); missing rows are zero.
template <typename F>
void repack_group(const std::byte* w, std::size_t w_stride, std::size_t rows, std::size_t n_blocks,
                  GroupBlock<F::kAffine>* out) {
  auto row = [&](std::size_t r) {
    return reinterpret_cast<const typename F::Block*>(w + r * w_stride);
  };
  for (std::size_t b = 0; b < n_blocks; ++b) {
    __m512i z[8];
    alignas(32) std::uint16_t d[kLanes] = {};
    for (std::size_t r = 0; r < 8; ++r) {
      const __m256i lo = r < rows ? F::codes(row(r)[b]) : _mm256_setzero_si256();
      const __m256i hi = r + 8 < rows ? F::codes(row(r + 8)[b]) : _mm256_setzero_si256();
      z[r] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    for (std::size_t r = 0; r < rows; ++r)
      d[r] = row(r)[b].d;
    transpose_halves(z);
    GroupBlock<F::kAffine>& gb = out[b];
    if constexpr (F::kAffine) {
      alignas(32) std::uint16_t m[kLanes] = {};
      for (std::size_t r = 0; r < rows; ++r)
        m[r] = row(r)[b].m;
      _mm512_store_ps(gb.m, widen16(m));
    }
    __m512i sum = _mm512_setzero_si512();
    for (int g = 0; g < 8; ++g) {
      _mm512_store_si512(gb.codes[g], z[g]);
      sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(1), z[g]);  // the rows' code sums
    }
    _mm512_store_si512(gb.start,
                       _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum, 7)));
    _mm512_store_ps(gb.d, widen16(d));
  }
}

// A token tile's activations: token t's codes, scales and scaled sums.
template <int T>
struct TokenTile {
  const std::uint8_t* xu[T];
  const float* xd[T];
  const float* xs[T];
};

// One group of 16 rows x T tokens over all blocks: token t writes its 16 row values to
// y + t * ldy (the rows in `rows`), for t < rn.
template <typename F, int T>
void tile(const GroupBlock<F::kAffine>* group, std::size_t n_blocks, const TokenTile<T>& x,
          std::size_t rn, __mmask16 rows, float* y, std::size_t ldy) {
  __m512 acc[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t)
    acc[t] = _mm512_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupBlock<F::kAffine>& gb = group[b];
    const __m512i start = _mm512_load_si512(gb.start);
    __m512i sum[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t)
      sum[t] = start;
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m512i codes = _mm512_load_si512(gb.codes[g]);
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) {
        std::int32_t four;
        std::memcpy(&four, x.xu[t] + 32 * b + 4 * g, 4);
        sum[t] = _mm512_dpbusd_epi32(sum[t], _mm512_set1_epi32(four), codes);
      }
    }
    const __m512 wd = _mm512_load_ps(gb.d);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const __m512 scale = _mm512_mul_ps(wd, _mm512_set1_ps(x.xd[t][b]));
      acc[t] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(sum[t]), acc[t]);
      if constexpr (F::kAffine)
        acc[t] = _mm512_fmadd_ps(_mm512_load_ps(gb.m), _mm512_set1_ps(x.xs[t][b]), acc[t]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    if (static_cast<std::size_t>(t) < rn) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
  }
}

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
        TokenTile<kTokens> xt;
        for (std::size_t t = 0; t < kTokens; ++t) {
          xt.xu[t] = x.codes + token(t) * n_blocks * 32;
          xt.xd[t] = x.d + token(t) * n_blocks;
          xt.xs[t] = x.s + token(t) * n_blocks;
        }
        tile<F, kTokens>(groups + g * n_blocks, n_blocks, xt, rn,
                         static_cast<__mmask16>((1U << rows) - 1U), y + t0 * ldy + g * kLanes, ldy);
      });
}

}  // namespace

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
