// AVX-512 VNNI integer dot products for Q4_0 and Q8_0 weights against 8-bit activation blocks of
// 32, for one token (row dots) and for prompt batches (tiles). Compiled with the AVX-512 flags
// (backends/cpu/CMakeLists.txt) and reached only through vec_ops_avx512().
//
// Every output element is bit-identical to the AVX2 table's (vec_avx2.cpp row_dot_q4_0 /
// row_dot_q8_0 and their tiles in gemm_avx2.cpp). Those compute, per block, eight exact int32 sums
// (lane l: elements 4l .. 4l + 3), convert them to float and fuse-multiply-add them, scaled by
// the product of the two block scales, into eight float lanes of the block's chain (block b in
// chain b % 2); then the chains' sum and one fixed horizontal sum. Here the same eight integers
// come from one VNNI instruction, for two blocks (or two tokens) at once, and the same float steps
// run on each 256-bit half:
//   - the codes are made unsigned by an offset (Q4_0: the nibble itself, value + 8; Q8_0: value
//     + 128, the sign bit flipped), so that vpdpbusd (unsigned x signed bytes, four products per
//     int32 lane) applies; the offset's share, offset * (sum of the four activations), comes from
//     a second vpdpbusd of the activations with the offset and is subtracted (in the tiles it is
//     the start value of the products, shared by the rows). All of it is exact.
//   - a row dot takes its blocks in pairs: one 512-bit integer pass, then one 512-bit multiply-add,
//     chain 0 (the even block) in the low half and chain 1 in the high half. Against one chain
//     with a float step per block this is a third fewer instructions per weight, and the decode
//     of llama1b Q4_0 on one Zen 5 core went from ~26 to ~31-40 tokens/s.
//   - a tile keeps two tokens per 512-bit accumulator (one per half), the weight block's codes in
//     both halves, so each fused multiply-add performs two tokens' AVX2 step at once; it runs the
//     even blocks' chain, then the odd blocks'.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline __m128i load128(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
inline __m512 join(__m256 lo, __m256 hi) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

// Per encoding: the codes of one block as 32 unsigned bytes (value + kOffset) in a 256-bit vector,
// in both halves of a 512-bit one, and two consecutive blocks side by side.
struct Q4_0 {
  using Block = enc::BlockQ4_0;
  static constexpr int kOffset = 8;
  // 16 packed bytes [A] -> 128-bit lanes [A & 15, A >> 4] per block.
  static __m256i codes(const Block& b) {
    const __m128i a = load128(b.qs);
    return _mm256_and_si256(
        _mm256_inserti128_si256(_mm256_castsi128_si256(a), _mm_srli_epi16(a, 4), 1),
        _mm256_set1_epi8(0x0F));
  }
  static __m512i codes_twice(const Block& b) {
    const __m512i aaaa = _mm512_broadcast_i32x4(load128(b.qs));
    return _mm512_and_si512(_mm512_srlv_epi64(aaaa, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)),
                            _mm512_set1_epi8(0x0F));
  }
  static __m512i codes_pair(const Block& b0, const Block& b1) {
    const __m512i ab = _mm512_castsi256_si512(
        _mm256_inserti128_si256(_mm256_castsi128_si256(load128(b0.qs)), load128(b1.qs), 1));
    const __m512i aabb = _mm512_shuffle_i64x2(ab, ab, _MM_SHUFFLE(1, 1, 0, 0));
    return _mm512_and_si512(_mm512_srlv_epi64(aabb, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)),
                            _mm512_set1_epi8(0x0F));
  }
};

struct Q8_0 {
  using Block = enc::BlockQ8_0;
  static constexpr int kOffset = 128;
  static __m256i codes(const Block& b) {
    return _mm256_xor_si256(load256(b.qs), _mm256_set1_epi8(static_cast<char>(0x80)));
  }
  static __m512i codes_twice(const Block& b) {
    return _mm512_xor_si512(_mm512_broadcast_i64x4(load256(b.qs)),
                            _mm512_set1_epi8(static_cast<char>(0x80)));
  }
  static __m512i codes_pair(const Block& b0, const Block& b1) {
    return _mm512_xor_si512(join(load256(b0.qs), load256(b1.qs)),
                            _mm512_set1_epi8(static_cast<char>(0x80)));
  }
};

