// AVX2 register-blocked matrix-matrix kernels for prompt batches (several tokens per matmul).
// Compiled with -mavx2 -mfma -mf16c like vec_avx2.cpp, and bound to the kernels only through
// vec_ops_avx2().
//
// A micro-kernel holds an RM x RN tile of accumulators (weight rows x tokens) in registers, so
// every weight block it decodes is used RN times and every activation block RM times, instead of
// once per single-row dot product. The integer kernels perform, for each output element, exactly
// the operations of the matching row_dot_* in vec_avx2.cpp in the same order (block integer dot,
// conversion to float, multiply-add with the product of the two block scales into the block's
// chain, the chains' sum, horizontal sum, then the affine minimum term): results are bit-identical
// to the one-row path whatever the tiling.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "../vec_ops.hpp"
#include "block_codes_avx2.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Integer tiles: 2 rows x 4 tokens: 8 accumulators plus the block operands fit the 16 ymm registers
// (4 x 3 spills accumulators; llvm-mca puts 2 x 4 slightly ahead of 3 x 3 and 2 x 3), and the
// 4 tokens fill the 4-lane scale vector.
constexpr int kQuantRows = 2;
constexpr int kQuantTokens = 4;
// Float tiles: 3 rows x 4 tokens = 12 accumulators, 3 weight vectors and one activation vector.
constexpr int kFloatRows = static_cast<int>(kFloatGemmRowsAvx2);
constexpr int kFloatTokens = 4;

// Per weight encoding: the block type, its 32 codes as bytes, whether they are signed (then the dot
// moves their sign onto the activation) or unsigned with an affine minimum, and how many chains of
// multiply-adds its row dot keeps (block b in chain b % kChains; vec_avx2.cpp).
struct Q8_0 : Q8_0SignedCodes {
  static constexpr bool kSigned = true;
  static constexpr std::size_t kChains = 2;
};
struct Q4_0 : Q4_0SignedCodes {
  static constexpr bool kSigned = true;
  static constexpr std::size_t kChains = 2;
};
struct Q4_1 : Q4_1Codes {
  static constexpr bool kSigned = false;
  static constexpr std::size_t kChains = 1;
};
struct Q5_0 : Q5_0SignedCodes {
  static constexpr bool kSigned = true;
  static constexpr std::size_t kChains = 1;
};
struct Q5_1 : Q5_1Codes {
  static constexpr bool kSigned = false;
  static constexpr std::size_t kChains = 1;
};

// Block scales laid out for the tiles: per weight row, its blocks' scales (and minimums) as
// floats; per token tile, for each block the tile's activation scales (and block sums) side by
// side, so that one 4-lane multiply forms a row's scale products with the whole token tile.
struct TileScales {
  const float* wd;  // [rows][n_blocks]
  const float* wm;  // [rows][n_blocks], affine encodings only
  const float* xd;  // [n_blocks][4]
  const float* xs;  // [n_blocks][4], affine encodings only
};

// One RM x RN tile: rows w (w_stride bytes apart) against tokens x (n_blocks blocks apart). Per
// element this is row_dot_*'s sequence: acc += (wd * xd) * float(block dot); hsum(acc) + mins,
// with mins += wm * xs per block (4-lane vectors here, lane by lane the same operations).
template <typename F, int RM, int RN>
void quant_tile(const std::byte* w, std::size_t w_stride, const ActQ8Block* x, std::size_t n_blocks,
                const TileScales& sc, float* y, std::size_t ldy) {
  static_assert(RN <= 4);
  using Block = typename F::Block;
  __m256 acc[RM][RN];
  __m256 done[RM][RN];  // the sum of the chains already run
  __m128 mins[RM];
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
    mins[r] = _mm_setzero_ps();
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t)
      done[r][t] = _mm256_setzero_ps();
  }
  // One chain after the other: the blocks b = chain, chain + kChains, ... in order.
  for (std::size_t chain = 0; chain < F::kChains; ++chain) {
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t)
        acc[r][t] = _mm256_setzero_ps();
    }
    for (std::size_t b = chain; b < n_blocks; b += F::kChains) {
      const __m128 xd = _mm_loadu_ps(sc.xd + 4 * b);
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
        const Block& wb = reinterpret_cast<const Block*>(w + r * w_stride)[b];
        const __m256i q = F::codes(wb);
        // The scale products wd * xd of this row with the token tile, one multiply per lane.
        alignas(16) float scale[4];
        _mm_store_ps(scale, _mm_mul_ps(_mm_broadcast_ss(sc.wd + r * n_blocks + b), xd));
        if constexpr (F::kSigned) {
          const __m256i q_abs = _mm256_sign_epi8(q, q);
#pragma GCC unroll 4
          for (int t = 0; t < RN; ++t) {
            const __m256 dot = dot_u8_i8(q_abs, _mm256_sign_epi8(load_act(x[t * n_blocks + b]), q));
            acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(scale + t), dot, acc[r][t]);
          }
        } else {
#pragma GCC unroll 4
          for (int t = 0; t < RN; ++t) {
            const __m256 dot = dot_u8_i8(q, load_act(x[t * n_blocks + b]));
            acc[r][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(scale + t), dot, acc[r][t]);
          }
          const __m128 m =
              _mm_mul_ps(_mm_broadcast_ss(sc.wm + r * n_blocks + b), _mm_loadu_ps(sc.xs + 4 * b));
          mins[r] = _mm_add_ps(mins[r], m);
        }
      }
    }
    // The chains' sum, in the row dot's order: chain 0, then + chain 1.
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t)
        done[r][t] = chain == 0 ? acc[r][t] : _mm256_add_ps(done[r][t], acc[r][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
    alignas(16) float m[4];
    _mm_store_ps(m, mins[r]);
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t) {
      if constexpr (F::kSigned) {
        y[t * ldy + r] = hsum(done[r][t]);
      } else {
        y[t * ldy + r] = hsum(done[r][t]) + m[t];
      }
    }
  }
}

