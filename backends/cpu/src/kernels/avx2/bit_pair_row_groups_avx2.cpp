// AVX2 products of Q2_K and Q3_K weights laid out in groups of 16 rows (row_groups.hpp:
// Q2KRowGroupBlock, Q3KRowGroupBlock), for one token (decode) and for several (prompts, short
// batches). Each value is the definition's, reference::dot_q8_K, bit for bit: per 256-block the
// exact integer sums, then the definition's one (Q3_K) or two (Q2_K) fused multiply-adds, block
// after block, one float chain per row.
//
// Why: the AVX2 table read these rows as stored, one row at a time (kquant_decode_avx2.cpp), and
// spent per 32 codes of a row a shift, a mask, a vpmaddubsw, a vpmaddwd with a shuffled scale and
// an add, and per block the reduction of the row's lanes. On a Zen 4 guest with
// EREDU_CPU_ISA=avx2 their products ran at 0.42 of the read test (`eredu-bench --products`,
// llama1b Q2_K and Q3_K files: 19-20 GB/s against 45-46), where the AVX-512 table's row groups
// run at 0.78-0.83: compute, not memory, bounded them. In a group, a code vector's bit pair q is
// one 4-element slice of 16 rows (rows 0-7 in its first 32 bytes, rows 8-15 in its second, a row
// per 32-bit lane): vpmaddubsw with the slice's 4 activation bytes broadcast adds 2 products to
// each int16 word of a row's lane, a unit's 4 slices add up in those words exactly (at most
// 4 x 2 x 7 x 128 = 7168), and one vpmaddwd with the row's unit scale in both words of its lane
// applies the scale. The rows' sums never leave their lanes; 8 rows' scales of two units are one
// 16-byte load.
//
// Several tokens: each half group (8 rows) is repacked straight into the prompt tile's layout
// (kquant_prompt_tile_avx2.hpp: a byte per code, 4 per dword, the scales as int16 pairs), which is
// the group's layout with the codes unpacked, and the tile forms the same exact sums there.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "kquant_codes_avx2.hpp"
#include "kquant_prompt_tile_avx2.hpp"
#include "row_group_lanes_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

inline __m256i load32(const void* p) {
  return _mm256_load_si256(static_cast<const __m256i*>(p));
}

// Q2_K: codes 0-3 as stored; isum = sum_u scale_u x dot_u, msum = sum_u min_u x (the activation's
// 16-element sum u).
struct Q2KHalves {
  using Block = Q2KRowGroupBlock;
  using F = Q2K;
  // Rows 8h .. 8h + 7's bytes of units 2p, 2p + 1 (scale in the low nibble, minimum in the high),
  // one int16 word each.
  static __m256i pair_bytes(const Block& gb, int p, std::size_t h) {
    return _mm256_cvtepu8_epi16(
        _mm_load_si128(reinterpret_cast<const __m128i*>(gb.scale_mins[p][kHalfRows * h])));
  }
  static __m256i pair_scales(const Block& gb, int p, std::size_t h) {
    return _mm256_and_si256(pair_bytes(gb, p, h), _mm256_set1_epi16(0x0F));
  }
  static __m256i pair_mins(const Block& gb, int p, std::size_t h) {
    return _mm256_srli_epi16(pair_bytes(gb, p, h), 4);
  }
  // Slice q (elements 16u + 4q .. + 3) of unit u = 2p + i for rows 8h .. 8h + 7.
  struct Unit {
    __m256i codes;
    __m256i slice(int q) const {
      return _mm256_and_si256(_mm256_srli_epi16(codes, 2 * q), _mm256_set1_epi8(3));
    }
  };
  static Unit unit(const Block& gb, int p, int i, std::size_t h) {
    return {load32(gb.codes[2 * p + i] + 32 * h)};
  }
  // The activation words the minimums multiply: the 16-element sums as they are.
  static std::int32_t min_words(const enc::BlockQ8_K& x, int p) {
    std::int32_t two;
    std::memcpy(&two, x.bsums + 2 * p, 4);
    return two;
  }
  static __m256 dmin(const Block& gb, std::size_t h) {
    return half_floats(gb.dmin + kHalfRows * h);
  }
};

