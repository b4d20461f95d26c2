#pragma once
// Internal, AVX-512 translation units only (avx512/row_groups_avx512.cpp, amx/*.cpp): per encoding
// with row groups (row_groups.hpp), how a block's exact integer sums are formed for one token and
// how a group unpacks into the 16-row prompt tiles' layout (kquant_prompt_groups_avx512.hpp),
// shared by the AVX-512 products of row groups and the AMX prompt product. Internal linkage
// (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../row_groups.hpp"
#include "kquant_prompt_groups_avx512.hpp"

namespace eredu::cpu::detail {
namespace {

namespace row_groups {

using kquant_tiles::GroupBlock;

// kStreamHinted: whether a decode hints a group's blocks into L2 kGroupStreamAheadBytes ahead.
// Every layout here is read front to back as one stream (the top bits of Q3_K, Q5_K and Q6_K beside
// their low bits, sub-block after sub-block); for Q4_K, Q5_K, Q6_K and IQ4_XS the hardware
// prefetchers follow it and one prefetch per line only costs, while Q2_K and Q3_K, the slowest to
// compute per byte, still gain from it. On a Zen 4 guest, without the hint against with it:
//   - llama1b-shaped products streamed from memory, 2 threads, interleaved in one process with a
//     read test of 56-64 GB/s: Q4_K 43-47 GB/s against 36-38, IQ4_XS 46-47 / 36-37, Q6_K 43-46 /
//     36-37, Q5_K 37-40 / 35, Q2_K 36-39 either way, Q3_K 31-35 / 34-38;
//   - eredu_bench_cpu_kernels Matvec 16384 x 8192 (memory, read test 35 GB/s), 1 / 2 threads:
//     Q4_K 25-27 / 49-51 against 21-24 / 32-39, Q6_K 24-26 / 45-49 against 22-23 / 29-35, IQ4_XS
//     28-33 / 53-55 against 23-27 / 33, Q2_K 17-18 / 34-35 against 28-29 / 50-59.
// Laid out as two planes (all low bits, then 2 KiB on all top bits), Q5_K and Q6_K needed the hint:
// without, 21-22 GB/s.

inline __m512i broadcast4(const std::int8_t* q) {
  std::int32_t four;
  std::memcpy(&four, q, 4);
  return _mm512_set1_epi32(four);
}
inline __m512 halves_to_floats(const std::uint16_t* h) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
}

// Sub-block u's exact sums (32 codes) for the 16 rows: codes(k, lo, hi) gives code vector 4u + k's
// two slices (elements 32u + 4k + i and 32u + 16 + 4k + i), in two chains (low and high slices),
// which halves the dependent vpdpbusd steps.
template <typename Codes>
inline __m512i sub_block_dot(const enc::BlockQ8_K& x, int u, Codes codes) {
  __m512i lo = _mm512_setzero_si512();
  __m512i hi = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    __m512i cl;
    __m512i ch;
    codes(k, cl, ch);
    lo = _mm512_dpbusd_epi32(lo, cl, broadcast4(x.qs + 32 * u + 4 * k));
    hi = _mm512_dpbusd_epi32(hi, ch, broadcast4(x.qs + 32 * u + 16 + 4 * k));
  }
  return _mm512_add_epi32(lo, hi);
}

// Q4_K and Q5_K (Q4_K's codes with their fifth bits beside them): isum = sum_u scale_u * dot_u,
// msum = sum_u min_u * (the activation's 32-element sum u).
template <typename B, typename Codes>
struct K4Groups {
  using Block = B;
  using F = Codes;
  static constexpr bool kFifthBit = std::is_same_v<B, Q5KRowGroupBlock>;
  static constexpr bool kStreamHinted = false;  // one plane (Q5_K: sub-block after sub-block)
  // Per activation block, made once per call: its 32-element sums two per dword (sub-blocks 2p,
  // 2p + 1 as int16, each at most 32 x 128 in magnitude), the operand of the minimums' vpdpwssd.
  static constexpr std::size_t kPrepared = 4;
  static void prepare(const enc::BlockQ8_K& x, std::int32_t* out) {
    const __m128i ones = _mm_set1_epi16(1);
    const __m128i lo =
        _mm_madd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums)), ones);
    const __m128i hi =
        _mm_madd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums + 8)), ones);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_packs_epi32(lo, hi));
  }
  // The codes of code vector 4u + k's two slices (elements 32u + 4k + i: low nibbles, 32u + 16 +
  // 4k + i: high nibbles), Q5_K's fifth bits (bits k and 4 + k of units[u].high) moved to bit 4.
  // 16-bit shifts: what crosses from the neighbouring byte lands outside bit 4, which the mask
  // keeps.
  static void codes(const Block& gb, int u, int k, __m512i& lo, __m512i& hi) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i v = _mm512_load_si512(code_vector(gb, u, k));
    if constexpr (kFifthBit) {
      const __m512i bit4 = _mm512_set1_epi8(0x10);
      const __m512i high = _mm512_load_si512(gb.units[u].high);
      lo = and_or(v, _mm512_and_si512(_mm512_slli_epi16(high, static_cast<unsigned>(4 - k)), bit4),
                  low4);
      hi = and_or(_mm512_srli_epi16(v, 4),
                  _mm512_and_si512(_mm512_srli_epi16(high, static_cast<unsigned>(k)), bit4), low4);
    } else {
      lo = _mm512_and_si512(v, low4);
      hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    }
  }
  // A slice's sum stays exact: at most 32 products of 31 x 128 per sub-block; per sub-block one
  // vpmulld applies the 16 rows' scales.
  static __m512i isum(const Block& gb, const enc::BlockQ8_K& x, const std::int32_t*) {
    __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int u = 0; u < 8; ++u) {
      const __m512i dot =
          sub_block_dot(x, u, [&](int k, __m512i& lo, __m512i& hi) { codes(gb, u, k, lo, hi); });
      const __m512i scale =
          _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(gb.scales[u])));
      isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(dot, scale));
    }
    return isum;
  }
  static __m512i msum(const Block& gb, const std::int32_t* pairs) {
    __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m512i mins =
          _mm512_cvtepu8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(gb.mins[p])));
      msum = _mm512_dpwssd_epi32(msum, mins, _mm512_set1_epi32(pairs[p]));
    }
    return msum;
  }
  static __m512 dmin(const Block& gb) {
    return halves_to_floats(gb.dmin);
  }

  // One group's blocks in the prompt tiles' layout: code vector 4u + k's slices are the tiles'
  // 4-code slices 8u + k and 8u + 4 + k, the scale and minimum bytes widen to the tiles' int32
  // scales and int16 minimum pairs, d and dmin to floats.
  static void unpack(const Block* gb, std::size_t n_super, GroupBlock* out) {
    for (std::size_t b = 0; b < n_super; ++b) {
      GroupBlock& o = out[b];
      for (int u = 0; u < 8; ++u) {
        for (int k = 0; k < 4; ++k) {
          __m512i lo;
          __m512i hi;
          codes(gb[b], u, k, lo, hi);
          _mm512_store_si512(o.codes[8 * u + k], lo);
          _mm512_store_si512(o.codes[8 * u + 4 + k], hi);
        }
        _mm512_store_si512(o.scale[u], _mm512_cvtepu8_epi32(_mm_load_si128(
                                           reinterpret_cast<const __m128i*>(gb[b].scales[u]))));
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
};
using Q4KGroups = K4Groups<Q4KRowGroupBlock, Q4K>;
using Q5KGroups = K4Groups<Q5KRowGroupBlock, Q5K>;

// Q6_K: the definition's isum - msum = sum_j scale_j * (dot_j - 32 * (activation sum j)) over the
// 16 units of 16 (codes are value + 32), formed directly: one integer sum and one float step.
struct Q6KGroups {
  using Block = Q6KRowGroupBlock;
  using F = Q6K;
  // Per activation block: 32 x each 16-element sum, as int32.
  static constexpr bool kStreamHinted = false;  // one plane: sub-block after sub-block
  static constexpr std::size_t kPrepared = 16;
  static void prepare(const enc::BlockQ8_K& x, std::int32_t* out) {
    const __m512i sums =
        _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
    _mm512_storeu_si512(out, _mm512_slli_epi32(sums, 5));
  }
  // The top two bits of the code vector k's slices (the bit pair 2k, 2k + 1 of each byte of
  // units[u].high[0], high[1]) moved to bits 4, 5. 16-bit shifts: what crosses from the
  // neighbouring byte lands outside bits 4, 5, which the mask keeps.
  template <int kK>
  static __m512i top_bits(__m512i high) {
    const __m512i mask = _mm512_set1_epi8(0x30);
    if constexpr (kK < 2) return _mm512_and_si512(_mm512_slli_epi16(high, 4 - 2 * kK), mask);
    if constexpr (kK == 2) return _mm512_and_si512(high, mask);
    return _mm512_and_si512(_mm512_srli_epi16(high, 2 * kK - 4), mask);
  }
  // Codes of code vector k's two slices (8u + k: low nibbles, 8u + 4 + k: high nibbles).
  template <int kK>
  static void codes(const Block& gb, int u, __m512i& lo, __m512i& hi) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const auto& unit = gb.units[u];
    const __m512i v = _mm512_load_si512(unit.low[kK]);
    lo = and_or(v, top_bits<kK>(_mm512_load_si512(unit.high[0])), low4);
    hi = and_or(_mm512_srli_epi16(v, 4), top_bits<kK>(_mm512_load_si512(unit.high[1])), low4);
  }
  template <int kK>
  static void add_slices(const Block& gb, const enc::BlockQ8_K& x, int u, __m512i& lo,
                         __m512i& hi) {
    __m512i cl;
    __m512i ch;
    codes<kK>(gb, u, cl, ch);
    lo = _mm512_dpbusd_epi32(lo, cl, broadcast4(x.qs + 32 * u + 4 * kK));
    hi = _mm512_dpbusd_epi32(hi, ch, broadcast4(x.qs + 32 * u + 16 + 4 * kK));
  }
  static __m512i scale(const Block& gb, int j) {
    return _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(gb.scales[j])));
  }
  static __m512i isum(const Block& gb, const enc::BlockQ8_K& x, const std::int32_t* offsets) {
    __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int u = 0; u < 8; ++u) {
      __m512i lo = _mm512_setzero_si512();  // unit 2u (elements 32u .. 32u + 15)
      __m512i hi = _mm512_setzero_si512();  // unit 2u + 1
      add_slices<0>(gb, x, u, lo, hi);
      add_slices<1>(gb, x, u, lo, hi);
      add_slices<2>(gb, x, u, lo, hi);
      add_slices<3>(gb, x, u, lo, hi);
      lo = _mm512_sub_epi32(lo, _mm512_set1_epi32(offsets[2 * u]));
      hi = _mm512_sub_epi32(hi, _mm512_set1_epi32(offsets[2 * u + 1]));
      isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(lo, scale(gb, 2 * u)));
      isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(hi, scale(gb, 2 * u + 1)));
    }
    return isum;
  }
  static __m512i msum(const Block&, const std::int32_t*) {
    return _mm512_setzero_si512();
  }
  static __m512 dmin(const Block& gb) {
    return halves_to_floats(gb.d);
  }

  // The tiles take Q6_K as its definition: codes 0..63 per 4-code slice, a scale per 16 codes, and
  // the offset as a minimum of 32 x scale per 16 codes (two per dword).
  template <int kK>
  static void unpack_slices(const Block& gb, int u, GroupBlock& o) {
    __m512i lo;
    __m512i hi;
    codes<kK>(gb, u, lo, hi);
    _mm512_store_si512(o.codes[8 * u + kK], lo);
    _mm512_store_si512(o.codes[8 * u + 4 + kK], hi);
  }
  static void unpack(const Block* gb, std::size_t n_super, GroupBlock* out) {
    for (std::size_t b = 0; b < n_super; ++b) {
      GroupBlock& o = out[b];
      for (int u = 0; u < 8; ++u) {
        unpack_slices<0>(gb[b], u, o);
        unpack_slices<1>(gb[b], u, o);
        unpack_slices<2>(gb[b], u, o);
        unpack_slices<3>(gb[b], u, o);
      }
      for (int j = 0; j < 16; ++j)
        _mm512_store_si512(o.scale[j], scale(gb[b], j));
      for (int i = 0; i < 8; ++i) {
        const __m512i a = _mm512_slli_epi32(scale(gb[b], 2 * i), 5);
        const __m512i c = _mm512_slli_epi32(scale(gb[b], 2 * i + 1), 5);
        _mm512_store_si512(o.mins[i],
                           _mm512_or_si512(_mm512_and_si512(a, _mm512_set1_epi32(0xFFFF)),
                                           _mm512_slli_epi32(c, 16)));
      }
      _mm512_store_ps(o.d, halves_to_floats(gb[b].d));
      _mm512_store_ps(o.dmin, halves_to_floats(gb[b].d));
    }
  }
};