// Picks the tile for the rows and tokens left at an edge (both at most the full tile).
template <typename F, int RM, int RN = kQuantTokens>
void quant_tile_tokens(std::size_t rn, const std::byte* w, std::size_t w_stride,
                       const ActQ8Block* x, std::size_t n_blocks, const TileScales& sc, float* y,
                       std::size_t ldy) {
  if constexpr (RN == 1) {
    quant_tile<F, RM, 1>(w, w_stride, x, n_blocks, sc, y, ldy);
  } else if (rn == RN) {
    quant_tile<F, RM, RN>(w, w_stride, x, n_blocks, sc, y, ldy);
  } else {
    quant_tile_tokens<F, RM, RN - 1>(rn, w, w_stride, x, n_blocks, sc, y, ldy);
  }
}

template <typename F, int RM = kQuantRows>
void quant_tile_edge(std::size_t rm, std::size_t rn, const std::byte* w, std::size_t w_stride,
                     const ActQ8Block* x, std::size_t n_blocks, const TileScales& sc, float* y,
                     std::size_t ldy) {
  if constexpr (RM == 1) {
    quant_tile_tokens<F, 1>(rn, w, w_stride, x, n_blocks, sc, y, ldy);
  } else if (rm == RM) {
    quant_tile_tokens<F, RM>(rn, w, w_stride, x, n_blocks, sc, y, ldy);
  } else {
    quant_tile_edge<F, RM - 1>(rm, rn, w, w_stride, x, n_blocks, sc, y, ldy);
  }
}

template <typename F>
void quant_gemm(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy, float* scratch) {
  using Block = typename F::Block;
  const auto* wb = static_cast<const std::byte*>(w);
  float* wd = scratch;
  float* wm = wd + m * n_blocks;
  float* xd = wm + m * n_blocks;
  float* xs = xd + 4 * n_blocks;
  for (std::size_t r = 0; r < m; ++r) {
    const Block* row = reinterpret_cast<const Block*>(wb + r * w_stride);
    for (std::size_t b = 0; b < n_blocks; ++b) {
      wd[r * n_blocks + b] = half_to_float(row[b].d);
      if constexpr (!F::kSigned) wm[r * n_blocks + b] = half_to_float(row[b].m);
    }
  }
  // Tokens outer, rows inner: the rows of this call stay in cache while token tiles stream past.
  for (std::size_t t0 = 0; t0 < n; t0 += kQuantTokens) {
    const std::size_t rn = n - t0 < kQuantTokens ? n - t0 : kQuantTokens;
    const ActQ8Block* xt = x + t0 * n_blocks;
    for (std::size_t b = 0; b < n_blocks; ++b) {
      for (std::size_t t = 0; t < 4; ++t) {
        xd[4 * b + t] = t < rn ? xt[t * n_blocks + b].d : 0.0F;
        xs[4 * b + t] = t < rn ? xt[t * n_blocks + b].s : 0.0F;
      }
    }
    float* yt = y + t0 * ldy;
    for (std::size_t r0 = 0; r0 < m; r0 += kQuantRows) {
      const std::size_t rm = m - r0 < kQuantRows ? m - r0 : kQuantRows;
      const TileScales tile{wd + r0 * n_blocks, wm + r0 * n_blocks, xd, xs};
      quant_tile_edge<F>(rm, rn, wb + r0 * w_stride, w_stride, xt, n_blocks, tile, yt + r0, ldy);
    }
  }
}