// Q3_K: codes value + 4 (the low 2 bits, and the hmask bit as bit 2), so isum - msum with msum =
// sum_u scale_u x 4 x (the activation's 16-element sum u) is the definition's isum.
struct Q3KHalves {
  using Block = Q3KRowGroupBlock;
  using F = Q3K;
  static __m256i pair_scales(const Block& gb, int p, std::size_t h) {
    return _mm256_cvtepi8_epi16(
        _mm_load_si128(reinterpret_cast<const __m128i*>(gb.scales[p][kHalfRows * h])));
  }
  static __m256i pair_mins(const Block& gb, int p, std::size_t h) {
    return pair_scales(gb, p, h);  // times the activation's sums x 4
  }
  // Slice q of unit 2p + i: its low 2 bits, and bit 4i + q of the units' high vector as bit 2
  // (16-bit shifts: what crosses from the neighbouring byte lands outside the bits kept).
  struct Unit {
    __m256i low;
    __m256i high;
    int i;
    __m256i slice(int q) const {
      const int shift = 4 * i + q - 2;
      const __m256i top =
          shift >= 0 ? _mm256_srli_epi16(high, shift) : _mm256_slli_epi16(high, -shift);
      return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low, 2 * q), _mm256_set1_epi8(3)),
                             _mm256_and_si256(top, _mm256_set1_epi8(4)));
    }
  };
  static Unit unit(const Block& gb, int p, int i, std::size_t h) {
    return {load32(gb.units[p].low[i] + 32 * h), load32(gb.units[p].high + 32 * h), i};
  }
  static std::int32_t min_words(const enc::BlockQ8_K& x, int p) {
    const auto four_times = [&](int j) {
      return static_cast<std::uint32_t>(static_cast<std::uint16_t>(4 * x.bsums[j]));
    };
    return static_cast<std::int32_t>(four_times(2 * p) | (four_times(2 * p + 1) << 16));
  }
  static __m256 dmin(const Block& gb, std::size_t h) { return half_floats(gb.d + kHalfRows * h); }
};

// One block of a group: acc[h] (rows 8h .. 8h + 7) gets the definition's float steps on its exact
// sums. Both halves go through a slice together, so each activation broadcast serves 16 rows, and
// the unit pairs are a loop: with the halves one after the other GCC kept the first half's
// broadcasts for the second on the stack (as in row_groups_avx2.cpp's Q4_K / Q5_K step). On a Zen 3
// guest (AVX2 only, 2 threads, three interleaved rounds) Matvec 2048 x 8192 from L3: Q2_K
// 15-21 -> 21-27 GB/s, Q3_K 13-16 -> 22-24.
template <typename L>
inline void block_step(const typename L::Block& gb, const enc::BlockQ8_K& x, __m256 (&acc)[2]) {
  __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  __m256i msum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 1
  for (int p = 0; p < 8; ++p) {
    const __m256i scales[2] = {L::pair_scales(gb, p, 0), L::pair_scales(gb, p, 1)};
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) {
      const int u = 2 * p + i;
      const typename L::Unit unit[2] = {L::unit(gb, p, i, 0), L::unit(gb, p, i, 1)};
      const __m256i first = broadcast4(x.qs + 16 * u);
      __m256i words[2] = {_mm256_maddubs_epi16(unit[0].slice(0), first),
                          _mm256_maddubs_epi16(unit[1].slice(0), first)};
#pragma GCC unroll 3
      for (int q = 1; q < 4; ++q) {
        const __m256i act = broadcast4(x.qs + 16 * u + 4 * q);
#pragma GCC unroll 2
        for (std::size_t h = 0; h < 2; ++h)
          words[h] = _mm256_add_epi16(words[h], _mm256_maddubs_epi16(unit[h].slice(q), act));
      }
#pragma GCC unroll 2
      for (std::size_t h = 0; h < 2; ++h)
        isum[h] = _mm256_add_epi32(isum[h], _mm256_madd_epi16(words[h], word_twice(scales[h], i)));
    }
    const __m256i min_words = _mm256_set1_epi32(L::min_words(x, p));
#pragma GCC unroll 2
    for (std::size_t h = 0; h < 2; ++h)
      msum[h] = _mm256_add_epi32(msum[h], _mm256_madd_epi16(L::pair_mins(gb, p, h), min_words));
  }
  const __m256 xd = _mm256_set1_ps(x.d);
