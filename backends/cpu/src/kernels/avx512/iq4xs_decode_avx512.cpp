// AVX-512 one-token product (decode) of IQ4_XS weight rows with one q8_K activation row, with the
// values of reference::dot_q8_K bit for bit: per 256-block the exact int32 isum = sum over the 8
// sub-blocks of 32 of scale x (codes . activations), then acc = fma(d x xd, isum, acc), the blocks
// in order.
//
// IQ4_XS codes are signed (the IQ4_NL codebook, -127 .. 113), and the integer products take one
// unsigned operand. The row kernel of kquant_avx512.cpp moves each code's sign onto the activation
// and widens through int16 pairs; on one Zen 5 thread it ran at 16 GB/s, well below the thread's
// memory bandwidth. Here
//   - the codebook shifted by +128 is looked up instead (unsigned, 1 .. 241), and vpdpbusd sums
//     four products into int32 without saturating; the shift's share, 128 x scale x the
//     sub-block's activation sum, is taken out of the int32 accumulator at the start (exact, as
//     the sums are integers);
//   - a 64-byte load is four sub-blocks' codes: its low nibbles are elements 0-15 of each, its high
//     nibbles elements 16-31, so each 128-bit lane is one sub-block and both vectors of a half take
//     the same per-lane scale. The call lays the activations out once in that order for all its
//     rows; a half costs two lookups, two vpdpbusd and one multiply by the scales;
//   - four blocks' horizontal sums share one reduction tree, and their float steps run together
//     before the fused multiply-adds, which stay in block order.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/kquant_scales.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "int_sums_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Activation blocks laid out per pass (as kquant_decode_avx512.cpp): rows of up to 16384 columns
// in one pass.
constexpr std::size_t kChunkBlocks = 64;

struct alignas(64) Prepared {
  // Per block and half h: elements 0-15 of sub-blocks 4h .. 4h + 3, then their elements 16-31.
  std::int8_t codes[kChunkBlocks][enc::kQK_K];
  // Per block, -128 x each sub-block of 32's activation sum.
  std::int32_t minus_shift_sums[kChunkBlocks][8];
  float d[kChunkBlocks];
};

inline __m512i load512(const void* p) {
  return _mm512_loadu_si512(p);
}
inline __m128i load128(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

void prepare(const enc::BlockQ8_K* x, std::size_t n, Prepared& p) {
  for (std::size_t b = 0; b < n; ++b) {
    p.d[b] = x[b].d;
    const std::int8_t* s = x[b].qs;
    for (int h = 0; h < 2; ++h) {
      std::int8_t* out = p.codes[b] + 128 * h;
      for (int part = 0; part < 2; ++part) {  // elements 0-15, then 16-31, of each sub-block
        __m512i v = _mm512_castsi128_si512(load128(s + 128 * h + 16 * part));
        v = _mm512_inserti32x4(v, load128(s + 128 * h + 32 + 16 * part), 1);
        v = _mm512_inserti32x4(v, load128(s + 128 * h + 64 + 16 * part), 2);
        v = _mm512_inserti32x4(v, load128(s + 128 * h + 96 + 16 * part), 3);
        _mm512_store_si512(out + 64 * part, v);
      }
    }
    // Sub-block c's sum: bsums[2c] + bsums[2c + 1].
    const __m256i sums = _mm256_madd_epi16(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].bsums)), _mm256_set1_epi16(1));
    _mm256_store_si256(reinterpret_cast<__m256i*>(p.minus_shift_sums[b]),
                       _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sums, 7)));
  }
}

// One block's isum as 16 int32 lanes.
inline __m512i block_sum(const enc::BlockIQ4_XS& w, const Prepared& p, std::size_t b,
                         __m512i codebook) {
  const char* ahead = reinterpret_cast<const char*>(&w) + kGroupStreamAheadBytes;
  for (std::size_t line = 0; line < sizeof(w); line += 64)
    _mm_prefetch(ahead + line, _MM_HINT_T1);
  const __m256i scales = iq4xs_scale_vector(w);
  // The shift's share: sum_c scale_c x (-128 x sum_c), in lanes 0-7.
  __m512i acc = _mm512_zextsi256_si512(_mm256_mullo_epi32(
      scales, _mm256_load_si256(reinterpret_cast<const __m256i*>(p.minus_shift_sums[b]))));
  const __m512i scales16 = _mm512_castsi256_si512(scales);
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m512i q = load512(w.qs + 64 * h);
    const __m512i lo = _mm512_shuffle_epi8(codebook, _mm512_and_si512(q, _mm512_set1_epi8(0x0F)));
    const __m512i hi = _mm512_shuffle_epi8(
        codebook, _mm512_and_si512(_mm512_srli_epi16(q, 4), _mm512_set1_epi8(0x0F)));
    __m512i dot =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_load_si512(p.codes[b] + 128 * h));
    dot = _mm512_dpbusd_epi32(dot, hi, _mm512_load_si512(p.codes[b] + 128 * h + 64));
    // Lane l belongs to sub-block 4h + l / 4.
    const __m512i lane_scales = _mm512_permutexvar_epi32(
        _mm512_add_epi32(_mm512_set1_epi32(4 * h),
                         _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)),
        scales16);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dot, lane_scales));
  }
  return acc;
}

float row(const enc::BlockIQ4_XS* w, const Prepared& p, std::size_t n, float acc,
          __m512i codebook) {
  return one_scale_blocks(w, p.d, n, acc,
                          [&](std::size_t b) { return block_sum(w[b], p, b, codebook); });
}

}  // namespace

void kquant_decode_iq4xs_avx512(const void* w, std::size_t w_stride, std::size_t m,
                                const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  alignas(16) std::uint8_t shifted[16];
  for (int i = 0; i < 16; ++i)
    shifted[i] = static_cast<std::uint8_t>(enc::kIQ4NLValues[i] + 128);
  const __m512i codebook = _mm512_broadcast_i32x4(load128(shifted));
  Prepared p;
  const auto* rows = static_cast<const std::byte*>(w);
  for (std::size_t b0 = 0; b0 < n_super; b0 += kChunkBlocks) {
    const std::size_t n = std::min(kChunkBlocks, n_super - b0);
    prepare(x + b0, n, p);
    for (std::size_t r = 0; r < m; ++r) {
      const auto* wr = reinterpret_cast<const enc::BlockIQ4_XS*>(rows + r * w_stride) + b0;
      y[r] = row(wr, p, n, b0 == 0 ? 0.0F : y[r], codebook);
    }
  }
}

}  // namespace eredu::cpu::detail
