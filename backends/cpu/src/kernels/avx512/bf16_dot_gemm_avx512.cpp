// AVX-512 BF16 prompt tiles: BF16 weights against activations rounded to BF16, through
// vdpbf16ps (two products per lane per instruction, no widening). Compiled with the AVX-512 flags
// plus -mavx512bf16 (backends/cpu/CMakeLists.txt) and chosen by vec_ops_avx512() only when cpuid
// lists AVX512_BF16; without it the table keeps the widening tile (float_gemm_avx512.cpp).
//
// Each element is one 16-lane chain of vdpbf16ps over k in steps of 32 (lane j takes the pairs
// 2j, 2j + 1 of each step), then the tree sum of float_gemm_avx512.cpp and the k % 32 tail as
// fused multiply-adds in order. vdpbf16ps rounds once per pair step and treats subnormal inputs
// and results as zero, so the values differ from the widening tile's by float rounding; they are
// tested against a float64 product (test_tiled_matmul.cpp), and do not depend on the tiling or
// the thread count. smol135m BF16, 128-token prompt, 2 threads on a Zen 5 guest: the widening
// tile ran 1060-1160 tokens/s, this one 1550 (llama.cpp b9749: 980-1630).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"

namespace eredu::cpu::detail {

namespace {

// 6 rows x 4 tokens, as the widening tile: 24 accumulators, 6 weight vectors, one activation.
constexpr int kRows = static_cast<int>(kFloatGemmRowsAvx512);
constexpr int kTokens = 4;

inline __m512bh load32(const std::uint16_t* p) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(p));
}

inline float widen(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float sum16(__m512 v) {
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}

template <int RM, int RN>
void tile(const std::uint16_t* w, std::size_t ldw, const std::uint16_t* x, std::size_t ldx,
          std::size_t k, float* y, std::size_t ldy) {
  __m512 acc[RM][RN];
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t)
      acc[r][t] = _mm512_setzero_ps();
  }
  std::size_t i = 0;
  for (; i + 32 <= k; i += 32) {
    __m512bh wv[RM];
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r)
      wv[r] = load32(w + r * ldw + i);
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      const __m512bh xv = load32(x + t * ldx + i);
#pragma GCC unroll 8
      for (int r = 0; r < RM; ++r)
        acc[r][t] = _mm512_dpbf16_ps(acc[r][t], wv[r], xv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      float sum = sum16(acc[r][t]);
      for (std::size_t j = i; j < k; ++j)
        sum = __builtin_fmaf(widen(w[r * ldw + j]), widen(x[t * ldx + j]), sum);
      y[t * ldy + r] = sum;
    }
  }
}

// tile<rm, RN> for run-time rm <= RM.
template <int RN, int RM = kRows>
void tile_rows(std::size_t rm, const std::uint16_t* w, std::size_t ldw, const std::uint16_t* x,
               std::size_t ldx, std::size_t k, float* y, std::size_t ldy) {
  if constexpr (RM == 1) {
    tile<1, RN>(w, ldw, x, ldx, k, y, ldy);
  } else if (rm == RM) {
    tile<RM, RN>(w, ldw, x, ldx, k, y, ldy);
  } else {
    tile_rows<RN, RM - 1>(rm, w, ldw, x, ldx, k, y, ldy);
  }
}

// tile<rm, rn> for run-time rm <= kRows, rn <= RN.
template <int RN = kTokens>
void tile_edge(std::size_t rm, std::size_t rn, const std::uint16_t* w, std::size_t ldw,
               const std::uint16_t* x, std::size_t ldx, std::size_t k, float* y, std::size_t ldy) {
  if constexpr (RN == 1) {
    tile_rows<1>(rm, w, ldw, x, ldx, k, y, ldy);
  } else if (rn == RN) {
    tile_rows<RN>(rm, w, ldw, x, ldx, k, y, ldy);
  } else {
    tile_edge<RN - 1>(rm, rn, w, ldw, x, ldx, k, y, ldy);
  }
}

}  // namespace

void bf16_dot_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                          const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                          float* y, std::size_t ldy) {
  // Tokens outer, rows inner: the row block stays in cache while token tiles stream past.
  for (std::size_t t0 = 0; t0 < n; t0 += kTokens) {
    const std::size_t rn = n - t0 < kTokens ? n - t0 : kTokens;
    for (std::size_t r0 = 0; r0 < m; r0 += kRows) {
      const std::size_t rm = m - r0 < kRows ? m - r0 : kRows;
      tile_edge(rm, rn, w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, y + t0 * ldy + r0, ldy);
    }
  }
}

}  // namespace eredu::cpu::detail