// Q2_K and Q3_K: 16 units of 16 codes, 2-bit slices (vector >> 2q) & 3 (row_groups.hpp). A unit's
// exact sum is at most 16 x 7 x 128 in magnitude, so two units' sums go side by side as the int16
// halves of each row's lane and one vpdpwssd applies both units' scales (the stored pair, widened).
inline __m512i two_bit_slice(__m512i v, int q) {
  return _mm512_and_si512(_mm512_srli_epi16(v, 2 * q), _mm512_set1_epi8(3));
}
// Units 2p and 2p + 1's sums as the low and high int16 of each lane.
inline __m512i pair_words(__m512i even, __m512i odd) {
  return and_or(even, _mm512_slli_epi32(odd, 16), _mm512_set1_epi32(0xFFFF));
}
// Unit u's exact sums for the 16 rows: its 4 slices (slice(q): codes 4q .. 4q + 3 of the unit)
// against the activation's 16 bytes, in two chains.
template <typename Slice>
inline __m512i unit_dot(const enc::BlockQ8_K& x, int u, Slice slice) {
  __m512i a = _mm512_dpbusd_epi32(_mm512_setzero_si512(), slice(0), broadcast4(x.qs + 16 * u));
  __m512i b = _mm512_dpbusd_epi32(_mm512_setzero_si512(), slice(1), broadcast4(x.qs + 16 * u + 4));
  a = _mm512_dpbusd_epi32(a, slice(2), broadcast4(x.qs + 16 * u + 8));
  b = _mm512_dpbusd_epi32(b, slice(3), broadcast4(x.qs + 16 * u + 12));
  return _mm512_add_epi32(a, b);
}
// sum_j scale_j * dot_j over the 16 units, two at a time: dot(u) unit u's sums, scales(p) units
// 2p, 2p + 1's scales as the int16 halves of each lane.
template <typename Dot, typename Scales>
inline __m512i paired_isum(Dot dot, Scales scales) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int p = 0; p < 8; ++p)
    isum = _mm512_dpwssd_epi32(isum, pair_words(dot(2 * p), dot(2 * p + 1)), scales(p));
  return isum;
}
// sum_j min_j * words_j: mins(p) units 2p, 2p + 1's minimums as int16 halves, pairs[p] the
// activation's words 2p, 2p + 1 (one dword).
template <typename Mins>
inline __m512i paired_msum(Mins mins, const std::int32_t* pairs) {
  __m512i msum = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int p = 0; p < 8; ++p)
    msum = _mm512_dpwssd_epi32(msum, mins(p), _mm512_set1_epi32(pairs[p]));
  return msum;
}

