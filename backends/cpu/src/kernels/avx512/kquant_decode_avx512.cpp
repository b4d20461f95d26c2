// AVX-512 one-token products (decode) of Q4_K, Q5_K and Q6_K weight rows with one q8_K activation
// row, with the values of kquant_gemm (kquant_avx512.cpp), and so of reference::dot_q8_K, bit for
// bit: per 256-block the same exact int32 sums, then the same one or two fused multiply-adds into
// the row's one accumulator, the blocks in order.
//
// Why a kernel of its own: a decode product reads each weight once, so whatever the kernel spends
// per block is spent on every weight of the model. The row-at-a-time kernel of kquant_avx512.cpp
// unpacks 64 codes from 32 bytes (a load, a shift, an insert, a mask per pair of chunks) and keeps
// the scales in memory; on a Zen 4 guest it ran no faster from L2 than llama1b Q4_K_M decode
// streamed from memory. Here
//   - a 64-byte load gives 128 codes: its low nibbles are one vector, its high nibbles another.
//     For Q6_K those vectors hold elements in order. For Q4_K / Q5_K they hold chunks (4h, 4h + 2)
//     and (4h + 1, 4h + 3) of half h, so the call lays the activation codes out once in that order
//     for all its rows (the integer sums are exact: the order of their products cannot matter);
//   - the scales stay in registers;
//   - Q6_K's code offset (32 x scale x each 16-element activation sum) is subtracted inside the
//     int32 accumulator (exact, as the definition's isum - msum), so a block needs one horizontal
//     sum, not two;
//   - the activation scales are gathered once per call, so the float steps of four blocks read
//     them with one load.
// Rows longer than kChunkBlocks blocks are taken a chunk of columns at a time for all the rows,
// each row's accumulator carried from one chunk to the next in y: the same steps in the same
// order.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "int_sums_avx512.hpp"
#include "kquant_codes_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Activation blocks laid out per pass: 16 KiB of codes on the stack, rows of up to 16384 columns
// in one pass.
constexpr std::size_t kChunkBlocks = 64;

// The int16 scale index of each of the 32 pair sums of code vector k (0: low nibbles of half 0,
// 1: its high nibbles, 2, 3: half 1), as sub-blocks of 16 (Q4_K / Q5_K list each scale twice).
struct alignas(64) ScaleIndex {
  std::int16_t lane[4][32];
};
constexpr ScaleIndex scale_index(bool nibble_order) {
  ScaleIndex s{};
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 32; ++i) {
      // Element order: vector k holds elements 64k .. 64k + 63. Nibble order: half h = k / 2
      // holds chunks 4h + (k % 2) (lanes 0-15) and 4h + 2 + (k % 2) (lanes 16-31).
      const int sub16 =
          nibble_order ? 8 * (k / 2) + 2 * (k % 2) + 4 * (i / 16) + (i % 16) / 8 : 4 * k + i / 8;
      s.lane[k][i] = static_cast<std::int16_t>(sub16);
    }
  }
  return s;
}
constexpr ScaleIndex kElementOrder = scale_index(false);
constexpr ScaleIndex kNibbleOrder = scale_index(true);

inline __m512i bytes_mask(int mask) {
  return _mm512_set1_epi8(static_cast<char>(mask));
}
// (a & c) | b, bitwise.
inline __m512i and_or(__m512i a, __m512i b, __m512i c) {
  return _mm512_ternarylogic_epi32(a, b, c, 0xEC);
}
// Per-half 16-bit shifts: left by lo / hi (non-negative), or right by -lo / -hi.
inline __m512i shift_halves(__m512i v, int lo, int hi) {
  if (lo >= 0 && hi >= 0) return _mm512_sllv_epi16(v, shifts(lo, hi));
  return _mm512_srlv_epi16(v, shifts(-lo, -hi));
}

// Per encoding: the block, the code order its vectors give, and codes(b, h, lo, hi): the 128
// codes of half h as two vectors of 64 (vector 2h and 2h + 1 of ScaleIndex), unsigned.
struct Q4KDecode {
  using Block = enc::BlockQ4_K;
  static constexpr bool kNibbleOrdered = true;
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i v = load512(b.qs + 64 * h);
    lo = _mm512_and_si512(v, bytes_mask(0x0F));
    hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), bytes_mask(0x0F));
  }
};

