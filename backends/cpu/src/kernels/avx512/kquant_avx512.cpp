// AVX-512 (F/BW/VL/DQ + VNNI) integer dot products for the K-quants (Q2_K..Q6_K) and IQ4_XS
// against q8_K activation blocks. Compiled with the AVX-512 flags (backends/cpu/CMakeLists.txt)
// and reached only through vec_ops_avx512().
//
// Each output element gets exactly the operations of its scalar definition
// (reference::dot_q8_K, src/reference/quant_dot.cpp), as the AVX2 kernels do: per 256-block an
// exact int32 sum, then one or two scalar fused multiply-adds into the element's own accumulator,
// the blocks in order. So results are bit-identical to the reference and to the AVX2 table,
// whatever the tiling, token count or thread count. Only the way the exact integer sum is formed
// differs: 64 codes per instruction instead of 32.
//
// Per 64 elements (a "pair" of 32-element chunks, 2p and 2p + 1) a weight row gives 64 codes as
// bytes; _mm512_maddubs_epi16 multiplies them with the activation bytes into 32 int16 pair sums
// (lanes 8g .. 8g + 7 belong to sub-block 4p + g of 16 elements), and the VNNI _mm512_dpwssd_epi32
// multiplies those by the sub-block scales and adds them into the int32 accumulator in one step.
// The minimums (and the code offsets of Q6_K / Q3_K) never touch the elements: they are
// sum_s min_s * bsum_s over the activation's 16-element sums.
//
// Per 256-block the horizontal sums are the costly part next to the products, so they are formed
// four at a time (sum4: one reduction tree for four vectors), and the float steps of four tokens
// run side by side in one 128-bit vector, each lane performing exactly its scalar step.
//
// Tiles: one row at a time for one token, its blocks four at a time (a decode streams each row
// from memory once; interleaved rows starve the prefetcher, see kquant_avx2.cpp); 4 rows x 4 tokens
// for prompt batches (16 accumulators, the codes and scales of 4 rows and one activation vector
// fit the 32 registers).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "int_sums_avx512.hpp"
#include "kquant_codes_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// The int16 scales of pair p: lanes 8g .. 8g + 7 take the scale of sub-block 4p + g.
inline __m512i pair_scales(__m512i all_scales, int p) {
  const __m512i idx = _mm512_add_epi16(
      _mm512_set1_epi16(static_cast<short>(4 * p)),
      _mm512_set_epi64(0x0003000300030003, 0x0003000300030003, 0x0002000200020002,
                       0x0002000200020002, 0x0001000100010001, 0x0001000100010001, 0, 0));
  return _mm512_permutexvar_epi16(idx, all_scales);
}

// The minimum term's 16 products of one (row, token) pair, as 8 int32 partial sums.
inline __m256i min_products(const Scales& s, const enc::BlockQ8_K& x) {
  return _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(s.min)),
                           load256(x.bsums));
}

// The exact integer sum of one weight block against one activation block: sum over the 4 pairs of
// scale_s * (codes . activations) per sub-block, as 16 int32 partial sums.
template <typename F>
inline __m512i block_products(const typename F::Block& wb, const __m512i all_scales,
                              const enc::BlockQ8_K& xb) {
  __m512i sumi = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    const __m512i q = F::codes(wb, p);
    const __m512i xv = load512(xb.qs + 64 * p);
    __m512i pairs;
    if constexpr (F::kSigned) {
      pairs = _mm512_maddubs_epi16(
          _mm512_abs_epi8(q),
          _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(q), _mm512_setzero_si512(), xv));
    } else {
      pairs = _mm512_maddubs_epi16(q, xv);
    }
    sumi = _mm512_dpwssd_epi32(sumi, pairs, pair_scales(all_scales, p));
  }
  return sumi;
}

inline __m512i scales_vector(const Scales& s) {
  return _mm512_zextsi256_si512(_mm256_load_si256(reinterpret_cast<const __m256i*>(s.scale)));
}

