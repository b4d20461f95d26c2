#pragma once
// Internal, ISA translation units only (avx2/*.cpp, avx512/*.cpp; both are built with AVX2): a
// block's 32 codes as bytes in element order, for the row dots, the tiles and the prompt tiles of
// both tables: Q4_0, Q5_0 and Q8_0 signed (the values the block's scale multiplies), Q4_1 and Q5_1
// unsigned (value = d * code + m). Everything has internal
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