// How a float tile's operands load: 8 floats at a time, and one by one for the tail. F16 rows are
// widened exactly as they are loaded, so a tile gives the same values on them as on the rows
// widened into a buffer first.
struct F32Elements {
  using T = float;
  static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
  static float load1(const float* p) { return *p; }
};
struct F16Elements {
  using T = std::uint16_t;
  static __m256 load8(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float load1(const std::uint16_t* p) { return half_to_float(*p); }
};

template <typename E, int RM, int RN>
void float_tile(const typename E::T* w, std::size_t ldw, const typename E::T* x, std::size_t ldx,
                std::size_t k, float* y, std::size_t ldy) {
  __m256 acc[RM][RN];
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t)
      acc[r][t] = _mm256_setzero_ps();
  }
  std::size_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m256 wv[RM];
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r)
      wv[r] = E::load8(w + r * ldw + i);
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t) {
      const __m256 xv = E::load8(x + t * ldx + i);
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r)
        acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t) {
      float sum = hsum(acc[r][t]);
      for (std::size_t j = i; j < k; ++j)
        sum = __builtin_fmaf(E::load1(w + r * ldw + j), E::load1(x + t * ldx + j), sum);
      y[t * ldy + r] = sum;
    }
  }
}

template <typename E, int RM>
void float_tile_rows(std::size_t rn, const typename E::T* w, std::size_t ldw,
                     const typename E::T* x, std::size_t ldx, std::size_t k, float* y,
                     std::size_t ldy) {
  static_assert(kFloatTokens == 4);
  switch (rn) {
    case 4:
      return float_tile<E, RM, 4>(w, ldw, x, ldx, k, y, ldy);
    case 3:
      return float_tile<E, RM, 3>(w, ldw, x, ldx, k, y, ldy);
    case 2:
      return float_tile<E, RM, 2>(w, ldw, x, ldx, k, y, ldy);
    default:
      return float_tile<E, RM, 1>(w, ldw, x, ldx, k, y, ldy);
  }
}

template <typename E>
void float_gemm(const typename E::T* w, std::size_t ldw, std::size_t m, const typename E::T* x,
                std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  static_assert(kFloatRows == 3);
  for (std::size_t t0 = 0; t0 < n; t0 += kFloatTokens) {
    const std::size_t rn = n - t0 < kFloatTokens ? n - t0 : kFloatTokens;
    const auto* xt = x + t0 * ldx;
    float* yt = y + t0 * ldy;
    std::size_t r0 = 0;
    for (; r0 + kFloatRows <= m; r0 += kFloatRows)
      float_tile_rows<E, 3>(rn, w + r0 * ldw, ldw, xt, ldx, k, yt + r0, ldy);
    switch (m - r0) {
      case 2:
        float_tile_rows<E, 2>(rn, w + r0 * ldw, ldw, xt, ldx, k, yt + r0, ldy);
        break;
      case 1:
        float_tile_rows<E, 1>(rn, w + r0 * ldw, ldw, xt, ldx, k, yt + r0, ldy);
        break;
      default:
        break;
    }
  }
}

}  // namespace

void float_gemm_avx2(const float* w, std::size_t ldw, std::size_t m, const float* x,
                     std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  float_gemm<F32Elements>(w, ldw, m, x, ldx, n, k, y, ldy);
}

void f16_gemm_avx2(const std::uint16_t* w, std::size_t ldw, std::size_t m, const std::uint16_t* x,
                   std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  float_gemm<F16Elements>(w, ldw, m, x, ldx, n, k, y, ldy);
}

QuantGemm quant_gemm_avx2(DType dtype) {
  switch (dtype) {
    case DType::kQ8_0:
      return quant_gemm<Q8_0>;
    case DType::kQ4_0:
      return quant_gemm<Q4_0>;
    case DType::kQ4_1:
      return quant_gemm<Q4_1>;
    case DType::kQ5_0:
      return quant_gemm<Q5_0>;
    case DType::kQ5_1:
      return quant_gemm<Q5_1>;
    case DType::kIQ4_NL:
      return gemm_iq4_nl_avx2;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