// One weight row against one token (decode). Blocks go four at a time so that their horizontal
// sums share one reduction tree; the float steps still run block by block in order.
template <typename F>
float kquant_row_decode(const typename F::Block* w, const enc::BlockQ8_K* x, std::size_t n_blocks) {
  float acc = 0.0F;
  std::size_t b = 0;
  for (; b + 4 <= n_blocks; b += 4) {
    Scales s[4];
    __m512i sumi[4];
    __m256i mins[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      // A decode streams the row from memory: hint it ahead (reads no value).
      const char* ahead = reinterpret_cast<const char*>(w + b + g) + kGroupStreamAheadBytes;
#pragma GCC unroll 4
      for (std::size_t line = 0; line < sizeof(typename F::Block); line += 64)
        _mm_prefetch(ahead + line, _MM_HINT_T1);
      F::scales(w[b + g], s[g]);
      sumi[g] = block_products<F>(w[b + g], scales_vector(s[g]), x[b + g]);
      if constexpr (F::kHasMin) mins[g] = min_products(s[g], x[b + g]);
    }
    // The products and conversions of the four steps side by side (each lane exactly its scalar
    // counterpart), then the fused multiply-adds in block order.
    const __m128i isum = sum4(sumi[0], sumi[1], sumi[2], sumi[3]);
    const __m128 xd = _mm_setr_ps(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d);
    alignas(16) float dd[4];
    alignas(16) float fi[4];
    _mm_store_ps(dd, _mm_mul_ps(_mm_setr_ps(s[0].d, s[1].d, s[2].d, s[3].d), xd));
    if constexpr (!F::kHasMin) {
      _mm_store_ps(fi, _mm_cvtepi32_ps(isum));
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g)
        acc = __builtin_fmaf(dd[g], fi[g], acc);
    } else {
      const __m128i msum = sum4(mins[0], mins[1], mins[2], mins[3]);
      if constexpr (F::kSeparateMin) {
        alignas(16) float dm[4];
        alignas(16) float fm[4];
        _mm_store_ps(fi, _mm_cvtepi32_ps(isum));
        _mm_store_ps(fm, _mm_cvtepi32_ps(msum));
        _mm_store_ps(
            dm, _mm_xor_ps(_mm_mul_ps(_mm_setr_ps(s[0].dmin, s[1].dmin, s[2].dmin, s[3].dmin), xd),
                           _mm_set1_ps(-0.0F)));
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          acc = __builtin_fmaf(dd[g], fi[g], acc);
          acc = __builtin_fmaf(dm[g], fm[g], acc);
        }
      } else {
        _mm_store_ps(fi, _mm_cvtepi32_ps(_mm_sub_epi32(isum, msum)));
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g)
          acc = __builtin_fmaf(dd[g], fi[g], acc);
      }
    }
  }
  for (; b < n_blocks; ++b) {
    Scales s;
    F::scales(w[b], s);
    const std::int32_t isum = sum1(block_products<F>(w[b], scales_vector(s), x[b]));
    std::int32_t msum = 0;
    if constexpr (F::kHasMin) msum = sum1(min_products(s, x[b]));
    acc = block_step<F>(acc, s, x[b].d, isum, msum);
  }
  return acc;
}

