#pragma once
// Internal, ISA translation units only (avx2/*.cpp, avx512/*.cpp; both are built with AVX2): what
// the AVX2 and the AVX-512 K-quant kernels share (they differ only in how they unpack codes and
// form the integer products): how each K-quant and IQ4_XS block's scales and minimums unpack, the
// definition's per-block float step, and how a call's rows and tokens are split into tiles.
// Everything has internal linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {
namespace {

// One weight block unpacked for the tiles: a scale and a minimum per sub-block of 16 as int16
// (the minimum is the code offset times the scale for Q6_K / Q3_K), and the float super-scales.
struct Scales {
  alignas(32) std::int16_t scale[16];
  alignas(32) std::int16_t min[16];
  float d;
  float dmin;
};

// Q4_K / Q5_K: the 6-bit scales and minimums of the 8 sub-blocks of 32 (as the decoder's
// k4_scale_min), from the 12 bytes q[0..11]: sub-blocks 0-3 keep the low 6 bits of bytes 0-3
// (scales) and 4-7 (minimums); 4-7 take the nibbles of bytes 8-11 (low: scales, high: minimums)
// and, as bits 4-5, the top 2 bits of bytes 0-3 (scales) and 4-7 (minimums). All 16 bytes at once
// in one vector: a decode unpacks every block's scales once, and the word-at-a-time version of this
// (general-purpose shifts, then a round trip through memory to widen) cost about a fifth of
// llama1b Q4_K decode on one core. Reads 16 bytes from q: in Q4_K and Q5_K blocks the codes follow.
// k4_scale_bytes gives the 16 bytes (scales 0-7, then minimums 0-7); k4_scale_vectors the int16
// scales (lanes 0-15, each twice) and minimums as registers; k4_scales stores them.
inline __m128i k4_scale_bytes(const std::uint8_t* q) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  // Per output byte (scales 0-7, then minimums 0-7): the byte holding its low bits ...
  const __m128i low_src =
      _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  // ... and, for sub-blocks 4-7, the byte whose top 2 bits are its bits 4-5 (-1: none).
  const __m128i top_src =
      _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  // Low 6 bits, low nibble, low 6 bits, high nibble (a 32-bit shift, then the nibble mask).
  const __m128i low = _mm_and_si128(_mm_srlv_epi32(low_src, _mm_setr_epi32(0, 0, 0, 4)),
                                    _mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F));
  // Bits 6-7 to 4-5 (a 16-bit shift: what crosses from the next byte lands in bits 6-7, masked).
  const __m128i top = _mm_and_si128(_mm_srli_epi16(top_src, 2), _mm_set1_epi8(0x30));
  return _mm_or_si128(low, top);
}
inline void k4_scale_vectors(const std::uint8_t* q, __m256i& scales, __m256i& mins) {
  const __m128i bytes = k4_scale_bytes(q);
  // Each value twice (both sub-blocks of 16 of a sub-block of 32), widened to int16.
  const __m128i scales_twice =
      _mm_shuffle_epi8(bytes, _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7));
  const __m128i mins_twice = _mm_shuffle_epi8(
      bytes, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15));
  scales = _mm256_cvtepu8_epi16(scales_twice);
  mins = _mm256_cvtepu8_epi16(mins_twice);
}
inline void k4_scales(const std::uint8_t* q, Scales& s) {
  __m256i scales;
  __m256i mins;
  k4_scale_vectors(q, scales, mins);
  _mm256_store_si256(reinterpret_cast<__m256i*>(s.scale), scales);
  _mm256_store_si256(reinterpret_cast<__m256i*>(s.min), mins);
}

// Per encoding: the block, whether its codes are signed, whether there is a minimum term and
// whether it has its own scale (dmin), whether a scale covers 32 elements (else 16), and how a
// block's scales unpack.
// Q4_K and Q5_K share their scale layout (d, dmin, 12 bytes of 6-bit scales and minimums).
template <typename B>
struct K4Scales {
  using Block = B;
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = true;
  static constexpr bool kScalePer32 = true;
  static_assert(sizeof(Block) - offsetof(Block, scales) >= 16, "k4_scales reads 16 bytes");
  static void scales(const Block& b, Scales& s) {
    k4_scales(b.scales, s);
    s.d = half_to_float(b.d);
    s.dmin = half_to_float(b.dmin);
  }
};
using Q4KScales = K4Scales<encoding::BlockQ4_K>;
using Q5KScales = K4Scales<encoding::BlockQ5_K>;