// Q2_K: isum = sum_j scale_j * dot_j, msum = sum_j min_j * (the activation's 16-element sum j).
struct Q2KGroups {
  using Block = Q2KRowGroupBlock;
  using F = Q2K;
  // Per activation block: its 16-element sums, two int16 per dword (the minimums' vpdpwssd
  // operand).
  static constexpr bool kStreamHinted = true;  // measured faster so (kStreamHinted above)
  static constexpr std::size_t kPrepared = 8;
  static void prepare(const enc::BlockQ8_K& x, std::int32_t* out) {
    std::memcpy(out, x.bsums, sizeof x.bsums);
  }
  // The 16 rows' scale/minimum bytes of units 2p, 2p + 1, one 16-bit half each.
  static __m512i pair_bytes(const Block& gb, int p) {
    return _mm512_cvtepu8_epi16(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(gb.scale_mins[p])));
  }
  static __m512i isum(const Block& gb, const enc::BlockQ8_K& x, const std::int32_t*) {
    return paired_isum(
        [&](int u) {
          const __m512i v = _mm512_load_si512(gb.codes[u]);
          return unit_dot(x, u, [&](int q) { return two_bit_slice(v, q); });
        },
        [&](int p) { return _mm512_and_si512(pair_bytes(gb, p), _mm512_set1_epi16(0x0F)); });
  }
  static __m512i msum(const Block& gb, const std::int32_t* pairs) {
    return paired_msum([&](int p) { return _mm512_srli_epi16(pair_bytes(gb, p), 4); }, pairs);
  }
  static __m512 dmin(const Block& gb) { return halves_to_floats(gb.dmin); }
  static void unpack(const Block* gb, std::size_t n_super, GroupBlock* out) {
    for (std::size_t b = 0; b < n_super; ++b) {
      GroupBlock& o = out[b];
      for (int u = 0; u < 16; ++u) {
        const __m512i v = _mm512_load_si512(gb[b].codes[u]);
        for (int q = 0; q < 4; ++q)
          _mm512_store_si512(o.codes[4 * u + q], two_bit_slice(v, q));
      }
      for (int p = 0; p < 8; ++p) {
        const __m512i bytes = pair_bytes(gb[b], p);
        _mm512_store_si512(o.scale[2 * p], _mm512_and_si512(bytes, _mm512_set1_epi32(0x0F)));
        _mm512_store_si512(o.scale[2 * p + 1],
                           _mm512_and_si512(_mm512_srli_epi32(bytes, 16), _mm512_set1_epi32(0x0F)));
        _mm512_store_si512(o.mins[p], _mm512_srli_epi16(bytes, 4));
      }
      _mm512_store_ps(o.d, halves_to_floats(gb[b].d));
      _mm512_store_ps(o.dmin, halves_to_floats(gb[b].dmin));
    }
  }
};