// One RM x RN tile: rows w (w_stride bytes apart) against tokens x (n_blocks blocks apart),
// y[t * ldy + r].
template <typename F, int RM, int RN>
void kquant_tile(const std::byte* w, std::size_t w_stride, const enc::BlockQ8_K* x,
                 std::size_t n_blocks, float* y, std::size_t ldy) {
  using Block = typename F::Block;
  float acc[RM][RN];
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t)
      acc[r][t] = 0.0F;
  }
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const Block* wb[RM];
    Scales s[RM];
    __m512i all_scales[RM];
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
      wb[r] = reinterpret_cast<const Block*>(w + r * w_stride) + b;
      F::scales(*wb[r], s[r]);
      all_scales[r] = scales_vector(s[r]);
    }
    __m512i sumi[RM][RN];
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t)
        sumi[r][t] = _mm512_setzero_si512();
    }
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      __m512i q[RM];
      __m512i sc[RM];
      [[maybe_unused]] __m512i q_abs[RM];
      [[maybe_unused]] __mmask64 q_neg[RM];
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
        q[r] = F::codes(*wb[r], p);
        sc[r] = pair_scales(all_scales[r], p);
        if constexpr (F::kSigned) {
          q_abs[r] = _mm512_abs_epi8(q[r]);
          q_neg[r] = _mm512_movepi8_mask(q[r]);
        }
      }
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t) {
        const __m512i xv = load512(x[t * n_blocks + b].qs + 64 * p);
#pragma GCC unroll 4
        for (int r = 0; r < RM; ++r) {
          __m512i pairs;
          if constexpr (F::kSigned) {
            // |code| unsigned times the activation with the code's sign moved onto it.
            pairs = _mm512_maddubs_epi16(
                q_abs[r], _mm512_mask_sub_epi8(xv, q_neg[r], _mm512_setzero_si512(), xv));
          } else {
            pairs = _mm512_maddubs_epi16(q[r], xv);
          }
          sumi[r][t] = _mm512_dpwssd_epi32(sumi[r][t], pairs, sc[r]);
        }
      }
    }
    if constexpr (RN == 4) {
      // The four tokens' float steps side by side: lane t performs exactly the scalar step of
      // token t (the same products, conversions and fused multiply-adds), so the results are the
      // scalar definition's bit for bit.
      const __m128 xd =
          _mm_setr_ps(x[b].d, x[n_blocks + b].d, x[2 * n_blocks + b].d, x[3 * n_blocks + b].d);
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
        const __m128i isum = sum4(sumi[r][0], sumi[r][1], sumi[r][2], sumi[r][3]);
        __m128i msum = _mm_setzero_si128();
        if constexpr (F::kHasMin) {
          msum = sum4(min_products(s[r], x[b]), min_products(s[r], x[n_blocks + b]),
                      min_products(s[r], x[2 * n_blocks + b]),
                      min_products(s[r], x[3 * n_blocks + b]));
        }
        __m128 a = _mm_loadu_ps(acc[r]);
        const __m128 dd = _mm_mul_ps(_mm_set1_ps(s[r].d), xd);
        if constexpr (!F::kHasMin) {
          a = _mm_fmadd_ps(dd, _mm_cvtepi32_ps(isum), a);
        } else if constexpr (F::kSeparateMin) {
          a = _mm_fmadd_ps(dd, _mm_cvtepi32_ps(isum), a);
          const __m128 dm = _mm_xor_ps(_mm_mul_ps(_mm_set1_ps(s[r].dmin), xd), _mm_set1_ps(-0.0F));
          a = _mm_fmadd_ps(dm, _mm_cvtepi32_ps(msum), a);
        } else {
          a = _mm_fmadd_ps(dd, _mm_cvtepi32_ps(_mm_sub_epi32(isum, msum)), a);
        }
        _mm_storeu_ps(acc[r], a);
      }
    } else {
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
        for (int t = 0; t < RN; ++t) {
          const enc::BlockQ8_K& xb = x[t * n_blocks + b];
          std::int32_t msum = 0;
          if constexpr (F::kHasMin) msum = sum1(min_products(s[r], xb));
          acc[r][t] = block_step<F>(acc[r][t], s[r], xb.d, sum1(sumi[r][t]), msum);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
    for (int t = 0; t < RN; ++t)
      y[t * ldy + r] = acc[r][t];
  }
}

constexpr int kRows = 4;
constexpr int kTokens = 4;

