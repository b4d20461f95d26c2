// AVX2 integer dot products for the K-quants (Q2_K..Q6_K) and IQ4_XS against q8_K activation
// blocks, and for IQ4_NL against 8-bit blocks of 32. Compiled with -mavx2 -mfma -mf16c like the
// other avx2/ units and reached only through vec_ops_avx2().
//
// Each output element gets exactly the operations of its scalar definition
// (reference::dot_q8_K / dot_iq4_nl_q8_0, src/reference/quant_dot.cpp): per 256-block an exact
// int32 sum, then one or two scalar fused multiply-adds into the element's own accumulator, the
// blocks in order. So results are bit-identical to the reference, and to each other whatever the
// tiling, token count or thread count.
//
// Per 32 elements ("chunk") a weight row gives 32 codes as bytes (unsigned, or signed for the
// IQ4 codebooks), _mm256_maddubs_epi16 multiplies them with the activation bytes into 16 int16
// pair sums (lanes 0-7: the chunk's first sub-block of 16, lanes 8-15: its second), and
// _mm256_madd_epi16 with the two sub-block scales widens them to int32 while applying the scales.
// The minimums (and the code offsets of Q6_K / Q3_K) never touch the elements: they are
// sum_s min_s * bsum_s over the activation's 16-element sums.
//
// Tiles: RM weight rows x RN tokens per pass, so each unpacked chunk serves RN tokens and each
// activation chunk RM rows. One token (decode) runs 4-row tiles: four independent accumulator
// chains, and each activation load serves four rows.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "kquant_codes_avx2.hpp"
#include "kquant_scales.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// The int16 scales of chunk c: sub-block 2c in lanes 0-7, 2c + 1 in lanes 8-15 (one broadcast
// when the encoding's sub-blocks are 32 long).
template <bool kPer32>
inline __m256i chunk_scales(const Scales& s, int c) {
  if constexpr (kPer32) return _mm256_set1_epi16(s.scale[2 * c]);
  return _mm256_set_m128i(_mm_set1_epi16(s.scale[2 * c + 1]), _mm_set1_epi16(s.scale[2 * c]));
}

struct IQ4NL {
  using Block = enc::BlockIQ4_NL;
  using Act = ActQ8Block;
  static constexpr int kChunks = 1;
  static constexpr bool kSigned = true;
  static constexpr bool kHasMin = false;
  static constexpr bool kSeparateMin = false;
  static constexpr bool kScalePer32 = true;
  static void scales(const Block& b, Scales& s) {
    s.scale[0] = s.scale[1] = 1;
    s.d = half_to_float(b.d);
    s.dmin = s.d;
  }
  static __m256i codes(const Block& b, int /*c*/) { return IQ4_NLSignedCodes::codes(b); }
};

// The minimum term of one (row, token) pair: sum_s min_s * bsum_s.
inline std::int32_t min_sum(const Scales& s, const enc::BlockQ8_K& x) {
  return hsum_i32(_mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(s.min)),
                                    load256(x.bsums)));
}

