// AVX-512 VNNI products of Q4_K weights laid out in groups of 16 rows (row_groups.hpp), for one
// token (decode) and for several (prompts, short batches). Each value is the definition's,
// reference::dot_q8_K, bit for bit: per 256-block the exact integer sums
//   isum = sum_u scale_u * (codes . activations)_u,  msum = sum_u min_u * (activation sum)_u
// over the 8 sub-blocks u of 32, then acc += (d xd) isum and acc += -(dmin xd) msum, block after
// block, one float chain per row (row r in lane r).
//
// One token, per block of a group: the low and high nibbles of a code vector are one 4-element
// slice of the 16 rows each, so a vpdpbusd with the slice's 4 activation bytes broadcast from
// memory adds 4 products to every row's lane (the slice sums stay exact: at most 32 products of
// 15 x 128 per sub-block). Per sub-block one vpmulld applies the 16 rows' scales (a 16-byte load,
// widened); the minimum term is 4 vpdpwssd of the rows' minimums (two per 32-bit lane) with the
// activation's 32-element sums, paired once per call. No lane is ever reduced across.
//
// Several tokens: each group's blocks are unpacked, once per call, into the prompt tiles' layout
// (kquant_prompt_groups_avx512.hpp: a byte per code, int32 scales, float d / dmin), and the prompt
// tile forms the same exact sums there; the row-group layout is that layout with the codes still
// packed, so the unpacking is two masks per vector.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "kquant_prompt_groups_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

using Block = Q4KRowGroupBlock;
static_assert(kRowGroupRows == kquant_tiles::kLanes, "a row group is a prompt tile's row group");

// The activation's 32-element sums, two per dword: pairs[4 b + p] holds sub-blocks 2p, 2p + 1 of
// block b as int16 (each at most 32 x 128 in magnitude), the operand of the minimums' vpdpwssd.
constexpr std::size_t kPairChunk = 64;  // blocks per pass: rows of up to 16384 columns at once

void pair_sums(const enc::BlockQ8_K* x, std::size_t n, std::int32_t* pairs) {
  const __m128i ones = _mm_set1_epi16(1);
  for (std::size_t b = 0; b < n; ++b) {
    const __m128i lo =
        _mm_madd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].bsums)), ones);
    const __m128i hi =
        _mm_madd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].bsums + 8)), ones);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(pairs + 4 * b), _mm_packs_epi32(lo, hi));
  }
}

inline __m512i broadcast4(const std::int8_t* q) {
  std::int32_t four;
  std::memcpy(&four, q, 4);
  return _mm512_set1_epi32(four);
}

// The exact integer sums of one block of a group, row r in lane r.
inline __m512i block_isum(const Block& gb, const enc::BlockQ8_K& x) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int u = 0; u < 8; ++u) {
    // Two chains (low and high nibbles) halve the dependent vpdpbusd steps per sub-block.
    __m512i lo = _mm512_setzero_si512();
    __m512i hi = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512i v = _mm512_load_si512(gb.codes[4 * u + k]);
      lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, low4), broadcast4(x.qs + 32 * u + 4 * k));
      hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), low4),
                               broadcast4(x.qs + 32 * u + 16 + 4 * k));
    }
    const __m512i scale =
        _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(gb.scales[u])));
    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(_mm512_add_epi32(lo, hi), scale));
  }
  return isum;
}

inline __m512i block_msum(const Block& gb, const std::int32_t* pairs) {
  __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    const __m512i mins =
        _mm512_cvtepu8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(gb.mins[p])));
    msum = _mm512_dpwssd_epi32(msum, mins, _mm512_set1_epi32(pairs[p]));
  }
  return msum;
}

inline __m512 halves_to_floats(const std::uint16_t* h) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
}

void decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
            float* y) {
  const auto* blocks = static_cast<const Block*>(groups);
  alignas(64) std::int32_t pairs[4 * kPairChunk];
  for (std::size_t b0 = 0; b0 < n_super; b0 += kPairChunk) {
    const std::size_t n = std::min(kPairChunk, n_super - b0);
    pair_sums(x + b0, n, pairs);
    for (std::size_t g = 0; g < n_groups; ++g) {
      const Block* gb = blocks + g * n_super + b0;
      float* yg = y + g * kRowGroupRows;
      __m512 acc = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(yg);
      for (std::size_t b = 0; b < n; ++b) {
        acc = kquant_tiles::finish_block<Q4K>(
            halves_to_floats(gb[b].d), halves_to_floats(gb[b].dmin), block_isum(gb[b], x[b0 + b]),
            block_msum(gb[b], pairs + 4 * b), x[b0 + b].d, acc);
      }
      _mm512_storeu_ps(yg, acc);
    }
  }
}

// One group's blocks in the prompt tiles' layout.
void unpack_group(const Block* gb, std::size_t n_super, kquant_tiles::GroupBlock* out) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (std::size_t b = 0; b < n_super; ++b) {
    kquant_tiles::GroupBlock& o = out[b];
    for (int u = 0; u < 8; ++u) {
      for (int k = 0; k < 4; ++k) {
        const __m512i v = _mm512_load_si512(gb[b].codes[4 * u + k]);
        _mm512_store_si512(o.codes[8 * u + k], _mm512_and_si512(v, low4));
        _mm512_store_si512(o.codes[8 * u + 4 + k], _mm512_and_si512(_mm512_srli_epi16(v, 4), low4));
      }
      _mm512_store_si512(
          o.scale[u],
          _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(gb[b].scales[u]))));
    }
    // The tiles' minimums are per 16 codes, two per dword: sub-block u's minimum twice.
    for (int u = 0; u < 8; ++u) {
      for (std::size_t r = 0; r < kRowGroupRows; ++r) {
        const auto m = static_cast<std::uint32_t>(gb[b].mins[u / 2][r][u % 2]);
        o.mins[u][r] = static_cast<std::int32_t>(m | (m << 16));
      }
    }
    _mm512_store_ps(o.d, halves_to_floats(gb[b].d));
    _mm512_store_ps(o.dmin, halves_to_floats(gb[b].dmin));
  }
}

void gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
          std::size_t n, float* y, std::size_t ldy) {
  using kquant_tiles::GroupBlock;
  using kquant_tiles::kLanes;
  using kquant_tiles::kTokens;
  const auto* blocks = static_cast<const Block*>(groups);
  GroupBlock* unpacked = group_scratch<GroupBlock>(n_groups * n_super);
  run_prompt_item<kLanes, kTokens>(
      n_groups * kLanes, n,
      [&](std::size_t g, std::size_t) {
        unpack_group(blocks + g * n_super, n_super, unpacked + g * n_super);
      },
      [&](std::size_t g, std::size_t, std::size_t t0, std::size_t rn, auto token) {
        const enc::BlockQ8_K* xt[kTokens];
        for (std::size_t t = 0; t < kTokens; ++t)
          xt[t] = x + token(t) * n_super;
        kquant_tiles::tile<Q4K, kTokens>(unpacked + g * n_super, n_super, xt, rn,
                                         static_cast<__mmask16>(0xFFFF), y + t0 * ldy + g * kLanes,
                                         ldy);
      });
}

}  // namespace

RowGroupProducts row_group_products_avx512(DType dtype) {
  if (dtype == DType::kQ4_K) return {decode, gemm};
  return {};
}

}  // namespace eredu::cpu::detail
