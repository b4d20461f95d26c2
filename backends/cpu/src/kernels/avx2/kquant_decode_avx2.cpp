// AVX2 one-token products (decode) of Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS weight rows with one
// q8_K activation row, with the values of reference::dot_q8_K bit for bit: per 256-block the same
// exact int32 sums (isum over the codes, msum over the minimums or code offsets), then the
// definition's one or two fused multiply-adds into the row's one accumulator, the blocks in order.
//
// Why a kernel of its own: the tile of kquant_avx2.cpp (which serves prompts too) stores each
// block's unpacked scales and minimums and reads every chunk's scale back as a broadcast, and sums
// each block's int32 lanes alone. On one Zen 5 thread it ran Q4_K at 21.5 GB/s from cache, below
// the thread's share of memory bandwidth, so llama1b Q4_K_M decode on the AVX2 table was at 0.95x
// llama.cpp's AVX2 build. Here
//   - the scale bytes stay in a register (both 128-bit lanes), and a chunk's scale words are one
//     byte shuffle of it (the high byte of every word zeroed), the minimums' words another;
//   - Q6_K's and Q3_K's code offset (32 or 4 x scale x each 16-element activation sum) is taken
//     out inside the int32 sum, and a chunk's two scale words are a dword permute and a shuffle of
//     the widened scales;
//   - four blocks' isums and msums are summed by one horizontal-add tree each, and their float
//     steps (scale products, conversions) run four blocks at once before the fused multiply-adds,
//     which stay scalar and in block order.
// One row at a time, as the tile: four interleaved row streams per thread starved the prefetcher
// on an AVX2 machine (kquant_avx2.cpp). One Zen 5 thread with EREDU_CPU_ISA=avx2, 2048 x 8192
// from cache: Q4_K 21 -> 26 GB/s, Q5_K 21 -> 24; llama1b Q4_K_M decode went from 0.95x to
// 1.0x llama.cpp's AVX2 build on 2 threads. Q2_K (the tile before) 10.4 -> 16 GB/s, and llama1b
// Q2_K decode 57.6 -> 86 tokens/s (0.92x llama.cpp's AVX2 build before); IQ4_XS 16.5 -> 18.7 GB/s.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../vec_ops.hpp"
#include "block_codes_avx2.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "kquant_codes_avx2.hpp"
#include "kquant_scales.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Byte shuffles of the 16 scale bytes (scales 0-7, minimums 0-7, in both 128-bit lanes) into
// int16 words: chunk c's scale in every word; the minimums each twice (sub-blocks of 16, as the
// activation's bsums).
struct alignas(32) K4WordShuffles {
  std::int8_t chunk[8][32];
  std::int8_t mins[32];
};
constexpr K4WordShuffles kWords = [] {
  K4WordShuffles t{};
  for (int c = 0; c < 8; ++c) {
    for (int i = 0; i < 16; ++i) {
      t.chunk[c][2 * i] = static_cast<std::int8_t>(c);
      t.chunk[c][2 * i + 1] = -128;
    }
  }
  for (int j = 0; j < 16; ++j) {  // word j: minimum j / 2
    t.mins[2 * j] = static_cast<std::int8_t>(8 + j / 2);
    t.mins[2 * j + 1] = -128;
  }
  return t;
}();

