// AVX-512 tiled float product for prompt batches (weights stored or decoded as F32), bit-identical
// to the AVX2 table's float_gemm_avx2 (gemm_avx2.cpp). Compiled with the AVX-512 flags
// (backends/cpu/CMakeLists.txt) and reached only through vec_ops_avx512().
//
// The AVX2 kernel gives each element one 8-lane FMA chain over k in steps of 8 (llamafile's
// tinyBLAS order), a fixed horizontal sum, then the k % 8 tail in order. Here a 512-bit accumulator
// holds the chains of two tokens (token 2p in the low half, 2p + 1 in the high half) and the weight
// row's 8 floats sit in both halves, so one 16-lane FMA performs both tokens' AVX2 step, lane for
// lane: twice the multiply-adds per instruction, and the same values (hsum is the AVX2 one).
#include <immintrin.h>

#include <cstddef>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"

namespace eredu::cpu::detail {

namespace {

// 4 rows x 8 tokens (4 pairs): 16 accumulators, 4 weight vectors and the activation pairs fit the
// 32 registers; each weight load serves 8 tokens, each activation load 4 rows.
constexpr int kRows = static_cast<int>(kFloatGemmRowsAvx512);
constexpr int kPairs = 4;

// RM rows x rn tokens (rn <= 2 * TP); a missing second token of a pair repeats the first (computed
// and dropped), so every load stays inside the activations.
template <int RM, int TP>
void float_tile(const float* w, std::size_t ldw, const float* x, std::size_t ldx, std::size_t rn,
                std::size_t k, float* y, std::size_t ldy) {
  const float* xt[2 * TP];
#pragma GCC unroll 8
  for (int t = 0; t < 2 * TP; ++t)
    xt[t] = x + (static_cast<std::size_t>(t) < rn ? t : rn - 1) * ldx;
  __m512 acc[RM][TP];
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < TP; ++p)
      acc[r][p] = _mm512_setzero_ps();
  }
  std::size_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m512 wv[RM];
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r)
      wv[r] = _mm512_broadcast_f32x8(_mm256_loadu_ps(w + r * ldw + i));
#pragma GCC unroll 4
    for (int p = 0; p < TP; ++p) {
      const __m512 xv = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(xt[2 * p] + i)),
                                           _mm256_loadu_ps(xt[2 * p + 1] + i), 1);
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r)
        acc[r][p] = _mm512_fmadd_ps(wv[r], xv, acc[r][p]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < TP; ++p) {
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const std::size_t t = 2 * static_cast<std::size_t>(p) + static_cast<std::size_t>(h);
        if (t >= rn) continue;
        float sum =
            hsum(h == 0 ? _mm512_castps512_ps256(acc[r][p]) : _mm512_extractf32x8_ps(acc[r][p], 1));
        for (std::size_t j = i; j < k; ++j)
          sum += w[r * ldw + j] * x[t * ldx + j];
        y[t * ldy + r] = sum;
      }
    }
  }
}

// float_tile<rm, TP> for run-time rm <= RM.
template <int TP, int RM = kRows>
void float_tile_rows(std::size_t rm, const float* w, std::size_t ldw, const float* x,
                     std::size_t ldx, std::size_t rn, std::size_t k, float* y, std::size_t ldy) {
  if constexpr (RM == 1) {
    float_tile<1, TP>(w, ldw, x, ldx, rn, k, y, ldy);
  } else if (rm == RM) {
    float_tile<RM, TP>(w, ldw, x, ldx, rn, k, y, ldy);
  } else {
    float_tile_rows<TP, RM - 1>(rm, w, ldw, x, ldx, rn, k, y, ldy);
  }
}

// As few token pairs as the rn tokens need.
template <int TP = kPairs>
void float_tile_edge(std::size_t rm, std::size_t rn, const float* w, std::size_t ldw,
                     const float* x, std::size_t ldx, std::size_t k, float* y, std::size_t ldy) {
  if constexpr (TP == 1) {
    float_tile_rows<1>(rm, w, ldw, x, ldx, rn, k, y, ldy);
  } else if ((rn + 1) / 2 == TP) {
    float_tile_rows<TP>(rm, w, ldw, x, ldx, rn, k, y, ldy);
  } else {
    float_tile_edge<TP - 1>(rm, rn, w, ldw, x, ldx, k, y, ldy);
  }
}

}  // namespace

void float_gemm_avx512(const float* w, std::size_t ldw, std::size_t m, const float* x,
                       std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  constexpr std::size_t kTokens = 2 * kPairs;
  // Tokens outer, rows inner, as the AVX2 kernel.
  for (std::size_t t0 = 0; t0 < n; t0 += kTokens) {
    const std::size_t rn = n - t0 < kTokens ? n - t0 : kTokens;
    for (std::size_t r0 = 0; r0 < m; r0 += kRows) {
      const std::size_t rm = m - r0 < kRows ? m - r0 : kRows;
      float_tile_edge(rm, rn, w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, y + t0 * ldy + r0, ldy);
    }
  }
}

}  // namespace eredu::cpu::detail
