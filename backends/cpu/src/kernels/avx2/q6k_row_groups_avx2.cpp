// AVX2 products of Q6_K weights laid out in groups of 16 rows (row_groups.hpp: Q6KRowGroupBlock),
// for one token (decode) and for several (prompts, short batches). Each value is the
// definition's, reference::dot_q8_K, bit for bit: per 256-block the exact integer sum of the
// codes (value + 32) times the activations, scaled per 16 elements, minus the offset's share
// sum_j scale_j x 32 x (the activation's 16-element sum j), then the definition's one fused
// multiply-add, block after block, one float chain per row.
//
// Why: Q6_K is the rest of every Q4_K_M and Q5_K_M file (the output, half the FFN down
// projections, the attention values) and the whole of a Q6_K one, and the AVX2 table read its
// rows as stored, one row at a time (kquant_decode_avx2.cpp): per 32 codes of a row two loads, a
// nibble mask, a two-bit extraction and a shift for the top bits, the product, a scale shuffle and
// vpmaddwd, and the row's lanes reduced per block. On a Zen 4 guest with EREDU_CPU_ISA=avx2 that
// ran at 37.6 GB/s from cache (Matvec/Q6_K 576 x 1536), where the table's Q4_K groups run at 52.
// Here a sub-block's code vector holds one 4-element slice of 16 rows per nibble (rows 0-7 in its
// first 32 bytes, a row per 32-bit lane) and its two top-bit vectors the slices' top bits, a shift
// and a mask per slice; vpmaddubsw with the slice's 4 activation bytes broadcast adds 2 products to
// each int16 word of a row's lane (at most 2 x 63 x 128 = 16128, so two slices add up exactly in
// int16), and vpmaddwd with the row's scale in both words of its lane applies the scale.
//
// Several tokens: each half group is repacked straight into the prompt tile's layout
// (kquant_prompt_tile_avx2.hpp), the groups' layout with the codes unpacked.
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

// Slice k of sub-block u for rows 8h .. 8h + 7: lo = elements 32u + 4k .. + 3 (the low nibbles of
// low[k], top bits pair k of high[0]), hi = elements 32u + 16 + 4k .. + 3 (the high nibbles, pair
// k of high[1]). 16-bit shifts: what crosses from the neighbouring byte lands outside the bits
// kept.
inline void slices(const Q6KRowGroupBlock::Unit& unit, int k, std::size_t h, __m256i& lo,
                   __m256i& hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i top2 = _mm256_set1_epi8(0x30);
  const auto at = [&](const std::uint8_t* p) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32 * h));
  };
  const auto top = [&](__m256i t) {  // bit pair k to bits 4, 5
    return _mm256_and_si256(
        k < 2 ? _mm256_slli_epi16(t, 4 - 2 * k) : _mm256_srli_epi16(t, 2 * k - 4), top2);
  };
  const __m256i v = at(unit.low[k]);
  lo = _mm256_or_si256(_mm256_and_si256(v, low4), top(at(unit.high[0])));
  hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), top(at(unit.high[1])));
}

// Rows 8h .. 8h + 7's signed scales of 16 elements j, each twice in its lane (int16 words).
inline __m256i scale_words(const Q6KRowGroupBlock& gb, int j, std::size_t h) {
  return signed_byte_words(gb.scales[j] + kHalfRows * h);
}

// The exact sum of one 16-element unit (4 slices, two at a time in int16) times its scale words.
inline __m256i unit_sum(const __m256i (&codes)[4], const std::int8_t* x, __m256i scale) {
  const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(codes[0], broadcast4(x)),
                                     _mm256_maddubs_epi16(codes[1], broadcast4(x + 4)));
  const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(codes[2], broadcast4(x + 8)),
                                     _mm256_maddubs_epi16(codes[3], broadcast4(x + 12)));
  return _mm256_add_epi32(_mm256_madd_epi16(a, scale), _mm256_madd_epi16(b, scale));
}