inline __m256i load_words(const std::int8_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

// Decode streams the rows from memory, one after another: hint a block's bytes
// kGroupStreamAheadBytes ahead into L2 (as the tile does). ~0.5 KiB ahead into L1 left one Zen 5
// thread's Q4_K product from memory at 22 GB/s (16384 x 8192; 8 KiB: 23.5) and Q6_K at 24 (28),
// and llama1b Q4_K_M / Q4_K decode on two threads 5-8% slower (three interleaved rounds).
template <typename Block>
inline void hint_ahead(const Block& w) {
  const char* ahead = reinterpret_cast<const char*>(&w) + kGroupStreamAheadBytes;
#pragma GCC unroll 4
  for (std::size_t line = 0; line < sizeof(w); line += 64)
    _mm_prefetch(ahead + line, _MM_HINT_T1);
}

// One block's isum (as 8 int32 lanes) and msum lanes; `bytes` is k4_scale_bytes in both lanes.
template <typename F>
inline void block_sums(const typename F::Block& w, const enc::BlockQ8_K& x, __m256i& isum,
                       __m256i& msum) {
  hint_ahead(w);
  const __m256i bytes = _mm256_broadcastsi128_si256(k4_scale_bytes(w.scales));
  __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int c = 0; c < 8; ++c) {
    const __m256i pairs = _mm256_maddubs_epi16(F::codes(w, c), load256(x.qs + 32 * c));
    acc = _mm256_add_epi32(
        acc, _mm256_madd_epi16(pairs, _mm256_shuffle_epi8(bytes, load_words(kWords.chunk[c]))));
  }
  isum = acc;
  msum = _mm256_madd_epi16(_mm256_shuffle_epi8(bytes, load_words(kWords.mins)), load256(x.bsums));
}

// Q2_K: 16 sub-blocks of 16, each with a 4-bit scale (low nibble of its byte) and minimum (high
// nibble). Chunk c (elements 32c .. 32c + 31) is bit pair c % 4 of the 32 code bytes of half c / 4,
// and its scale words are sub-block 2c's scale in the low 128-bit lane, 2c + 1's in the high one:
// one byte shuffle of the 16 scales held in both lanes.
struct alignas(32) Q2WordShuffles {
  std::int8_t chunk[8][32];
};
constexpr Q2WordShuffles kQ2Words = [] {
  Q2WordShuffles t{};
  for (int c = 0; c < 8; ++c) {
    for (int i = 0; i < 16; ++i) {
      t.chunk[c][2 * i] = static_cast<std::int8_t>(2 * c + i / 8);
      t.chunk[c][2 * i + 1] = -128;
    }
  }
  return t;
}();

template <>
inline void block_sums<Q2K>(const enc::BlockQ2_K& w, const enc::BlockQ8_K& x, __m256i& isum,
                            __m256i& msum) {
  hint_ahead(w);
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
  const __m256i scales = _mm256_broadcastsi128_si256(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
  const __m256i mins =
      _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
  __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    const __m256i q = load256(w.qs + 32 * half);
#pragma GCC unroll 4
    for (int pair = 0; pair < 4; ++pair) {
      const int c = 4 * half + pair;
      const __m256i codes = _mm256_and_si256(_mm256_srli_epi16(q, 2 * pair), _mm256_set1_epi8(3));
      const __m256i pairs = _mm256_maddubs_epi16(codes, load256(x.qs + 32 * c));
      acc = _mm256_add_epi32(
          acc,
          _mm256_madd_epi16(pairs, _mm256_shuffle_epi8(scales, load_words(kQ2Words.chunk[c]))));
    }
  }
  isum = acc;
  msum = _mm256_madd_epi16(mins, load256(x.bsums));
}