struct Q5KDecode {
  using Block = enc::BlockQ5_K;
  static constexpr bool kNibbleOrdered = true;
  // Bit c of qh[j] is the fifth bit of element j of chunk c: moved to bit 4 by a shift of 4 - c.
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i v = load512(b.qs + 64 * h);
    const __m512i qh = both_halves(load256(b.qh));
    const int c = 4 * h;  // chunks c, c + 2 (lo) and c + 1, c + 3 (hi)
    lo = and_or(v, _mm512_and_si512(shift_halves(qh, 4 - c, 2 - c), bytes_mask(0x10)),
                bytes_mask(0x0F));
    hi = and_or(_mm512_srli_epi16(v, 4),
                _mm512_and_si512(shift_halves(qh, 3 - c, 1 - c), bytes_mask(0x10)),
                bytes_mask(0x0F));
  }
};

struct Q6KDecode {
  using Block = enc::BlockQ6_K;
  static constexpr bool kNibbleOrdered = false;
  // ql[64h + j]: low nibble element 128h + j, high nibble 128h + 64 + j; qh[32h + j] bits 2k,
  // 2k + 1: the top two bits of element 128h + 32k + j. Moved to bits 4, 5 by a shift of 4 - 2k.
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i ql = load512(b.ql + 64 * h);
    const __m512i qh = both_halves(load256(b.qh + 32 * h));
    lo = and_or(ql, _mm512_and_si512(shift_halves(qh, 4, 2), bytes_mask(0x30)), bytes_mask(0x0F));
    hi = and_or(_mm512_srli_epi16(ql, 4),
                _mm512_and_si512(shift_halves(qh, 0, -2), bytes_mask(0x30)), bytes_mask(0x0F));
  }
};

// What every row of a call reads of the activations, laid out once.
struct alignas(64) Prepared {
  std::int8_t codes[kChunkBlocks][enc::kQK_K];  // nibble order (Q4_K / Q5_K) or as stored
  float d[kChunkBlocks];
};

template <typename F>
void prepare(const enc::BlockQ8_K* x, std::size_t n, Prepared& p) {
  for (std::size_t b = 0; b < n; ++b) {
    p.d[b] = x[b].d;
    if constexpr (F::kNibbleOrdered) {
      const std::int8_t* s = x[b].qs;
      for (int h = 0; h < 2; ++h) {
        std::int8_t* out = p.codes[b] + 128 * h;
        _mm512_store_si512(out, join(load256(s + 128 * h), load256(s + 128 * h + 64)));
        _mm512_store_si512(out + 64, join(load256(s + 128 * h + 32), load256(s + 128 * h + 96)));
      }
    }
  }
}

// The integer part of one block: scale_s x (codes . activations) per sub-block, as 16 int32
// partial sums, starting from `init`.
template <typename F>
inline __m512i block_sum(const typename F::Block& w, const std::int8_t* xcodes, __m256i scales16,
                         __m512i init, const __m512i (&index)[4]) {
  const __m512i scales = _mm512_castsi256_si512(scales16);
  __m512i acc = init;
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    __m512i lo;
    __m512i hi;
    F::codes(w, h, lo, hi);
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(lo, load512(xcodes + 128 * h)),
                              _mm512_permutexvar_epi16(index[2 * h], scales));
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(hi, load512(xcodes + 128 * h + 64)),
                              _mm512_permutexvar_epi16(index[2 * h + 1], scales));
  }
  return acc;
}

inline void hint_ahead(const void* block, std::size_t bytes) {
  const char* ahead = static_cast<const char*>(block) + kAvx512StreamAheadBytes;
  for (std::size_t line = 0; line < bytes; line += 64)
    _mm_prefetch(ahead + line, _MM_HINT_T1);
}

