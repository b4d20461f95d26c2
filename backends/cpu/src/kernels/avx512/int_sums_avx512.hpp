#pragma once
// Internal, AVX-512 translation units only (avx512/*.cpp): horizontal sums of exact int32 partial
// sums, shared by the K-quant products (kquant_avx512.cpp) and their one-token kernels
// (kquant_decode_avx512.cpp). Internal linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstdint>

namespace eredu::cpu::detail {
namespace {

// Horizontal sums of four vectors at once (the sums are exact integers, so the order in which
// lanes are added cannot matter). A "pair form" holds two vectors' partial sums as 128-bit lanes
// [a0, a1, b0, b1]; the four totals come out as int32 lanes 0..3 in the order a, b, c, d.
inline __m512i pair_form(__m512i a, __m512i b) {
  return _mm512_add_epi32(_mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}
inline __m512i pair_form(__m256i a, __m256i b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}
inline __m128i totals(__m512i ab, __m512i cd) {
  // [a, b, c, d] partial sums of 4 int32 each, then each 128-bit lane summed into its lane 0.
  __m512i v = _mm512_add_epi32(_mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)),
                               _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));
  v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_BADC));
  v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_CDAB));
  return _mm512_castsi512_si128(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), v));
}
template <typename V>
inline __m128i sum4(V a, V b, V c, V d) {
  return totals(pair_form(a, b), pair_form(c, d));
}
inline std::int32_t sum1(__m512i v) {
  return _mm512_reduce_add_epi32(v);
}
inline std::int32_t sum1(__m256i v) {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  return _mm_cvtsi128_si32(h);
}

}  // namespace
}  // namespace eredu::cpu::detail