// Q6_K: the 16 signed 8-bit scales as int16.
inline __m256i q6k_scale_vector(const std::int8_t* q) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
}

struct Q6KScales {
  using Block = encoding::BlockQ6_K;
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = false;
  static constexpr bool kScalePer32 = false;
  static void scales(const Block& b, Scales& s) {
    const __m256i sc = q6k_scale_vector(b.scales);
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.scale), sc);
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.min), _mm256_slli_epi16(sc, 5));  // 32 * scale
    s.d = half_to_float(b.d);
    s.dmin = s.d;
  }
};

// Q3_K: the 16 signed 6-bit scales (minus 32) of the 12 bytes q[0..11] as int16: scale j is the
// low nibble of byte j (j < 8) or the high nibble of byte j - 8, with bits 2 (j / 4), + 1 of byte
// 8 + j % 4 as its bits 4-5. One 128-bit pass; a loop over the 16 scales held Q3_K decode to 6.7
// GB/s on one Zen 5 thread (AVX-512) and 8.9 (AVX2). Reads exactly 12 bytes: the block's d follows.
inline __m256i q3k_scale_vector(const std::uint8_t* q) {
  std::int32_t tail;
  std::memcpy(&tail, q + 8, 4);
  const __m128i v = _mm_insert_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)), tail, 2);
  const __m128i low = _mm_and_si128(
      _mm_srlv_epi64(
          _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7)),
          _mm_set_epi64x(4, 0)),
      _mm_set1_epi8(0x0F));
  const __m128i high = _mm_and_si128(
      _mm_srlv_epi32(_mm_shuffle_epi8(
                         v, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11)),
                     _mm_setr_epi32(0, 2, 4, 6)),
      _mm_set1_epi8(3));
  return _mm256_cvtepi8_epi16(
      _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32)));
}

struct Q3KScales {
  using Block = encoding::BlockQ3_K;
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = false;
  static constexpr bool kScalePer32 = false;
  static void scales(const Block& b, Scales& s) {
    const __m256i sc = q3k_scale_vector(b.scales);
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.scale), sc);
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.min), _mm256_slli_epi16(sc, 2));  // 4 * scale
    s.d = half_to_float(b.d);
    s.dmin = s.d;
  }
};

struct Q2KScales {
  using Block = encoding::BlockQ2_K;
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = true;
  static constexpr bool kScalePer32 = false;
  static void scales(const Block& b, Scales& s) {
    const __m256i sm =
        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.scale),
                       _mm256_and_si256(sm, _mm256_set1_epi16(0xF)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.min), _mm256_srli_epi16(sm, 4));
    s.d = half_to_float(b.d);
    s.dmin = half_to_float(b.dmin);
  }
};

struct IQ4XSScales {
  using Block = encoding::BlockIQ4_XS;
  static constexpr bool kSigned = true;
  static constexpr bool kHasMin = false;
  static constexpr bool kSeparateMin = false;
  static constexpr bool kScalePer32 = true;
  static void scales(const Block& b, Scales& s) {
    for (int j = 0; j < 8; ++j) {
      const int low = (b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF;
      const int high = (b.scales_h >> (2 * j)) & 3;
      s.scale[2 * j] = s.scale[2 * j + 1] = static_cast<std::int16_t>((low | (high << 4)) - 32);
    }
    s.d = half_to_float(b.d);
    s.dmin = s.d;
  }
};

// IQ4_XS's 8 sub-block scales (minus 32) as int32 lanes: the low 4 bits are nibble c of the
// 32-bit scales_l, the high 2 bits bits 2c, 2c + 1 of scales_h.
inline __m256i iq4xs_scale_vector(const encoding::BlockIQ4_XS& w) {
  std::int32_t low;
  std::memcpy(&low, w.scales_l, 4);
  const __m256i l = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(low), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
      _mm256_set1_epi32(0xF));
  const __m256i h =
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(w.scales_h),
                                         _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                       _mm256_set1_epi32(3));
  return _mm256_sub_epi32(_mm256_or_si256(l, _mm256_slli_epi32(h, 4)), _mm256_set1_epi32(32));
}