// Per block acc += (d x xd) x isum, then acc += -(dmin x xd) x msum.
template <typename F>
float k4_row(const typename F::Block* w, const enc::BlockQ8_K* x, std::size_t n) {
  using Block = typename F::Block;
  static_assert(offsetof(Block, dmin) == offsetof(Block, d) + 2);
  float acc = 0.0F;
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    __m256i isum[4];
    __m256i msum[4];
    int dm[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      block_sums<F>(w[b + g], x[b + g], isum[g], msum[g]);
      std::memcpy(&dm[g], &w[b + g].d, 4);  // d and dmin, two halves
    }
    // Lanes [2g] = block g's d x xd and its isum, [2g + 1] = -(dmin x xd) and msum: exactly the
    // definition's operands, then its fused multiply-adds in order.
    const __m256 xd = _mm256_setr_ps(x[b].d, x[b].d, x[b + 1].d, x[b + 1].d, x[b + 2].d, x[b + 2].d,
                                     x[b + 3].d, x[b + 3].d);
    const __m256 wd = _mm256_cvtph_ps(_mm_setr_epi32(dm[0], dm[1], dm[2], dm[3]));
    alignas(32) float scale[8];
    alignas(32) float sums[8];
    _mm256_store_ps(
        scale, _mm256_xor_ps(_mm256_mul_ps(wd, xd),
                             _mm256_castsi256_ps(_mm256_setr_epi32(0, INT32_MIN, 0, INT32_MIN, 0,
                                                                   INT32_MIN, 0, INT32_MIN))));
    const __m128i is = hsum4(isum[0], isum[1], isum[2], isum[3]);
    const __m128i ms = hsum4(msum[0], msum[1], msum[2], msum[3]);
    _mm256_store_ps(sums, _mm256_cvtepi32_ps(_mm256_setr_m128i(_mm_unpacklo_epi32(is, ms),
                                                               _mm_unpackhi_epi32(is, ms))));
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
      acc = __builtin_fmaf(scale[i], sums[i], acc);
  }
  for (; b < n; ++b) {
    __m256i isum;
    __m256i msum;
    block_sums<F>(w[b], x[b], isum, msum);
    acc = __builtin_fmaf(half_to_float(w[b].d) * x[b].d, static_cast<float>(hsum_i32(isum)), acc);
    acc = __builtin_fmaf(-(half_to_float(w[b].dmin) * x[b].d), static_cast<float>(hsum_i32(msum)),
                         acc);
  }
  return acc;
}

// Q6_K and Q3_K: signed scales per 16 elements and unsigned codes (value + 32 or + 4). Per block
// acc += (d x xd) x (isum - msum), msum = sum_s offset x scale_s x bsum_s, taken out inside the
// int32 sum (exact) so that a block needs one horizontal sum.
struct Q6KOffset : Q6K {
  static constexpr int kOffsetShift = 5;
  static __m256i scales(const Block& b) { return q6k_scale_vector(b.scales); }
};
struct Q3KOffset : Q3K {
  static constexpr int kOffsetShift = 2;
  static __m256i scales(const Block& b) { return q3k_scale_vector(b.scales); }
};

// Chunk c's scale words from the 16 int16 scales: sub-block 2c in the low 128-bit lane (the
// chunk's first 16 elements), 2c + 1 in the high one. Dword c holds both; every lane takes it, then
// each lane keeps its word.
inline __m256i chunk_scale_words(__m256i scales, int c) {
  const __m256i pair = _mm256_permutevar8x32_epi32(scales, _mm256_set1_epi32(c));
  return _mm256_shuffle_epi8(
      pair, _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
                             2, 3, 2, 3, 2, 3, 2, 3));
}

template <typename F>
inline __m256i offset_block_sum(const typename F::Block& w, const enc::BlockQ8_K& x) {
  hint_ahead(w);
  const __m256i scales = F::scales(w);
  __m256i acc = _mm256_madd_epi16(
      _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(scales, F::kOffsetShift)),
      load256(x.bsums));
#pragma GCC unroll 8
  for (int c = 0; c < 8; ++c) {
    const __m256i pairs = _mm256_maddubs_epi16(F::codes(w, c), load256(x.qs + 32 * c));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, chunk_scale_words(scales, c)));
  }
  return acc;
}

template <typename F>
float offset_row(const typename F::Block* w, const enc::BlockQ8_K* x, std::size_t n) {
  float acc = 0.0F;
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    __m256i isum[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
      isum[g] = offset_block_sum<F>(w[b + g], x[b + g]);
    acc = fma_four_blocks(acc, w + b, _mm_setr_ps(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d),
                          hsum4(isum[0], isum[1], isum[2], isum[3]));
  }
  for (; b < n; ++b) {
    acc = __builtin_fmaf(half_to_float(w[b].d) * x[b].d,
                         static_cast<float>(hsum_i32(offset_block_sum<F>(w[b], x[b]))), acc);
  }
  return acc;
}