// One block of a group for rows 8h .. 8h + 7: acc += (d x xd) x (isum - msum). The sub-blocks are a
// loop, not unrolled: unrolled, the step was ~700 instructions (two copies, one per half) with
// ~36 values spilled to the stack. On a Zen 3 guest (AVX2 only, 2 threads, three interleaved
// rounds) Matvec/Q6_K 576 x 1536 went 19-23 -> 26-36 GB/s, 2048 x 8192 20-31 -> 34-39.
inline __m256 block_step(const Q6KRowGroupBlock& gb, const enc::BlockQ8_K& x, std::size_t h,
                         __m256 acc) {
  __m256i isum = _mm256_setzero_si256();
  __m256i msum = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int u = 0; u < 8; ++u) {
    __m256i lo[4];
    __m256i hi[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k)
      slices(gb.units[u], k, h, lo[k], hi[k]);
    const __m256i s_lo = scale_words(gb, 2 * u, h);
    const __m256i s_hi = scale_words(gb, 2 * u + 1, h);
    isum = _mm256_add_epi32(isum, unit_sum(lo, x.qs + 32 * u, s_lo));
    isum = _mm256_add_epi32(isum, unit_sum(hi, x.qs + 32 * u + 16, s_hi));
    // The offset: 32 x the scales of units 2u, 2u + 1 (at most 32 x 32, as int16 words) times the
    // activation's 16-element sums 2u, 2u + 1.
    std::int32_t sums;
    std::memcpy(&sums, x.bsums + 2 * u, 4);
    const __m256i scales = _mm256_slli_epi16(_mm256_blend_epi16(s_lo, s_hi, 0xAA), 5);
    msum = _mm256_add_epi32(msum, _mm256_madd_epi16(scales, _mm256_set1_epi32(sums)));
  }
  const __m256 dd = _mm256_mul_ps(half_floats(gb.d + kHalfRows * h), _mm256_set1_ps(x.d));
  return _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(_mm256_sub_epi32(isum, msum)), acc);
}

// One token: y[16 g + r], the groups one after another, each group's blocks front to back, hinted
// into L2 kGroupStreamAheadBytes ahead as the AVX-512 table's Q6_K groups are.
void decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
            float* y) {
  const auto* blocks = static_cast<const Q6KRowGroupBlock*>(groups);
  for (std::size_t g = 0; g < n_groups; ++g) {
    const Q6KRowGroupBlock* gb = blocks + g * n_super;
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (std::size_t b = 0; b < n_super; ++b) {
      const char* ahead = reinterpret_cast<const char*>(gb + b) + kGroupStreamAheadBytes;
      for (std::size_t line = 0; line < sizeof(Q6KRowGroupBlock); line += 64)
        _mm_prefetch(ahead + line, _MM_HINT_T1);
      acc[0] = block_step(gb[b], x[b], 0, acc[0]);
      acc[1] = block_step(gb[b], x[b], 1, acc[1]);
    }
    _mm256_storeu_ps(y + g * kRowGroupRows, acc[0]);
    _mm256_storeu_ps(y + g * kRowGroupRows + kHalfRows, acc[1]);
  }
}

// Rows 8h .. 8h + 7 of a group's blocks into the prompt tile's layout: slice k of sub-block u as
// code dwords 8u + k and 8u + 4 + k, unit j's scale twice per lane, 32 x the scales of units 2i,
// 2i + 1 as the minimums' int16 pair, d (and as dmin, unused by Q6_K's single step) widened.
void repack_half(const Q6KRowGroupBlock* gb, std::size_t h, kquant_tile::GroupBlock* out,
                 std::size_t n_super) {
  for (std::size_t b = 0; b < n_super; ++b) {
    kquant_tile::GroupBlock& o = out[b];
    for (int u = 0; u < 8; ++u) {
      for (int k = 0; k < 4; ++k) {
        __m256i lo;
        __m256i hi;
        slices(gb[b].units[u], k, h, lo, hi);
        _mm256_store_si256(reinterpret_cast<__m256i*>(o.codes[8 * u + k]), lo);
        _mm256_store_si256(reinterpret_cast<__m256i*>(o.codes[8 * u + 4 + k]), hi);
      }
      const __m256i s_lo = scale_words(gb[b], 2 * u, h);
      const __m256i s_hi = scale_words(gb[b], 2 * u + 1, h);
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.scale[2 * u]), s_lo);
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.scale[2 * u + 1]), s_hi);
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.mins[u]),
                         _mm256_slli_epi16(_mm256_blend_epi16(s_lo, s_hi, 0xAA), 5));
    }
    const __m256 d = half_floats(gb[b].d + kHalfRows * h);
    _mm256_store_ps(o.d, d);
    _mm256_store_ps(o.dmin, d);
  }
}

void gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
          std::size_t n, float* y, std::size_t ldy) {
  kquant_tile::row_group_gemm<Q6K, Q6KRowGroupBlock>(
      groups, n_groups, x, n_super, n, y, ldy,
      [&](const Q6KRowGroupBlock* gb, std::size_t h, kquant_tile::GroupBlock* out) {
        repack_half(gb, h, out, n_super);
      });
}

}  // namespace

RowGroupProducts q6k_row_group_products_avx2() {
  return {decode, gemm};
}

}  // namespace eredu::cpu::detail