// The scalar definition's per-block step: acc += d * xd * isum (- dmin * xd * msum), as one or two
// fused multiply-adds in the reference's order (reference::dot_q8_K).
template <typename F>
inline float block_step(float acc, const Scales& s, float xd, std::int32_t isum,
                        std::int32_t msum) {
  static_assert(F::kHasMin || !F::kSeparateMin, "a separate minimum needs a minimum");
  const float dd = s.d * xd;
  if constexpr (!F::kHasMin) {
    return __builtin_fmaf(dd, static_cast<float>(isum), acc);
  } else if constexpr (F::kSeparateMin) {
    acc = __builtin_fmaf(dd, static_cast<float>(isum), acc);
    return __builtin_fmaf(-(s.dmin * xd), static_cast<float>(msum), acc);
  } else {
    return __builtin_fmaf(dd, static_cast<float>(isum - msum), acc);
  }
}

// The float steps of four consecutive blocks with one F16 scale d each (Q6_K, Q3_K, IQ4_XS
// decode), in the definition's order: acc = fma(fl(d_w[g] x xd[g]), float(isum[g]), acc) for
// g = 0..3. The scale products and conversions run four at once; the fused multiply-adds stay
// scalar and in block order.
template <typename Block>
inline float fma_four_blocks(float acc, const Block* w, __m128 xd, __m128i isums) {
  const __m128 wd = _mm_cvtph_ps(
      _mm_setr_epi16(static_cast<short>(w[0].d), static_cast<short>(w[1].d),
                     static_cast<short>(w[2].d), static_cast<short>(w[3].d), 0, 0, 0, 0));
  alignas(16) float scale[4];
  alignas(16) float sums[4];
  _mm_store_ps(scale, _mm_mul_ps(wd, xd));
  _mm_store_ps(sums, _mm_cvtepi32_ps(isums));
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g)
    acc = __builtin_fmaf(scale[g], sums[g], acc);
  return acc;
}

// Small batches (a speculative verification: up to 16 tokens) run one row at a time against
// evenly sized groups of at most 6 tokens, so each row's codes are unpacked once per group; for 5
// tokens this measured 1.5x faster than 2 x 4 tiles (4 tokens, then 1 with a second unpacking).
constexpr int kSmallBatchTokens = 6;
constexpr std::size_t kSmallBatchMax = 16;

// Splits an m-row x n-token product into the kernel's pieces: decode() for one token;
// one_row(r, t0, rn) per row and token group for small batches; tile(r0, rm, t0, rn) over kRows x
// kTokens tiles (edges smaller) otherwise, tokens outer and rows inner, so the rows of the call
// stay in cache while token tiles stream past.
template <std::size_t kRows, std::size_t kTokens, typename Decode, typename OneRow, typename Tile>
void split_kquant_gemm(std::size_t m, std::size_t n, Decode decode, OneRow one_row, Tile tile) {
  if (n == 1) return decode();
  if (n <= kSmallBatchMax) {
    const std::size_t groups = (n + kSmallBatchTokens - 1) / kSmallBatchTokens;
    for (std::size_t r = 0; r < m; ++r) {
      std::size_t t0 = 0;
      for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t rn = n / groups + (g < n % groups ? 1 : 0);
        one_row(r, t0, rn);
        t0 += rn;
      }
    }
    return;
  }
  for (std::size_t t0 = 0; t0 < n; t0 += kTokens) {
    const std::size_t rn = n - t0 < kTokens ? n - t0 : kTokens;
    for (std::size_t r0 = 0; r0 < m; r0 += kRows)
      tile(r0, m - r0 < kRows ? m - r0 : kRows, t0, rn);
  }
}

}  // namespace
}  // namespace eredu::cpu::detail