// Q3_K: codes value + 4 (the low 2 bits and the hmask bit as bit 2), so isum - msum with msum =
// sum_j scale_j * 4 * (the activation's 16-element sum j) is the definition's isum.
struct Q3KGroups {
  using Block = Q3KRowGroupBlock;
  using F = Q3K;
  // One stream, but hinted: measured faster so (kStreamHinted above).
  static constexpr bool kStreamHinted = true;
  // Per activation block: its 16-element sums times 4, as int16 (at most 4 x 16 x 128).
  static constexpr std::size_t kPrepared = 8;
  static void prepare(const enc::BlockQ8_K& x, std::int32_t* out) {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out),
        _mm256_slli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)), 2));
  }
  // Slice q of unit u: its low 2 bits, and bit 4 (u % 2) + q of units[u / 2].high as bit 2. 16-bit
  // shifts: what crosses from the neighbouring byte lands outside the bits the masks keep.
  static __m512i slice(__m512i low, __m512i high, int u, int q) {
    const int shift = 4 * (u % 2) + q - 2;
    const __m512i top = shift >= 0 ? _mm512_srli_epi16(high, static_cast<unsigned>(shift))
                                   : _mm512_slli_epi16(high, static_cast<unsigned>(-shift));
    return and_or(_mm512_srli_epi16(low, 2 * q), _mm512_and_si512(top, _mm512_set1_epi8(4)),
                  _mm512_set1_epi8(3));
  }
  // The 16 rows' signed scales of units 2p, 2p + 1, one int16 half each.
  static __m512i pair_scales(const Block& gb, int p) {
    return _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(gb.scales[p])));
  }
  static __m512i isum(const Block& gb, const enc::BlockQ8_K& x, const std::int32_t*) {
    return paired_isum(
        [&](int u) {
          const __m512i low = _mm512_load_si512(gb.units[u / 2].low[u % 2]);
          const __m512i high = _mm512_load_si512(gb.units[u / 2].high);
          return unit_dot(x, u, [&](int q) { return slice(low, high, u, q); });
        },
        [&](int p) { return pair_scales(gb, p); });
  }
  static __m512i msum(const Block& gb, const std::int32_t* times4) {
    return paired_msum([&](int p) { return pair_scales(gb, p); }, times4);
  }
  static __m512 dmin(const Block& gb) { return halves_to_floats(gb.d); }
  static void unpack(const Block* gb, std::size_t n_super, GroupBlock* out) {
    for (std::size_t b = 0; b < n_super; ++b) {
      GroupBlock& o = out[b];
      for (int u = 0; u < 16; ++u) {
        const __m512i low = _mm512_load_si512(gb[b].units[u / 2].low[u % 2]);
        const __m512i high = _mm512_load_si512(gb[b].units[u / 2].high);
        for (int q = 0; q < 4; ++q)
          _mm512_store_si512(o.codes[4 * u + q], slice(low, high, u, q));
      }
      for (int p = 0; p < 8; ++p) {
        const __m512i scales = pair_scales(gb[b], p);
        _mm512_store_si512(o.scale[2 * p], _mm512_srai_epi32(_mm512_slli_epi32(scales, 16), 16));
        _mm512_store_si512(o.scale[2 * p + 1], _mm512_srai_epi32(scales, 16));
        _mm512_store_si512(o.mins[p], _mm512_slli_epi16(scales, 2));  // 4 x scale, two per dword
      }
      _mm512_store_ps(o.d, halves_to_floats(gb[b].d));
      _mm512_store_ps(o.dmin, halves_to_floats(gb[b].d));
    }
  }
};

