#pragma once
// Internal, AVX2 translation units only (avx2/*.cpp): how each K-quant and IQ4_XS block's codes
// unpack at 256 bits, shared by the K-quant products (kquant_avx2.cpp) and their prompt tiles
// (kquant_prompt_avx2.cpp); the scales and flags are kquant_scales.hpp's. Internal linkage
// (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include "block_codes_avx2.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "kquant_scales.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {
namespace {

namespace enc = eredu::encoding;

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

inline __m256i low_nibbles(__m256i v) {
  return _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
}
inline __m256i high_nibbles(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
}
// Bits `shift`, `shift` + 1 (width 1 or 2, mask 1 or 3) of every byte.
inline __m256i byte_bits(__m256i v, int shift, int mask) {
  return _mm256_and_si256(_mm256_srli_epi16(v, shift), _mm256_set1_epi8(static_cast<char>(mask)));
}

// Per encoding (the scale unpacking and flags in kquant_scales.hpp): its activation blocks, the
// number of 32-element chunks, and the 32 codes of chunk c as bytes.
struct Q4K : Q4KScales {
  using Act = enc::BlockQ8_K;
  static constexpr int kChunks = 8;
  static __m256i codes(const Block& b, int c) {
    const __m256i v = load256(b.qs + 32 * (c / 2));
    return c % 2 == 0 ? low_nibbles(v) : high_nibbles(v);
  }
};

struct Q5K : Q5KScales {
  using Act = enc::BlockQ8_K;
  static constexpr int kChunks = 8;
  static __m256i codes(const Block& b, int c) {
    const __m256i v = load256(b.qs + 32 * (c / 2));
    const __m256i low = c % 2 == 0 ? low_nibbles(v) : high_nibbles(v);
    const __m256i high = _mm256_slli_epi16(byte_bits(load256(b.qh), c, 1), 4);
    return _mm256_or_si256(low, high);
  }
};

struct Q6K : Q6KScales {
  using Act = enc::BlockQ8_K;
  static constexpr int kChunks = 8;
  static __m256i codes(const Block& b, int c) {
    const int half = c / 4;
    const int k = c % 4;
    const __m256i v = load256(b.ql + 64 * half + 32 * (k % 2));
    const __m256i low = k < 2 ? low_nibbles(v) : high_nibbles(v);
    const __m256i high = _mm256_slli_epi16(byte_bits(load256(b.qh + 32 * half), 2 * k, 3), 4);
    return _mm256_or_si256(low, high);
  }
};

struct Q3K : Q3KScales {
  using Act = enc::BlockQ8_K;
  static constexpr int kChunks = 8;
  // The 2-bit code plus 4 where the hmask bit is set: the value plus the offset 4.
  static __m256i codes(const Block& b, int c) {
    const __m256i low = byte_bits(load256(b.qs + 32 * (c / 4)), 2 * (c % 4), 3);
    const __m256i high = _mm256_slli_epi16(byte_bits(load256(b.hmask), c, 1), 2);
    return _mm256_or_si256(low, high);
  }
};

struct Q2K : Q2KScales {
  using Act = enc::BlockQ8_K;
  static constexpr int kChunks = 8;
  static __m256i codes(const Block& b, int c) {
    return byte_bits(load256(b.qs + 32 * (c / 4)), 2 * (c % 4), 3);
  }
};

struct IQ4XS : IQ4XSScales {
  using Act = enc::BlockQ8_K;
  static constexpr int kChunks = 8;
  static __m256i codes(const Block& b, int c) {
    return _mm256_shuffle_epi8(iq4nl_table(), nibbles_to_bytes(b.qs + 16 * c));
  }
};
}  // namespace
}  // namespace eredu::cpu::detail
