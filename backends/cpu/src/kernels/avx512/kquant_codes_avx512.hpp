#pragma once
// Internal, AVX-512 translation units only (avx512/*.cpp): how each K-quant and IQ4_XS block's
// codes unpack at 512 bits, shared by the K-quant products (kquant_avx512.cpp) and their prompt
// tiles (kquant_prompt_avx512.cpp); the scales and flags are kquant_scales.hpp's. Internal linkage
// (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include "../avx2/kquant_scales.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {
namespace {

namespace enc = eredu::encoding;

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline __m512i load512(const void* p) {
  return _mm512_loadu_si512(p);
}

// A 256-bit vector in both halves of a 512-bit one.
inline __m512i both_halves(__m256i v) {
  return _mm512_broadcast_i64x4(v);
}
// Two 256-bit vectors side by side: lo in elements 0..31, hi in 32..63.
inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
// (a & c) | b, bitwise.
inline __m512i and_or(__m512i a, __m512i b, __m512i c) {
  return _mm512_ternarylogic_epi32(a, b, c, 0xEC);
}
// Per 16-bit lane shift counts: `lo` for the first 32 bytes, `hi` for the second 32.
inline __m512i shifts(int lo, int hi) {
  return join(_mm256_set1_epi16(static_cast<short>(lo)), _mm256_set1_epi16(static_cast<short>(hi)));
}
// Bits `shift_lo` (first half) / `shift_hi` (second half) .. + width of every byte, masked.
inline __m512i byte_bits(__m512i v, int shift_lo, int shift_hi, int mask) {
  return _mm512_and_si512(_mm512_srlv_epi16(v, shifts(shift_lo, shift_hi)),
                          _mm512_set1_epi8(static_cast<char>(mask)));
}
inline __m512i low_nibbles(__m512i v) {
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}
inline __m512i high_nibbles(__m512i v) {
  return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
}
// 32 bytes -> their low nibbles (first half) and high nibbles (second half).
inline __m512i split_nibbles(__m256i v) {
  return low_nibbles(join(v, _mm256_srli_epi16(v, 4)));
}

// Per encoding (the scale unpacking and flags in kquant_scales.hpp): codes(b, p) gives the 64
// codes of chunks 2p and 2p + 1 (element order of the block).
struct Q4K : Q4KScales {
  // Chunk 2p: low nibbles of qs[32p ..], chunk 2p + 1: their high nibbles.
  static __m512i codes(const Block& b, int p) { return split_nibbles(load256(b.qs + 32 * p)); }
};

struct Q5K : Q5KScales {
  // As Q4_K, plus bit c of qh as the fifth bit of chunk c.
  static __m512i codes(const Block& b, int p) {
    const __m512i high = byte_bits(both_halves(load256(b.qh)), 2 * p, 2 * p + 1, 1);
    return _mm512_or_si512(split_nibbles(load256(b.qs + 32 * p)), _mm512_slli_epi16(high, 4));
  }
};

struct Q6K : Q6KScales {
  // Chunk c = 4 * half + k reads ql[64 half + 32 (k % 2) ..] (low nibbles for k < 2, else high)
  // and bits 2k, 2k + 1 of qh[32 half ..]: a pair (k = 0, 1 or 2, 3) reads 64 consecutive ql bytes.
  static __m512i codes(const Block& b, int p) {
    const int half = p / 2;
    const int k = 2 * (p % 2);
    const __m512i ql = load512(b.ql + 64 * half);
    const __m512i low = k == 0 ? low_nibbles(ql) : high_nibbles(ql);
    const __m512i high = byte_bits(both_halves(load256(b.qh + 32 * half)), 2 * k, 2 * k + 2, 3);
    return _mm512_or_si512(low, _mm512_slli_epi16(high, 4));
  }
};

struct Q3K : Q3KScales {
  // Chunk c: bits 2 (c % 4), + 1 of qs[32 (c / 4) ..], plus 4 where bit c of hmask is set (the
  // value plus the offset 4).
  static __m512i codes(const Block& b, int p) {
    const int shift = 2 * (2 * p % 4);
    const __m512i low = byte_bits(both_halves(load256(b.qs + 32 * (p / 2))), shift, shift + 2, 3);
    const __m512i high = byte_bits(both_halves(load256(b.hmask)), 2 * p, 2 * p + 1, 1);
    return _mm512_or_si512(low, _mm512_slli_epi16(high, 2));
  }
};

struct Q2K : Q2KScales {
  static __m512i codes(const Block& b, int p) {
    const int shift = 2 * (2 * p % 4);
    return byte_bits(both_halves(load256(b.qs + 32 * (p / 2))), shift, shift + 2, 3);
  }
};

struct IQ4XS : IQ4XSScales {
  // Chunk c: the low nibbles of qs[16c ..] (elements 0-15) then their high nibbles (16-31),
  // looked up in the codebook. For a pair the 32 bytes A | B become A & 15, A >> 4, B & 15, B >> 4
  // (128 bits each).
  static __m512i codes(const Block& b, int p) {
    const __m512i ab = _mm512_castsi256_si512(load256(b.qs + 32 * p));
    const __m512i aabb = _mm512_permutexvar_epi64(_mm512_set_epi64(3, 2, 3, 2, 1, 0, 1, 0), ab);
    const __m512i idx =
        low_nibbles(_mm512_srlv_epi64(aabb, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)));
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(enc::kIQ4NLValues)));
    return _mm512_shuffle_epi8(table, idx);
  }
};

}  // namespace
}  // namespace eredu::cpu::detail