// kquant_tile<F, RM, rn> for a run-time rn <= RN.
template <typename F, int RM, int RN>
void kquant_tile_tokens(std::size_t rn, const std::byte* w, std::size_t w_stride,
                        const enc::BlockQ8_K* x, std::size_t n_blocks, float* y, std::size_t ldy) {
  if constexpr (RN == 1) {
    kquant_tile<F, RM, 1>(w, w_stride, x, n_blocks, y, ldy);
  } else if (rn == RN) {
    kquant_tile<F, RM, RN>(w, w_stride, x, n_blocks, y, ldy);
  } else {
    kquant_tile_tokens<F, RM, RN - 1>(rn, w, w_stride, x, n_blocks, y, ldy);
  }
}

// kquant_tile<F, rm, rn> for run-time rm <= RM, rn <= kTokens.
template <typename F, int RM = kRows>
void kquant_tile_edge(std::size_t rm, std::size_t rn, const std::byte* w, std::size_t w_stride,
                      const enc::BlockQ8_K* x, std::size_t n_blocks, float* y, std::size_t ldy) {
  if constexpr (RM == 1) {
    kquant_tile_tokens<F, 1, kTokens>(rn, w, w_stride, x, n_blocks, y, ldy);
  } else if (rm == RM) {
    kquant_tile_tokens<F, RM, kTokens>(rn, w, w_stride, x, n_blocks, y, ldy);
  } else {
    kquant_tile_edge<F, RM - 1>(rm, rn, w, w_stride, x, n_blocks, y, ldy);
  }
}

// The one-token product, one policy per encoding: the row kernel above, or the encoding's own
// decode kernel (kquant_decode_avx512.cpp). A type rather than a nullable function pointer
// argument: `kDecode != nullptr` is not a constant expression under -fsanitize=undefined.
template <typename F>
struct RowDecode {
  static void run(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
                  std::size_t n_blocks, float* y) {
    const auto* wb = static_cast<const std::byte*>(w);
    for (std::size_t r = 0; r < m; ++r)
      y[r] = kquant_row_decode<F>(reinterpret_cast<const typename F::Block*>(wb + r * w_stride), x,
                                  n_blocks);
  }
};

template <KQuantDecode kDecode>
struct KernelDecode {
  static void run(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
                  std::size_t n_blocks, float* y) {
    kDecode(w, w_stride, m, x, n_blocks, y);
  }
};

template <typename F, typename Decode = RowDecode<F>>
void kquant_gemm(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
                 std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  const auto* wb = static_cast<const std::byte*>(w);
  split_kquant_gemm<kRows, kTokens>(
      m, n, [&] { Decode::run(w, w_stride, m, x, n_blocks, y); },
      [&](std::size_t r, std::size_t t0, std::size_t rn) {
        kquant_tile_tokens<F, 1, kSmallBatchTokens>(
            rn, wb + r * w_stride, w_stride, x + t0 * n_blocks, n_blocks, y + t0 * ldy + r, ldy);
      },
      [&](std::size_t r0, std::size_t rm, std::size_t t0, std::size_t rn) {
        kquant_tile_edge<F>(rm, rn, wb + r0 * w_stride, w_stride, x + t0 * n_blocks, n_blocks,
                            y + t0 * ldy + r0, ldy);
      });
}

}  // namespace

KQuantGemm kquant_gemm_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return kquant_gemm<Q2K, KernelDecode<kquant_decode_q2k_avx512>>;
    case DType::kQ3_K:
      return kquant_gemm<Q3K, KernelDecode<kquant_decode_q3k_avx512>>;
    case DType::kQ4_K:
      return kquant_gemm<Q4K, KernelDecode<kquant_decode_q4k_avx512>>;
    case DType::kQ5_K:
      return kquant_gemm<Q5K, KernelDecode<kquant_decode_q5k_avx512>>;
    case DType::kQ6_K:
      return kquant_gemm<Q6K, KernelDecode<kquant_decode_q6k_avx512>>;
    case DType::kIQ4_XS:
      return kquant_gemm<IQ4XS, KernelDecode<kquant_decode_iq4xs_avx512>>;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