// One RM x RN tile: rows w (w_stride bytes apart) against tokens x (n_blocks blocks apart),
// y[t * ldy + r].
template <typename F, int RM, int RN>
void kquant_tile(const std::byte* w, std::size_t w_stride, const typename F::Act* x,
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
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
      wb[r] = reinterpret_cast<const Block*>(w + r * w_stride) + b;
      if constexpr (RN == 1) {
        // Decode streams the row from memory: hint the bytes kGroupStreamAheadBytes ahead into
        // L2, one line per 64 bytes of block, so that the blocks' hints together cover the stream
        // (~0.5 KiB ahead into L1 made Q4_K / Q6_K decode ~10% faster on llama1b than no hint;
        // 8 KiB into L2, kquant_decode_avx2.cpp, another 5-8%). A hint reads no value, so it
        // changes no result.
        const char* ahead = reinterpret_cast<const char*>(wb[r]) + kGroupStreamAheadBytes;
#pragma GCC unroll 4
        for (std::size_t line = 0; line < sizeof(Block); line += 64)
          _mm_prefetch(ahead + line, _MM_HINT_T1);
      }
      F::scales(*wb[r], s[r]);
    }
    __m256i sumi[RM][RN];
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t)
        sumi[r][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int c = 0; c < F::kChunks; ++c) {
      __m256i q[RM];
      __m256i sc[RM];
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
        q[r] = F::codes(*wb[r], c);
        sc[r] = chunk_scales<F::kScalePer32>(s[r], c);
      }
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t) {
        const __m256i xv = load256(x[t * n_blocks + b].qs + 32 * c);
#pragma GCC unroll 4
        for (int r = 0; r < RM; ++r) {
          __m256i pairs;
          if constexpr (F::kSigned) {
            // Move the code's sign onto the activation so that maddubs sees |code| unsigned.
            pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(q[r], q[r]), _mm256_sign_epi8(xv, q[r]));
          } else {
            pairs = _mm256_maddubs_epi16(q[r], xv);
          }
          sumi[r][t] = _mm256_add_epi32(sumi[r][t], _mm256_madd_epi16(pairs, sc[r]));
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < RM; ++r) {
#pragma GCC unroll 4
      for (int t = 0; t < RN; ++t) {
        const typename F::Act& xb = x[t * n_blocks + b];
        std::int32_t msum = 0;
        if constexpr (F::kHasMin) msum = min_sum(s[r], xb);
        acc[r][t] = block_step<F>(acc[r][t], s[r], xb.d, hsum_i32(sumi[r][t]), msum);
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

// Prompt batches: 2 rows x 4 tokens (8 int32 accumulators, the codes and scales of 2 rows and one
// activation vector fill the 16 registers). One token: one row at a time. Four interleaved rows
// (one activation load per four rows) were 2.3x slower decoding llama1b Q4_K and Q6_K from memory
// (8.7 vs 19.6 tokens/s on 2 cores): four row streams per thread, each advancing slowly, starve
// the prefetcher. The kernel bench's matrices sit in the L3 cache and did not show it.
constexpr int kRows = 2;
constexpr int kTokens = 4;
constexpr int kDecodeRows = 1;

template <typename F, int RM, int RN = kTokens>
void kquant_tile_tokens(std::size_t rn, const std::byte* w, std::size_t w_stride,
                        const typename F::Act* x, std::size_t n_blocks, float* y, std::size_t ldy) {
  if constexpr (RN == 1) {
    kquant_tile<F, RM, 1>(w, w_stride, x, n_blocks, y, ldy);
  } else if (rn == RN) {
    kquant_tile<F, RM, RN>(w, w_stride, x, n_blocks, y, ldy);
  } else {
    kquant_tile_tokens<F, RM, RN - 1>(rn, w, w_stride, x, n_blocks, y, ldy);
  }
}

template <typename F, int RM = kRows>
void kquant_tile_edge(std::size_t rm, std::size_t rn, const std::byte* w, std::size_t w_stride,
                      const typename F::Act* x, std::size_t n_blocks, float* y, std::size_t ldy) {
  if constexpr (RM == 1) {
    kquant_tile_tokens<F, 1>(rn, w, w_stride, x, n_blocks, y, ldy);
  } else if (rm == RM) {
    kquant_tile_tokens<F, RM>(rn, w, w_stride, x, n_blocks, y, ldy);
  } else {
    kquant_tile_edge<F, RM - 1>(rm, rn, w, w_stride, x, n_blocks, y, ldy);
  }
}

template <typename F>
void kquant_rows_one_token(const std::byte* w, std::size_t w_stride, std::size_t m,
                           const typename F::Act* x, std::size_t n_blocks, float* y) {
  std::size_t r0 = 0;
  for (; r0 + kDecodeRows <= m; r0 += kDecodeRows)
    kquant_tile<F, kDecodeRows, 1>(w + r0 * w_stride, w_stride, x, n_blocks, y + r0, 1);
  for (; r0 < m; ++r0)
    kquant_tile<F, 1, 1>(w + r0 * w_stride, w_stride, x, n_blocks, y + r0, 1);
}

// The one-token product: the tile row by row, or the encoding's own decode kernel
// (kquant_decode_avx2.cpp). A type rather than a nullable function pointer argument, as in
// kquant_avx512.cpp.
template <typename F>
struct TileDecode {
  static void run(const std::byte* w, std::size_t w_stride, std::size_t m, const typename F::Act* x,
                  std::size_t n_blocks, float* y) {
    kquant_rows_one_token<F>(w, w_stride, m, x, n_blocks, y);
  }
};

template <KQuantDecode kDecode>
struct KernelDecode {
  static void run(const std::byte* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
                  std::size_t n_blocks, float* y) {
    kDecode(w, w_stride, m, x, n_blocks, y);
  }
};

template <typename F, typename Decode = TileDecode<F>>
void kquant_gemm(const void* w, std::size_t w_stride, std::size_t m, const typename F::Act* x,
                 std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  const auto* wb = static_cast<const std::byte*>(w);
  split_kquant_gemm<kRows, kTokens>(
      m, n, [&] { Decode::run(wb, w_stride, m, x, n_blocks, y); },
      [&](std::size_t r, std::size_t t0, std::size_t rn) {
        kquant_tile_tokens<F, 1, kSmallBatchTokens>(
            rn, wb + r * w_stride, w_stride, x + t0 * n_blocks, n_blocks, y + t0 * ldy + r, ldy);
      },
      [&](std::size_t r0, std::size_t rm, std::size_t t0, std::size_t rn) {
        kquant_tile_edge<F>(rm, rn, wb + r0 * w_stride, w_stride, x + t0 * n_blocks, n_blocks,
                            y + t0 * ldy + r0, ldy);
      });
}

template <typename F, typename Decode = TileDecode<F>>
void kquant_gemm_q8k(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
                     std::size_t n_super, std::size_t n, float* y, std::size_t ldy) {
  kquant_gemm<F, Decode>(w, w_stride, m, x, n_super, n, y, ldy);
}

}  // namespace

// q8_K activations (reference::quantize_row_q8_K): d = max|x| / 127, codes rounded half-even.
void quantize_act_q8k_avx2(const float* x, enc::BlockQ8_K* y, std::size_t n) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0F);
  for (std::size_t b = 0; b < n / enc::kQK_K; ++b) {
    const float* xb = x + enc::kQK_K * b;
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < enc::kQK_K / 8; ++k)
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_bit, _mm256_loadu_ps(xb + 8 * k)));
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float max_abs = _mm_cvtss_f32(m);
    const __m256 vid = _mm256_set1_ps(max_abs != 0.0F ? 127.0F / max_abs : 0.0F);
    y[b].d = max_abs / 127.0F;
    for (int k = 0; k < enc::kQK_K / 32; ++k) {
      __m256i q[4];
      for (int j = 0; j < 4; ++j) {
        const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(xb + 32 * k + 8 * j), vid);
        q[j] =
            _mm256_cvtps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
      // packs work per 128-bit lane; the permute restores the element order.
      const __m256i q8 = _mm256_permutevar8x32_epi32(
          _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3])),
          _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + 32 * k), q8);
      // Sums of the two sub-blocks of 16: maddubs with ones (unsigned) gives pair sums, madd the
      // quads; then add the four quads of each 128-bit half.
      const __m256i quads =
          _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q8), _mm256_set1_epi16(1));
      const __m256i pairs = _mm256_hadd_epi32(quads, quads);
      const __m256i sums = _mm256_hadd_epi32(pairs, pairs);
      y[b].bsums[2 * k] = static_cast<std::int16_t>(_mm256_extract_epi32(sums, 0));
      y[b].bsums[2 * k + 1] = static_cast<std::int16_t>(_mm256_extract_epi32(sums, 4));
    }
  }
}