// Exact block dots as floats, lane l = sum of elements 4l .. 4l + 3 of code * activation.
template <typename F>
inline __m256 block_dot(__m256i codes, __m256i x) {
  const __m256i raw = _mm256_dpbusd_epi32(_mm256_setzero_si256(), codes, x);
  const __m256i offset = _mm256_dpbusd_epi32(_mm256_setzero_si256(),
                                             _mm256_set1_epi8(static_cast<char>(F::kOffset)), x);
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(raw, offset));
}
template <typename F>
inline __m512 block_dot(__m512i codes, __m512i x) {
  const __m512i raw = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, x);
  const __m512i offset = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                             _mm512_set1_epi8(static_cast<char>(F::kOffset)), x);
  return _mm512_cvtepi32_ps(_mm512_sub_epi32(raw, offset));
}

template <typename F>
float row_dot(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  const auto* w = static_cast<const typename F::Block*>(w_row);
  // Chain 0 (even blocks) in the low half, chain 1 (odd blocks) in the high half.
  __m512 acc = _mm512_setzero_ps();
  const __m512i halves = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  std::size_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    // A stream hint (reads no value).
    _mm_prefetch(reinterpret_cast<const char*>(w + b) + kAvx512DecodeAheadBytes, _MM_HINT_T0);
    const __m512 dots =
        block_dot<F>(F::codes_pair(w[b], w[b + 1]), join(load256(x[b].qs), load256(x[b + 1].qs)));
    // The two blocks' scale products (one multiply per lane, as the AVX2 steps), each broadcast
    // to its half.
    const __m128i wd = _mm_insert_epi16(_mm_cvtsi32_si128(w[b].d), w[b + 1].d, 1);
    const __m128 scales =
        _mm_mul_ps(_mm_cvtph_ps(wd), _mm_unpacklo_ps(_mm_set_ss(x[b].d), _mm_set_ss(x[b + 1].d)));
    acc = _mm512_fmadd_ps(_mm512_permutexvar_ps(halves, _mm512_castps128_ps512(scales)), dots, acc);
  }
  if (b < n_blocks) {  // an even block: chain 0
    const __m256 dot = block_dot<F>(F::codes(w[b]), load256(x[b].qs));
    const __m512 scale = _mm512_set1_ps(half_to_float(w[b].d) * x[b].d);
    acc = _mm512_mask3_fmadd_ps(scale, _mm512_zextps256_ps512(dot), acc, 0x00FF);
  }
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1)));
}

// Tiles: RM rows x 2 * TP tokens, tokens in pairs (token 2p in the low half of accumulator p, 2p +
// 1 in the high half). 4 x 8: 16 accumulators, 4 rows' codes and the pairs' activations fit the 32
// registers, and each unpacked weight block serves 8 tokens.
constexpr int kRows = 4;
constexpr int kPairs = 4;

// rn valid tokens (1 .. 2 * TP); a missing second token of a pair repeats the first (its lanes
// are computed and dropped), so every load stays inside the activations.
template <typename F, int RM, int TP>
void quant_tile(const std::byte* w, std::size_t w_stride, const ActQ8Block* x, std::size_t n_blocks,
                std::size_t rn, float* y, std::size_t ldy) {
  using Block = typename F::Block;
  __m512 acc[RM][TP];
  __m512 chain0[RM][TP];
  const ActQ8Block* xt[2 * TP];
#pragma GCC unroll 8
  for (int t = 0; t < 2 * TP; ++t)
    xt[t] = x + (static_cast<std::size_t>(t) < rn ? t : rn - 1) * n_blocks;
  // The row dot's two chains one after the other: the even blocks, then the odd ones.
  for (std::size_t chain = 0; chain < 2; ++chain) {
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < TP; ++p)
        acc[r][p] = _mm512_setzero_ps();
    }
    for (std::size_t b = chain; b < n_blocks; b += 2) {
      __m512i q[RM];
      float wd[RM];
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
        const Block& wb = reinterpret_cast<const Block*>(w + r * w_stride)[b];
        q[r] = F::codes_twice(wb);
        wd[r] = half_to_float(wb.d);
      }
