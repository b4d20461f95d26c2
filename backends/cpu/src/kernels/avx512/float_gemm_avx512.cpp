// AVX-512 tiled float products for prompt batches: weights stored or decoded as F32 (FloatGemm),
// and F16 (BF16) weights with F16 (BF16) activations widened as they are loaded (HalfGemm).
// Compiled with the AVX-512 flags (backends/cpu/CMakeLists.txt) and reached only through
// vec_ops_avx512().
//
// Each element is one 16-lane FMA chain over k in steps of 16, then a fixed horizontal sum (the
// two 8-lane halves added, then the AVX2 hsum) and the k % 16 tail in order. An RM x RN tile keeps
// one accumulator per (row, token): per step RM weight loads and RN activation loads feed RM * RN
// multiply-adds, with no broadcast or lane insert between them. The values differ from the AVX2
// table's (8-lane chains) by float rounding only; they are tested against a float64 product, and
// do not depend on the tiling or the thread count. F16 and BF16 operands are widened exactly, so
// HalfGemm gives FloatGemm's value on the widened rows.
//
// Measured on a 2-core Zen 5 guest (llama1b F16, 128-token prompt, 2 threads, interleaved): the
// tile that reproduced the AVX2 chains (two tokens' 8-lane chains per register, a broadcast and an
// insert per operand pair, F32 rows widened into a buffer first) ran 104-121 tokens/s; the same
// 16-lane tile on widened F32 rows ran no faster (the F32 operands streamed from L2 at ~50 bytes a
// cycle); on the F16 rows as stored, 6 x 4, it runs 181-188.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"

namespace eredu::cpu::detail {

namespace {

// 6 rows x 4 tokens: 24 accumulators, 6 weight vectors and one activation vector in the 32
// registers; each weight load serves 4 tokens, each activation load 6 rows. (llama1b F16, 128
// tokens, 2 threads: 6 x 4 ran 181-188 tokens/s, 5 x 5 177-179, 4 x 6 161-175, 3 x 8 160-171.)
constexpr int kRows = static_cast<int>(kFloatGemmRowsAvx512);
constexpr int kTokens = 4;

// How an operand's elements load as floats: 16 at a time, and one by one for the tail.
struct F32Elements {
  using T = float;
  static __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
  static float load1(const float* p) { return *p; }
};
struct F16Elements {
  using T = std::uint16_t;
  static __m512 load16(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static float load1(const std::uint16_t* p) { return half_to_float(*p); }
};

struct BF16Elements {
  using T = std::uint16_t;
  static __m512 load16(const std::uint16_t* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static float load1(const std::uint16_t* p) {
    const std::uint32_t bits = static_cast<std::uint32_t>(*p) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
};

inline float hsum16(__m512 v) {
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}

template <typename E, int RM, int RN>
void tile(const typename E::T* w, std::size_t ldw, const typename E::T* x, std::size_t ldx,
          std::size_t k, float* y, std::size_t ldy) {
  __m512 acc[RM][RN];
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t)
      acc[r][t] = _mm512_setzero_ps();
  }
  std::size_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m512 wv[RM];
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r)
      wv[r] = E::load16(w + r * ldw + i);
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      const __m512 xv = E::load16(x + t * ldx + i);
#pragma GCC unroll 8
      for (int r = 0; r < RM; ++r)
        acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      float sum = hsum16(acc[r][t]);
      for (std::size_t j = i; j < k; ++j)
        sum = __builtin_fmaf(E::load1(w + r * ldw + j), E::load1(x + t * ldx + j), sum);
      y[t * ldy + r] = sum;
    }
  }
}

// tile<E, rm, RN> for run-time rm <= RM.
template <typename E, int RN, int RM = kRows>
void tile_rows(std::size_t rm, const typename E::T* w, std::size_t ldw, const typename E::T* x,
               std::size_t ldx, std::size_t k, float* y, std::size_t ldy) {
  if constexpr (RM == 1) {
    tile<E, 1, RN>(w, ldw, x, ldx, k, y, ldy);
  } else if (rm == RM) {
    tile<E, RM, RN>(w, ldw, x, ldx, k, y, ldy);
  } else {
    tile_rows<E, RN, RM - 1>(rm, w, ldw, x, ldx, k, y, ldy);
  }
}

// tile<E, rm, rn> for run-time rm <= kRows, rn <= RN.
template <typename E, int RN = kTokens>
void tile_edge(std::size_t rm, std::size_t rn, const typename E::T* w, std::size_t ldw,
               const typename E::T* x, std::size_t ldx, std::size_t k, float* y, std::size_t ldy) {
  if constexpr (RN == 1) {
    tile_rows<E, 1>(rm, w, ldw, x, ldx, k, y, ldy);
  } else if (rn == RN) {
    tile_rows<E, RN>(rm, w, ldw, x, ldx, k, y, ldy);
  } else {
    tile_edge<E, RN - 1>(rm, rn, w, ldw, x, ldx, k, y, ldy);
  }
}

template <typename E>
void gemm(const typename E::T* w, std::size_t ldw, std::size_t m, const typename E::T* x,
          std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  // Tokens outer, rows inner: the row block stays in cache while token tiles stream past.
  for (std::size_t t0 = 0; t0 < n; t0 += kTokens) {
    const std::size_t rn = n - t0 < kTokens ? n - t0 : kTokens;
    for (std::size_t r0 = 0; r0 < m; r0 += kRows) {
      const std::size_t rm = m - r0 < kRows ? m - r0 : kRows;
      tile_edge<E>(rm, rn, w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, y + t0 * ldy + r0, ldy);
    }
  }
}

}  // namespace

void float_gemm_avx512(const float* w, std::size_t ldw, std::size_t m, const float* x,
                       std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  gemm<F32Elements>(w, ldw, m, x, ldx, n, k, y, ldy);
}

void f16_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m, const std::uint16_t* x,
                     std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  gemm<F16Elements>(w, ldw, m, x, ldx, n, k, y, ldy);
}

}  // namespace eredu::cpu::detail

namespace eredu::cpu::detail {

void bf16_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                      const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                      float* y, std::size_t ldy) {
  gemm<BF16Elements>(w, ldw, m, x, ldx, n, k, y, ldy);
}

}  // namespace eredu::cpu::detail
