#pragma once
// Internal, AVX-512 translation units only (avx512/*.cpp): the register tile the AVX-512 float
// prompt products share (float_gemm_avx512.cpp: F32, F16 and BF16 operands widened to floats;
// bf16_dot_gemm_avx512.cpp: BF16 pairs through vdpbf16ps). Everything has internal linkage
// (anonymous namespace), see vec_ops.hpp.
//
// A Step says how the operands are read and multiplied: S::T the stored element, S::kWidth the
// elements one step takes, S::Vec what S::load gives for a step, S::Acc the float lanes
// S::madd(acc, w, x) adds into (from S::zero()), S::sum(acc) their fixed horizontal sum, and
// S::load1 one element as a float (for the k % kWidth tail). Each element is one chain of steps
// over k, then S::sum and the tail as fused multiply-adds in order, so its value depends on k
// only, never on the tiling. Most steps run 16-lane chains in zmm registers (Zmm16Lanes); the F16
// tile for CPUs that split 512-bit operations in two runs the AVX2 table's 8-lane ones in ymm
// registers (Ymm8Lanes, float_gemm_avx512.cpp), still 6 x 4 in the 32 registers.
#include <immintrin.h>

#include <cstddef>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"

namespace eredu::cpu::detail {
namespace {

// 6 rows x 4 tokens: 24 accumulators, 6 weight vectors and one activation vector in the 32
// registers; each weight load serves 4 tokens, each activation load 6 rows. (llama1b F16, 128
// tokens, 2 threads: 6 x 4 ran 181-188 tokens/s, 5 x 5 177-179, 4 x 6 161-175, 3 x 8 160-171.)
constexpr int kFloatTileRows = static_cast<int>(kFloatGemmRowsAvx512);
constexpr int kFloatTileTokens = 4;

inline float hsum16(__m512 v) {
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}

// Accumulators of 16 float lanes, summed by hsum16.
struct Zmm16Lanes {
  using Acc = __m512;
  static __m512 zero() { return _mm512_setzero_ps(); }
  static float sum(__m512 acc) { return hsum16(acc); }
};

// Accumulators of 8 float lanes, summed by the AVX2 table's hsum (simd_avx2.hpp).
struct Ymm8Lanes {
  using Acc = __m256;
  static __m256 zero() { return _mm256_setzero_ps(); }
  static float sum(__m256 acc) { return hsum(acc); }
};

template <typename S, int RM, int RN>
void float_tile(const typename S::T* w, std::size_t ldw, const typename S::T* x, std::size_t ldx,
                std::size_t k, float* y, std::size_t ldy) {
  typename S::Acc acc[RM][RN];
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t)
      acc[r][t] = S::zero();
  }
  std::size_t i = 0;
  for (; i + S::kWidth <= k; i += S::kWidth) {
    typename S::Vec wv[RM];
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r)
      wv[r] = S::load(w + r * ldw + i);
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      const typename S::Vec xv = S::load(x + t * ldx + i);
#pragma GCC unroll 8
      for (int r = 0; r < RM; ++r)
        acc[r][t] = S::madd(acc[r][t], wv[r], xv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      float sum = S::sum(acc[r][t]);
      for (std::size_t j = i; j < k; ++j)
        sum = __builtin_fmaf(S::load1(w + r * ldw + j), S::load1(x + t * ldx + j), sum);
      y[t * ldy + r] = sum;
    }
  }
}

// float_tile<S, rm, RN> for run-time rm <= RM.
template <typename S, int RN, int RM = kFloatTileRows>
void float_tile_rows(std::size_t rm, const typename S::T* w, std::size_t ldw,
                     const typename S::T* x, std::size_t ldx, std::size_t k, float* y,
                     std::size_t ldy) {
  if constexpr (RM == 1) {
    float_tile<S, 1, RN>(w, ldw, x, ldx, k, y, ldy);
  } else if (rm == RM) {
    float_tile<S, RM, RN>(w, ldw, x, ldx, k, y, ldy);
  } else {
    float_tile_rows<S, RN, RM - 1>(rm, w, ldw, x, ldx, k, y, ldy);
  }
}

// float_tile<S, rm, rn> for run-time rm <= kFloatTileRows, rn <= RN.
template <typename S, int RN = kFloatTileTokens>
void float_tile_edge(std::size_t rm, std::size_t rn, const typename S::T* w, std::size_t ldw,
                     const typename S::T* x, std::size_t ldx, std::size_t k, float* y,
                     std::size_t ldy) {
  if constexpr (RN == 1) {
    float_tile_rows<S, 1>(rm, w, ldw, x, ldx, k, y, ldy);
  } else if (rn == RN) {
    float_tile_rows<S, RN>(rm, w, ldw, x, ldx, k, y, ldy);
  } else {
    float_tile_edge<S, RN - 1>(rm, rn, w, ldw, x, ldx, k, y, ldy);
  }
}

// The whole m x n product, tokens outer, rows inner: the row block stays in cache while token tiles
// stream past.
template <typename S>
void float_tiles(const typename S::T* w, std::size_t ldw, std::size_t m, const typename S::T* x,
                 std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  for (std::size_t t0 = 0; t0 < n; t0 += kFloatTileTokens) {
    const std::size_t rn = n - t0 < kFloatTileTokens ? n - t0 : kFloatTileTokens;
    for (std::size_t r0 = 0; r0 < m; r0 += kFloatTileRows) {
      const std::size_t rm = m - r0 < kFloatTileRows ? m - r0 : kFloatTileRows;
      float_tile_edge<S>(rm, rn, w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, y + t0 * ldy + r0, ldy);
    }
  }
}

}  // namespace
}  // namespace eredu::cpu::detail
