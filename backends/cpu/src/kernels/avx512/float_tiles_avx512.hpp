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
#include <type_traits>

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

// The horizontal sums of N <= 16 accumulators at once, lane j of the result holding z[j]'s: each
// exactly hsum16's, since the same lanes are paired and added in the same order (lanes i and i + 8,
// then i and i + 4, then 0 and 2 / 1 and 3, then those two; a float add is commutative, so only the
// pairing decides the value), but each add serves up to 16 sums: ~45 shuffles and adds for 16 sums
// instead of ~130. With rows of 64 (stories260K), hsum16 per accumulator was about as much work as
// the tile's multiply-adds: eredu_bench_cpu_kernels Matmul/F32/64x64/tokens:128, one thread, 6
// interleaved rounds on a Zen 4 guest, 18.4-20.4 -> 15.8-16.5 us, 172x64 49-54 -> 43-47 us (64x172,
// whose rows end in a tail of 12 summed one by one, 66-68 -> 64-68).
template <int N>
[[gnu::always_inline]] inline __m512 hsum16_many(const __m512* z) {
  static_assert(N >= 1 && N <= 16);
  constexpr int kA = (N + 1) / 2;  // registers after each level
  constexpr int kB = (kA + 1) / 2;
  constexpr int kC = (kB + 1) / 2;
  auto in = [z](int i) { return i < N ? z[i] : _mm512_setzero_ps(); };
  // Lanes i and i + 8 of two accumulators: [z[2p] 0..7 | z[2p + 1] 0..7].
  __m512 a[8];
#pragma GCC unroll 8
  for (int p = 0; p < kA; ++p) {
    const __m512 u = in(2 * p);
    const __m512 v = in(2 * p + 1);
    a[p] = _mm512_add_ps(_mm512_shuffle_f32x4(u, v, 0x44), _mm512_shuffle_f32x4(u, v, 0xEE));
  }
  // Lanes i and i + 4 of each 8: four accumulators' 4 lanes, one per 128-bit quarter.
  __m512 b[4];
#pragma GCC unroll 4
  for (int q = 0; q < kB; ++q) {
    const __m512 u = a[2 * q];
    const __m512 v = 2 * q + 1 < kA ? a[2 * q + 1] : _mm512_setzero_ps();
    b[q] = _mm512_add_ps(_mm512_shuffle_f32x4(u, v, 0x88), _mm512_shuffle_f32x4(u, v, 0xDD));
  }
  // Lanes 0 and 2, 1 and 3 of each quarter: quarter k holds accumulator 8s + k's two, then
  // 8s + 4 + k's.
  __m512 c[2];
#pragma GCC unroll 2
  for (int s = 0; s < kC; ++s) {
    const __m512d u = _mm512_castps_pd(b[2 * s]);
    const __m512d v = _mm512_castps_pd(2 * s + 1 < kB ? b[2 * s + 1] : _mm512_setzero_ps());
    c[s] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(u, v)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(u, v)));
  }
  // The two halves of each: quarter k holds accumulators k, 4 + k, 8 + k, 12 + k.
  const __m512 m = c[0];
  const __m512 n = kC > 1 ? c[1] : _mm512_setzero_ps();
  const __m512 sums = _mm512_add_ps(_mm512_shuffle_ps(m, n, _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_ps(m, n, _MM_SHUFFLE(3, 1, 3, 1)));
  // Lane 4k + j holds accumulator 4j + k: transposed back.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, sums);
}

