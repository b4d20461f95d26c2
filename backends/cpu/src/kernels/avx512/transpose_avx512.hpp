#pragma once
// Internal, AVX-512 translation units only (avx512/*.cpp): dword transposes that lay 16 weight rows
// side by side, one row per 32-bit lane, for the prompt tiles. Internal linkage (anonymous
// namespace), see vec_ops.hpp.
#include <immintrin.h>

namespace eredu::cpu::detail {
namespace {

// Rows r (low halves, dwords 0..7) and r + 8 (high halves) in z[r], r < 8, become dword g of the
// 16 rows in z[g]: an 8 x 8 dword transpose in each 256-bit half.
inline void transpose_halves(__m512i (&z)[8]) {
  __m512i t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(z[2 * i], z[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(z[2 * i], z[2 * i + 1]);
  }
  __m512i u[8];
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);          // dwords 0, 4
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);      // dwords 1, 5
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);  // dwords 2, 6
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);  // dwords 3, 7
  }
  // Per half, 128-bit lane 0 of u[j] (rows 0-3) then of u[j + 4] (rows 4-7) is dword j, lane 1
  // dword j + 4.
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const __m512i second = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  for (int j = 0; j < 4; ++j) {
    z[j] = _mm512_permutex2var_epi64(u[j], first, u[j + 4]);
    z[j + 4] = _mm512_permutex2var_epi64(u[j], second, u[j + 4]);
  }
}

// 16 rows of 16 dwords (z[r] = row r) become 16 vectors of the rows' dword g (z[g]).
inline void transpose16(__m512i (&z)[16]) {
  __m512i low[8];
  __m512i high[8];
  for (int r = 0; r < 8; ++r) {
    // Dwords 0-7 of rows r and r + 8, and dwords 8-15 of the same rows.
    low[r] = _mm512_shuffle_i64x2(z[r], z[r + 8], _MM_SHUFFLE(1, 0, 1, 0));
    high[r] = _mm512_shuffle_i64x2(z[r], z[r + 8], _MM_SHUFFLE(3, 2, 3, 2));
  }
  transpose_halves(low);
  transpose_halves(high);
  for (int g = 0; g < 8; ++g) {
    z[g] = low[g];
    z[g + 8] = high[g];
  }
}

}  // namespace
}  // namespace eredu::cpu::detail