#pragma GCC unroll 4
      for (int p = 0; p < TP; ++p) {
        const ActQ8Block& x0 = xt[2 * p][b];
        const ActQ8Block& x1 = xt[2 * p + 1][b];
        const __m512i xv = join(load256(x0.qs), load256(x1.qs));
        // Minus the offset's share, as the start value of every row's product: one vpdpbusd per
        // element then gives the exact block dot.
        const __m512i minus_offset = _mm512_sub_epi32(
            _mm512_setzero_si512(),
            _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                _mm512_set1_epi8(static_cast<char>(F::kOffset)), xv));
        const __m512 xd = join(_mm256_set1_ps(x0.d), _mm256_set1_ps(x1.d));
#pragma GCC unroll 4
        for (int r = 0; r < RM; ++r) {
          const __m512 dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(minus_offset, q[r], xv));
          // wd * xd lane by lane: the AVX2 scale products.
          acc[r][p] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(wd[r]), xd), dot, acc[r][p]);
        }
      }
    }
    if (chain == 0) {
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
        for (int p = 0; p < TP; ++p)
          chain0[r][p] = acc[r][p];
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < TP; ++p) {
      const __m512 sum = _mm512_add_ps(chain0[r][p], acc[r][p]);  // chain 0 + chain 1
      const std::size_t t = 2 * static_cast<std::size_t>(p);
      if (t < rn) y[t * ldy + r] = hsum(_mm512_castps512_ps256(sum));
      if (t + 1 < rn) y[(t + 1) * ldy + r] = hsum(_mm512_extractf32x8_ps(sum, 1));
    }
  }
}

// quant_tile<F, rm, TP> for run-time rm <= RM.
template <typename F, int TP, int RM = kRows>
void quant_tile_rows(std::size_t rm, const std::byte* w, std::size_t w_stride, const ActQ8Block* x,
                     std::size_t n_blocks, std::size_t rn, float* y, std::size_t ldy) {
  if constexpr (RM == 1) {
    quant_tile<F, 1, TP>(w, w_stride, x, n_blocks, rn, y, ldy);
  } else if (rm == RM) {
    quant_tile<F, RM, TP>(w, w_stride, x, n_blocks, rn, y, ldy);
  } else {
    quant_tile_rows<F, TP, RM - 1>(rm, w, w_stride, x, n_blocks, rn, y, ldy);
  }
}

// quant_tile for run-time rm and rn: as few token pairs as the tokens need.
template <typename F, int TP = kPairs>
void quant_tile_edge(std::size_t rm, std::size_t rn, const std::byte* w, std::size_t w_stride,
                     const ActQ8Block* x, std::size_t n_blocks, float* y, std::size_t ldy) {
  if constexpr (TP == 1) {
    quant_tile_rows<F, 1>(rm, w, w_stride, x, n_blocks, rn, y, ldy);
  } else if ((rn + 1) / 2 == TP) {
    quant_tile_rows<F, TP>(rm, w, w_stride, x, n_blocks, rn, y, ldy);
  } else {
    quant_tile_edge<F, TP - 1>(rm, rn, w, w_stride, x, n_blocks, y, ldy);
  }
}

template <typename F>
void quant_gemm(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy,
                float* /*scratch*/) {
  const auto* wb = static_cast<const std::byte*>(w);
  constexpr std::size_t kTokens = 2 * kPairs;
  // Tokens outer, rows inner: the rows of this call stay in cache while token tiles stream past.
  for (std::size_t t0 = 0; t0 < n; t0 += kTokens) {
    const std::size_t rn = n - t0 < kTokens ? n - t0 : kTokens;
    for (std::size_t r0 = 0; r0 < m; r0 += kRows) {
      const std::size_t rm = m - r0 < kRows ? m - r0 : kRows;
      quant_tile_edge<F>(rm, rn, wb + r0 * w_stride, w_stride, x + t0 * n_blocks, n_blocks,
                         y + t0 * ldy + r0, ldy);
    }
  }
}

}  // namespace

QuantRowDot quant_row_dot_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return row_dot<Q4_0>;
    case DType::kQ8_0:
      return row_dot<Q8_0>;
    default:
      return nullptr;
  }
}

QuantGemm quant_gemm_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return quant_gemm<Q4_0>;
    case DType::kQ8_0:
      return quant_gemm<Q8_0>;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