KQuantGemm kquant_gemm_avx2(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return kquant_gemm_q8k<Q2K, KernelDecode<kquant_decode_q2k_avx2>>;
    case DType::kQ3_K:
      return kquant_gemm_q8k<Q3K, KernelDecode<kquant_decode_q3k_avx2>>;
    case DType::kQ4_K:
      return kquant_gemm_q8k<Q4K, KernelDecode<kquant_decode_q4k_avx2>>;
    case DType::kQ5_K:
      return kquant_gemm_q8k<Q5K, KernelDecode<kquant_decode_q5k_avx2>>;
    case DType::kQ6_K:
      return kquant_gemm_q8k<Q6K, KernelDecode<kquant_decode_q6k_avx2>>;
    case DType::kIQ4_XS:
      return kquant_gemm_q8k<IQ4XS, KernelDecode<kquant_decode_iq4xs_avx2>>;
    default:
      return nullptr;
  }
}

// IQ4_NL on the 8-bit blocks of 32 shared with Q4_0 etc. (the QuantRowDot / QuantGemm slots).
float row_dot_iq4_nl_avx2(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  float y = 0.0F;
  kquant_tile<IQ4NL, 1, 1>(static_cast<const std::byte*>(w_row), 0, x, n_blocks, &y, 1);
  return y;
}

void gemm_iq4_nl_avx2(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                      std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy,
                      float* /*scratch*/) {
  kquant_gemm<IQ4NL>(w, w_stride, m, x, n_blocks, n, y, ldy);
}

}  // namespace eredu::cpu::detail