// IQ4_XS: the codebook values plus 128 as unsigned codes (one vpshufb of a nibble each), so a
// sub-block's exact sum is its dot with the values plus 128 x (the activation's 32-element sum),
// subtracted before its scale applies: the definition's isum, with no minimum term (msum 0). The
// prompt tiles take the same codes, with the offset as kquant_tiles::IQ4XSOffset's minimums.
struct IQ4XSGroups {
  using Block = IQ4XSRowGroupBlock;
  using F = kquant_tiles::IQ4XSOffset;
  // Per activation block: 128 x each 32-element sum, as int32 (at most 128 x 32 x 128).
  static constexpr bool kStreamHinted = false;  // one plane
  static constexpr std::size_t kPrepared = 8;
  static void prepare(const enc::BlockQ8_K& x, std::int32_t* out) {
    const __m256i pairs = _mm256_madd_epi16(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)), _mm256_set1_epi16(1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_slli_epi32(pairs, 7));
  }
  static __m512i table() {
    return _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128(
                                reinterpret_cast<const __m128i*>(enc::kIQ4NLValues))),
                            _mm512_set1_epi8(static_cast<char>(0x80)));
  }
  static void codes(const Block& gb, int u, int k, __m512i table, __m512i& lo, __m512i& hi) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i v = _mm512_load_si512(gb.codes[4 * u + k]);
    lo = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low4));
    hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low4));
  }
  static __m512i scale(const Block& gb, int u) {
    return _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(gb.scales[u])));
  }
  static __m512i isum(const Block& gb, const enc::BlockQ8_K& x, const std::int32_t* offsets) {
    const __m512i t = table();
    __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int u = 0; u < 8; ++u) {
      const __m512i dot =
          sub_block_dot(x, u, [&](int k, __m512i& lo, __m512i& hi) { codes(gb, u, k, t, lo, hi); });
      isum = _mm512_add_epi32(
          isum,
          _mm512_mullo_epi32(_mm512_sub_epi32(dot, _mm512_set1_epi32(offsets[u])), scale(gb, u)));
    }
    return isum;
  }
  static __m512i msum(const Block&, const std::int32_t*) {
    return _mm512_setzero_si512();
  }
  static __m512 dmin(const Block& gb) {
    return halves_to_floats(gb.d);
  }
  static void unpack(const Block* gb, std::size_t n_super, GroupBlock* out) {
    const __m512i t = table();
    for (std::size_t b = 0; b < n_super; ++b) {
      GroupBlock& o = out[b];
      for (int u = 0; u < 8; ++u) {
        for (int k = 0; k < 4; ++k) {
          __m512i lo;
          __m512i hi;
          codes(gb[b], u, k, t, lo, hi);
          _mm512_store_si512(o.codes[8 * u + k], lo);
          _mm512_store_si512(o.codes[8 * u + 4 + k], hi);
        }
        const __m512i s = scale(gb[b], u);
        _mm512_store_si512(o.scale[u], s);
        // The offset's share per 16 codes, as IQ4XSOffset: 128 x scale, twice per dword.
        const __m512i m = _mm512_slli_epi32(s, 7);
        _mm512_store_si512(o.mins[u],
                           and_or(m, _mm512_slli_epi32(m, 16), _mm512_set1_epi32(0xFFFF)));
      }
      _mm512_store_ps(o.d, halves_to_floats(gb[b].d));
      _mm512_store_ps(o.dmin, halves_to_floats(gb[b].d));
    }
  }
};

}  // namespace row_groups
}  // namespace
}  // namespace eredu::cpu::detail
