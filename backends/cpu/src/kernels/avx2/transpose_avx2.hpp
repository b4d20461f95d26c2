#pragma once
// Internal, AVX2 translation units only (avx2/*.cpp): the dword transpose that lays 8 weight rows
// side by side, one row per 32-bit lane, for the prompt tiles. Internal linkage (anonymous
// namespace), see vec_ops.hpp.
#include <immintrin.h>

namespace eredu::cpu::detail {
namespace {

// Rows r < 8 (z[r], 8 dwords each) become the rows' dword g in z[g].
inline void transpose8(__m256i (&z)[8]) {
  __m256i t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(z[2 * i], z[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(z[2 * i], z[2 * i + 1]);
  }
  __m256i u[8];
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);          // dwords 0, 4
    u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);      // dwords 1, 5
    u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);  // dwords 2, 6
    u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);  // dwords 3, 7
  }
  for (int j = 0; j < 4; ++j) {
    z[j] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x20);
    z[j + 4] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x31);
  }
}

}  // namespace
}  // namespace eredu::cpu::detail
