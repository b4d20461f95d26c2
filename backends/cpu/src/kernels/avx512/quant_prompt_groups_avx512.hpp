#pragma once
// Internal, AVX-512 translation units only (avx512/quant_prompt_avx512.cpp, amx/*.cpp): the
// 16-row groups of the Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL prompt tiles, their repack (from
// the rows as stored, or from a load's row groups) and the VNNI token tile, shared by the AVX-512
// prompt product and the AMX one (which computes the same exact block sums on tiles and finishes
// them with the same float steps, so the two agree bit for bit). Numerics and layout:
// quant_prompt_avx512.cpp. Internal linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../avx2/block_codes_avx2.hpp"
#include "../avx2/simd_avx2.hpp"
#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "block32_slices_avx512.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "transpose_avx512.hpp"

namespace eredu::cpu::detail {
namespace {

// Named, so that one translation unit (the AMX tests) can hold these and the K-quant groups.
namespace block_tiles {

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
// Q5_K_M file), whether it has a minimum, and the layout of its row groups (row_groups.hpp), which
// the AVX-512 prompt product repacks where a load made them.
struct Q4_0 : Q4_0SignedCodes {
  static constexpr bool kAffine = false;
  using GroupPair = Nibble32RowGroupPair;
};
struct Q5_0 : Q5_0SignedCodes {
  static constexpr bool kAffine = false;
  using GroupPair = Q5_0RowGroupPair;
};
struct Q8_0 : Q8_0SignedCodes {
  static constexpr bool kAffine = false;
  using GroupPair = Q8_0RowGroupPair;
};
struct IQ4_NL : IQ4_NLSignedCodes {
  static constexpr bool kAffine = false;
  using GroupPair = Nibble32RowGroupPair;
};
struct Q4_1 : Q4_1Codes {
  static constexpr bool kAffine = true;
  using GroupPair = Q4_1RowGroupPair;
};
struct Q5_1 : Q5_1Codes {
  static constexpr bool kAffine = true;
  using GroupPair = Q5_1RowGroupPair;
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

template <typename F>
using GroupPairOf = typename F::GroupPair;

// Slice j of half h of a group pair as the prompt tiles' codes (F::codes): Q4_0's nibble - 8,
// IQ4_NL's codebook value, Q8_0's byte - 128, Q4_1's nibble, Q5_0's 5-bit code - 16, Q5_1's code.
template <typename F>
inline __m512i tile_codes(const GroupPairOf<F>& p, std::size_t h, int j) {
  if constexpr (std::is_same_v<F, Q8_0>) {
    return _mm512_xor_si512(_mm512_load_si512(p.codes[h][j]), _mm512_set1_epi8(-128));
  } else if constexpr (std::is_same_v<F, Q4_0>) {
    return _mm512_sub_epi8(low_bits(p.codes[h], j), _mm512_set1_epi8(8));
  } else if constexpr (std::is_same_v<F, IQ4_NL>) {
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm256_castsi256_si128(iq4nl_table())),
                               low_bits(p.codes[h], j));
  } else if constexpr (std::is_same_v<F, Q4_1>) {
    return low_bits(p.codes[h], j);
  } else if constexpr (std::is_same_v<F, Q5_0>) {
    return _mm512_sub_epi8(five_bits(p.codes[h], p.high[h], j), _mm512_set1_epi8(16));
  } else {
    static_assert(std::is_same_v<F, Q5_1>);
    return five_bits(p.codes[h], p.high[h], j);
  }
}

// One group's n_blocks blocks from its pairs into the prompt tiles' GroupBlock: slice j is dword j
// of every row.
template <typename F>
void repack_pairs(const GroupPairOf<F>* pairs, std::size_t n_blocks, GroupBlock<F::kAffine>* out) {
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupPairOf<F>& pair = pairs[b / 2];
    const std::size_t h = b % 2;
    GroupBlock<F::kAffine>& gb = out[b];
    __m512i sum = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m512i codes = tile_codes<F>(pair, h, j);
      _mm512_store_si512(gb.codes[j], codes);
      sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(1), codes);  // the rows' code sums
    }
    _mm512_store_si512(gb.start,
                       _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum, 7)));
    _mm512_store_ps(gb.d, widen16(pair.d[h]));
    if constexpr (F::kAffine) _mm512_store_ps(gb.m, widen16(pair.m[h]));
  }
}

// Row group g of a load's row groups (n_blocks blocks each, as ceil(n_blocks / 2) pairs) into
// its n_blocks GroupBlocks of `out`, the repacked groups laid end to end.
template <typename F>
void repack_row_group(const void* row_groups, std::size_t g, std::size_t n_blocks,
                      GroupBlock<F::kAffine>* out) {
  const auto* pairs = static_cast<const GroupPairOf<F>*>(row_groups);
  repack_pairs<F>(pairs + g * ((n_blocks + 1) / 2), n_blocks, out + g * n_blocks);
}

// One block's float steps for one token: the 16 rows' exact sums `sum` (the codes' products with
// the token's activation codes, offset included) scaled by the rows' scales `wd` times the token's
// scale xd, then for the affine encodings the rows' minimums times the token's scaled sum xs.
template <typename F>
inline __m512 add_block(const GroupBlock<F::kAffine>& gb, __m512 wd, __m512i sum, float xd,
                        float xs, __m512 acc) {
  const __m512 scale = _mm512_mul_ps(wd, _mm512_set1_ps(xd));
  acc = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(sum), acc);
  if constexpr (F::kAffine) acc = _mm512_fmadd_ps(_mm512_load_ps(gb.m), _mm512_set1_ps(xs), acc);
  return acc;
}

// A token tile's activations: token t's codes, scales and scaled sums.
template <int T>
struct TokenTile {
  const std::uint8_t* xu[T];
  const float* xd[T];
  const float* xs[T];
};

// The tile of the T tokens token(first), ..., token(first + T - 1) (token: run_prompt_item's map).
template <int T, typename Token>
TokenTile<T> token_tile(const PromptActivations& x, std::size_t n_blocks, Token&& token,
                        std::size_t first) {
  TokenTile<T> xt;
  for (std::size_t t = 0; t < static_cast<std::size_t>(T); ++t) {
    const std::size_t i = token(first + t);
    xt.xu[t] = x.codes + i * n_blocks * 32;
    xt.xd[t] = x.d + i * n_blocks;
    xt.xs[t] = x.s + i * n_blocks;
  }
  return xt;
}

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
    for (int t = 0; t < T; ++t)
      acc[t] = add_block<F>(gb, wd, sum[t], x.xd[t][b], x.xs[t][b], acc[t]);
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    if (static_cast<std::size_t>(t) < rn) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
  }
}

}  // namespace block_tiles
}  // namespace
}  // namespace eredu::cpu::detail