#pragma GCC unroll 2
  for (std::size_t h = 0; h < 2; ++h) {
    const __m256 dd = _mm256_mul_ps(half_floats(gb.d + kHalfRows * h), xd);
    if constexpr (L::F::kSeparateMin) {
      acc[h] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(isum[h]), acc[h]);
      const __m256 dm = _mm256_xor_ps(_mm256_mul_ps(L::dmin(gb, h), xd), _mm256_set1_ps(-0.0F));
      acc[h] = _mm256_fmadd_ps(dm, _mm256_cvtepi32_ps(msum[h]), acc[h]);
    } else {
      acc[h] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(_mm256_sub_epi32(isum[h], msum[h])), acc[h]);
    }
  }
}

// One token: y[16 g + r], the groups one after another, each group's blocks front to back, hinted
// into L2 kGroupStreamAheadBytes ahead (as on the AVX-512 table, whose Q2_K and Q3_K groups read
// faster so).
template <typename L>
void decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
            float* y) {
  using Block = typename L::Block;
  const auto* blocks = static_cast<const Block*>(groups);
  for (std::size_t g = 0; g < n_groups; ++g) {
    const Block* gb = blocks + g * n_super;
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (std::size_t b = 0; b < n_super; ++b) {
      const char* ahead = reinterpret_cast<const char*>(gb + b) + kGroupStreamAheadBytes;
      for (std::size_t line = 0; line < sizeof(Block); line += 64)
        _mm_prefetch(ahead + line, _MM_HINT_T1);
      block_step<L>(gb[b], x[b], acc);
    }
    _mm256_storeu_ps(y + g * kRowGroupRows, acc[0]);
    _mm256_storeu_ps(y + g * kRowGroupRows + kHalfRows, acc[1]);
  }
}

// Rows 8h .. 8h + 7 of a group's blocks into the prompt tile's layout: slice q of unit u as code
// dword 4u + q, unit u's scale twice per lane, the minimums of units 2p, 2p + 1 (Q3_K: 4 x its
// scales) as int16 pairs, d and dmin widened.
template <typename L>
void repack_half(const typename L::Block* gb, std::size_t n_super, std::size_t h,
                 kquant_tile::GroupBlock* out) {
  for (std::size_t b = 0; b < n_super; ++b) {
    kquant_tile::GroupBlock& o = out[b];
    for (int p = 0; p < 8; ++p) {
      const __m256i scales = L::pair_scales(gb[b], p, h);
      for (int i = 0; i < 2; ++i) {
        const int u = 2 * p + i;
        const typename L::Unit unit = L::unit(gb[b], p, i, h);
        for (int q = 0; q < 4; ++q)
          _mm256_store_si256(reinterpret_cast<__m256i*>(o.codes[4 * u + q]), unit.slice(q));
        _mm256_store_si256(reinterpret_cast<__m256i*>(o.scale[u]), word_twice(scales, i));
      }
      __m256i mins = L::pair_mins(gb[b], p, h);
      if constexpr (!L::F::kSeparateMin) mins = _mm256_slli_epi16(mins, 2);  // 4 x scale
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.mins[p]), mins);
    }
    _mm256_store_ps(o.d, half_floats(gb[b].d + kHalfRows * h));
    _mm256_store_ps(o.dmin, L::dmin(gb[b], h));
  }
}

template <typename L>
void gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
          std::size_t n, float* y, std::size_t ldy) {
  kquant_tile::row_group_gemm<typename L::F, typename L::Block>(
      groups, n_groups, x, n_super, n, y, ldy,
      [&](const typename L::Block* gb, std::size_t h, kquant_tile::GroupBlock* out) {
        repack_half<L>(gb, n_super, h, out);
      });
}

}  // namespace

RowGroupProducts bit_pair_row_group_products_avx2(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return {decode<Q2KHalves>, gemm<Q2KHalves>};
    case DType::kQ3_K:
      return {decode<Q3KHalves>, gemm<Q3KHalves>};
    default:
      return {};
  }
}

}  // namespace eredu::cpu::detail