// Q4_K / Q5_K: per block acc += (d x xd) x isum, then acc += -(dmin x xd) x msum.
template <typename F>
float k4_row(const typename F::Block* w, const enc::BlockQ8_K* x, const Prepared& p, std::size_t n,
             float acc, const __m512i (&index)[4]) {
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    __m512i isum[4];
    __m256i msum[4];
    std::uint32_t dmin[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const auto& wb = w[b + g];
      hint_ahead(&wb, sizeof(wb));
      __m256i scales;
      __m256i mins;
      k4_scale_vectors(wb.scales, scales, mins);
      isum[g] = block_sum<F>(wb, p.codes[b + g], scales, _mm512_setzero_si512(), index);
      msum[g] = _mm256_madd_epi16(mins, load256(x[b + g].bsums));
      static_assert(offsetof(typename F::Block, dmin) == offsetof(typename F::Block, d) + 2);
      std::memcpy(&dmin[g], &wb.d, 4);  // d and dmin, two halves
    }
    // Lanes [2g] = block g's d x xd and its isum, [2g + 1] = -(dmin x xd) and msum: exactly the
    // definition's operands, then its fused multiply-adds in order.
    const __m256 xd = _mm256_permutexvar_ps(_mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3),
                                            _mm256_castps128_ps256(_mm_loadu_ps(p.d + b)));
    const __m256 wd =
        _mm256_cvtph_ps(_mm_setr_epi32(static_cast<int>(dmin[0]), static_cast<int>(dmin[1]),
                                       static_cast<int>(dmin[2]), static_cast<int>(dmin[3])));
    alignas(32) float scale[8];
    alignas(32) float sums[8];
    _mm256_store_ps(
        scale, _mm256_xor_ps(_mm256_mul_ps(wd, xd),
                             _mm256_castsi256_ps(_mm256_setr_epi32(0, INT32_MIN, 0, INT32_MIN, 0,
                                                                   INT32_MIN, 0, INT32_MIN))));
    const __m128i is = sum4(isum[0], isum[1], isum[2], isum[3]);
    const __m128i ms = sum4(msum[0], msum[1], msum[2], msum[3]);
    _mm256_store_ps(sums, _mm256_cvtepi32_ps(_mm256_setr_m128i(_mm_unpacklo_epi32(is, ms),
                                                               _mm_unpackhi_epi32(is, ms))));
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
      acc = __builtin_fmaf(scale[i], sums[i], acc);
  }
  for (; b < n; ++b) {
    __m256i scales;
    __m256i mins;
    k4_scale_vectors(w[b].scales, scales, mins);
    const std::int32_t is =
        sum1(block_sum<F>(w[b], p.codes[b], scales, _mm512_setzero_si512(), index));
    const std::int32_t ms = sum1(_mm256_madd_epi16(mins, load256(x[b].bsums)));
    acc = __builtin_fmaf(half_to_float(w[b].d) * p.d[b], static_cast<float>(is), acc);
    acc = __builtin_fmaf(-(half_to_float(w[b].dmin) * p.d[b]), static_cast<float>(ms), acc);
  }
  return acc;
}

// Q6_K: per block acc += (d x xd) x (isum - msum), msum = sum_s 32 scale_s bsum_s.
float q6k_row(const enc::BlockQ6_K* w, const enc::BlockQ8_K* x, const Prepared& p, std::size_t n,
              float acc, const __m512i (&index)[4]) {
  using F = Q6KDecode;
  auto block = [&](std::size_t b) {
    hint_ahead(&w[b], sizeof(w[b]));
    const __m256i scales =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
    const __m256i minus_offsets =
        _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(scales, 5));
    const __m512i init =
        _mm512_zextsi256_si512(_mm256_madd_epi16(minus_offsets, load256(x[b].bsums)));
    return block_sum<F>(w[b], x[b].qs, scales, init, index);
  };
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    __m512i isum[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
      isum[g] = block(b + g);
    const __m128 wd = _mm_cvtph_ps(
        _mm_setr_epi16(static_cast<short>(w[b].d), static_cast<short>(w[b + 1].d),
                       static_cast<short>(w[b + 2].d), static_cast<short>(w[b + 3].d), 0, 0, 0, 0));
    alignas(16) float scale[4];
    alignas(16) float sums[4];
    _mm_store_ps(scale, _mm_mul_ps(wd, _mm_loadu_ps(p.d + b)));
    _mm_store_ps(sums, _mm_cvtepi32_ps(sum4(isum[0], isum[1], isum[2], isum[3])));
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
      acc = __builtin_fmaf(scale[g], sums[g], acc);
  }
  for (; b < n; ++b)
    acc = __builtin_fmaf(half_to_float(w[b].d) * p.d[b], static_cast<float>(sum1(block(b))), acc);
  return acc;
}

template <typename F>
void decode(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
            std::size_t n_super, float* y) {
  const ScaleIndex& table = F::kNibbleOrdered ? kNibbleOrder : kElementOrder;
  __m512i index[4];
  for (int k = 0; k < 4; ++k)
    index[k] = _mm512_load_si512(table.lane[k]);
  Prepared p;
  const auto* rows = static_cast<const std::byte*>(w);
  for (std::size_t b0 = 0; b0 < n_super; b0 += kChunkBlocks) {
    const std::size_t n = std::min(kChunkBlocks, n_super - b0);
    prepare<F>(x + b0, n, p);
    for (std::size_t r = 0; r < m; ++r) {
      const auto* wr = reinterpret_cast<const typename F::Block*>(rows + r * w_stride) + b0;
      const float acc = b0 == 0 ? 0.0F : y[r];
      if constexpr (F::kNibbleOrdered) {
        y[r] = k4_row<F>(wr, x + b0, p, n, acc, index);
      } else {
        y[r] = q6k_row(wr, x + b0, p, n, acc, index);
      }
    }
  }
}

}  // namespace

void kquant_decode_q4k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q4KDecode>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q5k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q5KDecode>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q6k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q6KDecode>(w, w_stride, m, x, n_super, y);
}

}  // namespace eredu::cpu::detail
