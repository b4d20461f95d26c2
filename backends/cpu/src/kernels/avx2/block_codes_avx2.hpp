#pragma once
// Internal, ISA translation units only (avx2/*.cpp, avx512/*.cpp; both are built with AVX2): a
// block's 32 codes as bytes in element order, for the row dots, the tiles and the prompt tiles of
// both tables: Q4_0, Q5_0, Q8_0 and IQ4_NL signed (the values the block's scale multiplies), Q4_1
// and Q5_1 unsigned (value = d * code + m). Everything has internal
// linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {
namespace {

struct Q4_0SignedCodes {
  using Block = encoding::BlockQ4_0;
  static __m256i codes(const Block& b) {
    return _mm256_sub_epi8(nibbles_to_bytes(b.qs), _mm256_set1_epi8(8));
  }
};

// The nibble, bit 4 from qh, minus 16: where the fifth bit is clear, bits 4..7 set make the two's
// complement.
struct Q5_0SignedCodes {
  using Block = encoding::BlockQ5_0;
  static __m256i codes(const Block& b) {
    const __m256i high = _mm256_andnot_si256(bits_to_bytes(b.qh), _mm256_set1_epi8(-16));
    return _mm256_or_si256(nibbles_to_bytes(b.qs), high);
  }
};

struct Q8_0SignedCodes {
  using Block = encoding::BlockQ8_0;
  static __m256i codes(const Block& b) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
  }
};

// The IQ4_NL codebook (also IQ4_XS's) in both 128-bit lanes, for _mm256_shuffle_epi8.
inline __m256i iq4nl_table() {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(encoding::kIQ4NLValues));
  return _mm256_set_m128i(t, t);
}

// IQ4_NL: the codebook's value at each nibble (nibble order as Q4_0).
struct IQ4_NLSignedCodes {
  using Block = encoding::BlockIQ4_NL;
  static __m256i codes(const Block& b) {
    return _mm256_shuffle_epi8(iq4nl_table(), nibbles_to_bytes(b.qs));
  }
};

struct Q4_1Codes {
  using Block = encoding::BlockQ4_1;
  static __m256i codes(const Block& b) { return nibbles_to_bytes(b.qs); }
};

struct Q5_1Codes {
  using Block = encoding::BlockQ5_1;
  static __m256i codes(const Block& b) {
    const __m256i high = _mm256_and_si256(bits_to_bytes(b.qh), _mm256_set1_epi8(16));
    return _mm256_or_si256(nibbles_to_bytes(b.qs), high);
  }
};

}  // namespace
}  // namespace eredu::cpu::detail
