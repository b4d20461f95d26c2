// AVX-512 VNNI one-token product (decode) of IQ4_NL weights laid out in groups of 16 rows
// (row_groups.hpp: Nibble32RowGroupPair), with the values of the row dot
// (reference::dot_iq4_nl_q8_0) bit for bit: per block of 32 the exact int32 sum of the codebook
// values times the activation codes, then acc = fma(fl(d_w x d_x), float(isum), acc), the blocks in
// order, one chain per row (row r in lane r).
//
// Why: the four-row product (iq4nl_matvec_avx512.cpp) reduces every row's lanes to one sum per
// block and runs a float step per row and block; one Zen 4 thread read 13 GB/s with it, from cache
// as from memory, the slowest one-token product of the AVX-512 table. Here a code vector holds a
// 4-element slice of all 16 rows per nibble (a 32-bit lane per row), so per block of 16 rows:
//   - 4 loads, each nibble looked up in the codebook shifted by +128 (one vpshufb: unsigned,
//     1 .. 241) and a vpdpbusd with the slice's 4 activation bytes broadcast from memory, which
//     adds 4 products to every row's lane: 8 of each, no lane ever reduced across;
//   - the shift's share, -128 x the block's activation sum, made once per call for all groups,
//     as the start of the block's sums;
//   - one conversion, one product of scales (16 F16 scales in one load) and one multiply-add for
//     all 16 rows.
// A group's pairs are one stream, hinted into L2 kGroupStreamAheadBytes ahead: without the hint
// one Zen 4 thread read 21-22 GB/s from memory instead of 27-28 (Matvec 16384 x 8192), though two
// threads on llama1b-shaped products read 33-36 GB/s without it and 29-33 with it in the slow
// memory state (row_groups_avx512.hpp: kStreamHinted). The last rows % 16 of a weight take the
// four-row product.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Activation blocks prepared per pass (even: whole pairs): rows of up to 16384 columns in one, as
// the K-quant row groups, so that each group is one stream. With 64 (a pass over all the groups
// per 2048 columns, each group's hint running past its pass) one Zen 4 thread read 13.9 GB/s from
// memory; with 512, 24.7-26.3.
constexpr std::size_t kChunk = 512;

inline __m512i broadcast4(const std::int8_t* p) {
  std::int32_t four;
  std::memcpy(&four, p, 4);
  return _mm512_set1_epi32(four);
}

// One block of 16 rows: its exact sums (two chains of four vpdpbusd, low and high nibbles), then
// the definition's float step.
inline __m512 block_step(const std::uint8_t (&codes)[4][64], const std::uint16_t (&d)[16],
                         const ActQ8Block& x, std::int32_t minus_shift, __m512i codebook,
                         __m512 acc) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  __m512i low = _mm512_set1_epi32(minus_shift);
  __m512i high = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i v = _mm512_load_si512(codes[k]);
    const __m512i lo = _mm512_shuffle_epi8(codebook, _mm512_and_si512(v, nibble));
    const __m512i hi =
        _mm512_shuffle_epi8(codebook, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble));
    low = _mm512_dpbusd_epi32(low, lo, broadcast4(x.qs + 4 * k));
    high = _mm512_dpbusd_epi32(high, hi, broadcast4(x.qs + 16 + 4 * k));
  }
  const __m512i isum = _mm512_add_epi32(low, high);
  const __m512 wd = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
  return _mm512_fmadd_ps(_mm512_mul_ps(wd, _mm512_set1_ps(x.d)), _mm512_cvtepi32_ps(isum), acc);
}

void decode(const void* groups, std::size_t n_groups, const ActQ8Block* x, std::size_t n_blocks,
            float* y) {
  const auto* pairs = static_cast<const Nibble32RowGroupPair*>(groups);
  const std::size_t n_pairs = (n_blocks + 1) / 2;
  alignas(16) std::uint8_t shifted[16];
  for (int i = 0; i < 16; ++i)
    shifted[i] = static_cast<std::uint8_t>(enc::kIQ4NLValues[i] + 128);
  const __m512i codebook =
      _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(shifted)));
  alignas(64) std::int32_t minus_shift[kChunk];
  for (std::size_t b0 = 0; b0 < n_blocks; b0 += kChunk) {
    const std::size_t n = std::min(kChunk, n_blocks - b0);
    for (std::size_t b = 0; b < n; ++b) {
      std::int32_t sum = 0;
      for (const std::int8_t q : x[b0 + b].qs)
        sum += q;
      minus_shift[b] = -128 * sum;
    }
    for (std::size_t g = 0; g < n_groups; ++g) {
      const Nibble32RowGroupPair* gp = pairs + g * n_pairs + b0 / 2;
      float* yg = y + g * kRowGroupRows;
      __m512 acc = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(yg);
      for (std::size_t b = 0; b < n; b += 2) {
        const Nibble32RowGroupPair& pair = gp[b / 2];
        const char* ahead = reinterpret_cast<const char*>(&pair) + kGroupStreamAheadBytes;
        for (std::size_t line = 0; line < sizeof(Nibble32RowGroupPair); line += 64)
          _mm_prefetch(ahead + line, _MM_HINT_T1);
        acc = block_step(pair.codes[0], pair.d[0], x[b0 + b], minus_shift[b], codebook, acc);
        if (b + 1 < n)
          acc = block_step(pair.codes[1], pair.d[1], x[b0 + b + 1], minus_shift[b + 1], codebook,
                           acc);
      }
      _mm512_storeu_ps(yg, acc);
    }
  }
}

}  // namespace

RowGroupDecodeQ8 iq4nl_row_group_decode_avx512() {
  return decode;
}

}  // namespace eredu::cpu::detail
