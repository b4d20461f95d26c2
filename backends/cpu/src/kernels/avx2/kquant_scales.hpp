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
// k4_scale_min), unpacked four at a time from the 12 bytes read as three little-endian words:
// sub-blocks 0-3 keep the low 6 bits of bytes 0-3 (scales) and 4-7 (minimums); 4-7 take the
// nibbles of bytes 8-11 and, as bits 4-5, the top 2 bits of bytes 0-3 (scales) and 4-7 (minimums).
inline void k4_scales(const std::uint8_t* q, Scales& s) {
  std::uint32_t w[3];
  std::memcpy(w, q, 12);
  const std::uint32_t low6 = 0x3F3F3F3FU;
  const std::uint32_t nib = 0x0F0F0F0FU;
  const std::uint32_t top2 = 0x03030303U;
  const std::uint32_t scales[2] = {w[0] & low6, (w[2] & nib) | (((w[0] >> 6) & top2) << 4)};
  const std::uint32_t mins[2] = {w[1] & low6, ((w[2] >> 4) & nib) | (((w[1] >> 6) & top2) << 4)};
  // 8 bytes -> 16 int16, each value twice (both sub-blocks of 16 of a sub-block of 32).
  auto widen_twice = [](const std::uint32_t(&v)[2], std::int16_t* out) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(v)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out),
                       _mm256_set_m128i(_mm_unpackhi_epi16(b, b), _mm_unpacklo_epi16(b, b)));
  };
  widen_twice(scales, s.scale);
  widen_twice(mins, s.min);
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
  static void scales(const Block& b, Scales& s) {
    k4_scales(b.scales, s);
    s.d = half_to_float(b.d);
    s.dmin = half_to_float(b.dmin);
  }
};
using Q4KScales = K4Scales<encoding::BlockQ4_K>;
using Q5KScales = K4Scales<encoding::BlockQ5_K>;

struct Q6KScales {
  using Block = encoding::BlockQ6_K;
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = false;
  static constexpr bool kScalePer32 = false;
  static void scales(const Block& b, Scales& s) {
    const __m256i sc =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.scale), sc);
    _mm256_store_si256(reinterpret_cast<__m256i*>(s.min), _mm256_slli_epi16(sc, 5));  // 32 * scale
    s.d = half_to_float(b.d);
    s.dmin = s.d;
  }
};

struct Q3KScales {
  using Block = encoding::BlockQ3_K;
  static constexpr bool kSigned = false;
  static constexpr bool kHasMin = true;
  static constexpr bool kSeparateMin = false;
  static constexpr bool kScalePer32 = false;
  static void scales(const Block& b, Scales& s) {
    for (int j = 0; j < 16; ++j) {
      const int low = j < 8 ? (b.scales[j] & 0xF) : (b.scales[j - 8] >> 4);
      const int high = (b.scales[8 + j % 4] >> (2 * (j / 4))) & 3;
      const int scale = (low | (high << 4)) - 32;
      s.scale[j] = static_cast<std::int16_t>(scale);
      s.min[j] = static_cast<std::int16_t>(4 * scale);
    }
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
