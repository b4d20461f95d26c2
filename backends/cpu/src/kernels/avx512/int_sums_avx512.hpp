#pragma once
// Internal, AVX-512 translation units only (avx512/*.cpp): horizontal sums of exact int32 partial
// sums, shared by the K-quant products (kquant_avx512.cpp) and their one-token kernels
// (kquant_decode_avx512.cpp, iq4xs_decode_avx512.cpp), and the float chain of blocks with one
// scale each. Internal linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "../avx2/kquant_scales.hpp"

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

// One row over n blocks with one F16 scale d each (Q6_K, Q3_K, IQ4_XS): per block the definition's
// acc = fma(fl(d x xd[b]), float(isum), acc), the blocks in order, where block_sum(b) gives block
// b's exact int32 partial sums. Four blocks' totals share one reduction tree, then
// fma_four_blocks (kquant_scales.hpp).
template <typename Block, typename BlockSum>
inline float one_scale_blocks(const Block* w, const float* xd, std::size_t n, float acc,
                              BlockSum block_sum) {
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    __m512i isum[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
      isum[g] = block_sum(b + g);
    acc =
        fma_four_blocks(acc, w + b, _mm_loadu_ps(xd + b), sum4(isum[0], isum[1], isum[2], isum[3]));
  }
  for (; b < n; ++b)
    acc =
        __builtin_fmaf(half_to_float(w[b].d) * xd[b], static_cast<float>(sum1(block_sum(b))), acc);
  return acc;
}

}  // namespace
}  // namespace eredu::cpu::detail