// The AVX2 hsum of N <= 8 accumulators of 8 lanes at once, lane j of the result holding z[j]'s,
// likewise the same pairs in the same order (lanes i and i + 4, then 0 and 2 / 1 and 3, then those
// two): ~22 operations for 8 sums instead of ~48. The F16 tile on CPUs that split 512-bit
// operations (Zen 4) keeps these: Matmul/F16/576x1536/tokens:128, one thread, six interleaved
// rounds, 2.11-2.17 -> 2.05-2.14 ms; smol135m F16 pp128 at 2 threads, 8 rounds, median of paired
// ratios 1.02x.
template <int N>
[[gnu::always_inline]] inline __m256 hsum8_many(const __m256* z) {
  static_assert(N >= 1 && N <= 8);
  constexpr int kA = (N + 1) / 2;  // registers after each level
  constexpr int kB = (kA + 1) / 2;
  auto in = [z](int i) { return i < N ? z[i] : _mm256_setzero_ps(); };
  // Lanes i and i + 4 of two accumulators: [z[2p]'s 4 | z[2p + 1]'s 4].
  __m256 a[4];
#pragma GCC unroll 4
  for (int p = 0; p < kA; ++p) {
    const __m256 u = in(2 * p);
    const __m256 v = in(2 * p + 1);
    a[p] = _mm256_add_ps(_mm256_permute2f128_ps(u, v, 0x20), _mm256_permute2f128_ps(u, v, 0x31));
  }
  // Lanes 0 and 2, 1 and 3: the low half holds accumulators 4q and 4q + 2's two, the high half
  // 4q + 1 and 4q + 3's.
  __m256 b[2];
#pragma GCC unroll 2
  for (int q = 0; q < kB; ++q) {
    const __m256d u = _mm256_castps_pd(a[2 * q]);
    const __m256d v = _mm256_castps_pd(2 * q + 1 < kA ? a[2 * q + 1] : _mm256_setzero_ps());
    b[q] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(u, v)),
                         _mm256_castpd_ps(_mm256_unpackhi_pd(u, v)));
  }
  // The two halves of each: the low half holds accumulators 0, 2, 4, 6, the high 1, 3, 5, 7.
  const __m256 m = b[0];
  const __m256 n = kB > 1 ? b[1] : _mm256_setzero_ps();
  const __m256 sums = _mm256_add_ps(_mm256_shuffle_ps(m, n, _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm256_shuffle_ps(m, n, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_permutevar8x32_ps(sums, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// S::sum of every accumulator of an RM x RN tile into sums[r * RN + t]: 16 (8) at a time where the
// accumulators are 16-lane (8-lane) ones.
template <typename S, int RM, int RN>
[[gnu::always_inline]] inline void tile_sums(const typename S::Acc (&acc)[RM][RN], float* sums) {
  constexpr int kCount = RM * RN;
  if constexpr (std::is_base_of_v<Zmm16Lanes, S> && kCount >= 4) {
    const __m512* flat = &acc[0][0];  // row-major: element r * RN + t, the order sums takes
    if constexpr (kCount > 16) {
      _mm512_storeu_ps(sums, hsum16_many<16>(flat));
      _mm512_storeu_ps(sums + 16, hsum16_many<kCount - 16>(flat + 16));
    } else {
      _mm512_storeu_ps(sums, hsum16_many<kCount>(flat));
    }
  } else if constexpr (std::is_base_of_v<Ymm8Lanes, S> && kCount >= 4) {
    const __m256* flat = &acc[0][0];  // row-major: element r * RN + t, the order sums takes
#pragma GCC unroll 4
    for (int c = 0; c + 8 <= kCount; c += 8)
      _mm256_storeu_ps(sums + c, hsum8_many<8>(flat + c));
    if constexpr (kCount % 8 != 0) {
      constexpr int kLast = kCount / 8 * 8;
      _mm256_storeu_ps(sums + kLast, hsum8_many<kCount % 8>(flat + kLast));
    }
  } else {
#pragma GCC unroll 8
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < RN; ++t)
        sums[r * RN + t] = S::sum(acc[r][t]);
    }
  }
}

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
  // Stored 16 at a time, so room for a whole last register.
  float sums[(RM * RN + 15) / 16 * 16];
  tile_sums<S, RM, RN>(acc, sums);
#pragma GCC unroll 8
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < RN; ++t) {
      float sum = sums[r * RN + t];
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