// IQ4_XS: signed codebook values against signed activations. The activations' absolute values are
// made once per call (in chunks of kIQ4XSChunkBlocks blocks, on the stack), so a sub-block moves
// the activation's sign onto its 32 values with one vpsignb (|x| x sign(x) v = x v; |x|, |v| <= 127
// keep vpmaddubsw's pairs below 2^15) instead of the tile's two; its 16 code bytes sit in both
// 128-bit lanes and one variable shift brings the high nibbles (elements 16-31) down; its scale
// words are one dword permute of the block's scales, each in both 16-bit halves.
constexpr std::size_t kIQ4XSChunkBlocks = 64;

struct alignas(32) AbsActivations {
  std::uint8_t v[kIQ4XSChunkBlocks][enc::kQK_K];
};

inline __m256i iq4xs_block_sum(const enc::BlockIQ4_XS& w, const enc::BlockQ8_K& x,
                               const std::uint8_t* abs_x, __m256i codebook) {
  hint_ahead(w);
  const __m256i s32 = iq4xs_scale_vector(w);
  const __m256i s16 =
      _mm256_or_si256(_mm256_and_si256(s32, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(s32, 16));
  __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m256i both = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs + 16 * j)));
    const __m256i nibbles = _mm256_and_si256(
        _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0x0F));
    const __m256i values =
        _mm256_sign_epi8(_mm256_shuffle_epi8(codebook, nibbles), load256(x.qs + 32 * j));
    const __m256i pairs = _mm256_maddubs_epi16(load256(abs_x + 32 * j), values);
    acc = _mm256_add_epi32(
        acc, _mm256_madd_epi16(pairs, _mm256_permutevar8x32_epi32(s16, _mm256_set1_epi32(j))));
  }
  return acc;
}

float iq4xs_row(const enc::BlockIQ4_XS* w, const enc::BlockQ8_K* x, const AbsActivations& abs_x,
                std::size_t n, float acc, __m256i codebook) {
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    __m256i isum[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
      isum[g] = iq4xs_block_sum(w[b + g], x[b + g], abs_x.v[b + g], codebook);
    acc = fma_four_blocks(acc, w + b, _mm_setr_ps(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d),
                          hsum4(isum[0], isum[1], isum[2], isum[3]));
  }
  for (; b < n; ++b) {
    acc = __builtin_fmaf(
        half_to_float(w[b].d) * x[b].d,
        static_cast<float>(hsum_i32(iq4xs_block_sum(w[b], x[b], abs_x.v[b], codebook))), acc);
  }
  return acc;
}

template <typename F>
void decode(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
            std::size_t n_super, float* y) {
  const auto* rows = static_cast<const std::byte*>(w);
  for (std::size_t r = 0; r < m; ++r) {
    const auto* row = reinterpret_cast<const typename F::Block*>(rows + r * w_stride);
    if constexpr (requires { F::kOffsetShift; }) {
      y[r] = offset_row<F>(row, x, n_super);
    } else {
      y[r] = k4_row<F>(row, x, n_super);
    }
  }
}

}  // namespace

void kquant_decode_q4k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q4K>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q3k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q3KOffset>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q6k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q6KOffset>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_iq4xs_avx2(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  const __m256i codebook = iq4nl_table();
  AbsActivations abs_x;
  const auto* rows = static_cast<const std::byte*>(w);
  for (std::size_t b0 = 0; b0 < n_super; b0 += kIQ4XSChunkBlocks) {
    const std::size_t n = std::min(kIQ4XSChunkBlocks, n_super - b0);
    for (std::size_t b = 0; b < n; ++b) {
      for (std::size_t i = 0; i < enc::kQK_K; i += 32)
        _mm256_store_si256(reinterpret_cast<__m256i*>(abs_x.v[b] + i),
                           _mm256_abs_epi8(load256(x[b0 + b].qs + i)));
    }
    for (std::size_t r = 0; r < m; ++r) {
      const auto* row = reinterpret_cast<const enc::BlockIQ4_XS*>(rows + r * w_stride) + b0;
      y[r] = iq4xs_row(row, x + b0, abs_x, n, b0 == 0 ? 0.0F : y[r], codebook);
    }
  }
}
void kquant_decode_q2k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q2K>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q5k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q5K>(w, w_stride, m, x, n_super, y);
}

}  // namespace eredu::cpu::detail
