// AVX2 products of Q4_K weights laid out in groups of 16 rows (row_groups.hpp), for one token
// (decode) and for several (prompts, short batches). Each value is the definition's,
// reference::dot_q8_K, bit for bit: per 256-block the exact integer sums, then the definition's
// two fused multiply-adds, block after block, one float chain per row.
//
// Why: the AVX2 table read Q4_K rows as stored, one row at a time (kquant_decode_avx2.cpp's
// k4_row: its lanes summed per block, the scales unpacked per row). On a Zen 4 guest with
// EREDU_CPU_ISA=avx2 llama1b Q4_K_M decoded at 0.87x llama.cpp's AVX2 build, whose Q4_K rows are
// repacked in groups at load, with 72% of the token in k4_row. Here a group's code vector holds one
// 4-element slice of 16 rows per nibble: rows 0-7 in its first 32 bytes, rows 8-15 in its second,
// a row per 32-bit lane. vpmaddubsw with the slice's 4 activation bytes broadcast adds 2 products
// to each int16 word of a row's lane (AVX2 has no vpdpbusd); a sub-block's 8 slices add up in those
// words exactly, and one vpmaddwd with the row's scale in both words gives scale x dot in int32.
// The rows' sums never leave their lanes, and 8 rows' scales of a sub-block are one 8-byte load.
//
// Several tokens: a group's blocks are unpacked back into the 16 rows as stored (the exact inverse
// of the packing, row_groups.cpp's pack_k4_row, 8 rows per register) and go through the table's
// K-quant products of stored rows, so that the file's rows are never read again after the load.
// The unpacking costs a prompt a few % (the prompt tiles repack the rows once more).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kHalfRows = 8;  // rows per register: half of a group

inline __m256i broadcast4(const std::int8_t* q) {
  std::int32_t four;
  std::memcpy(&four, q, 4);
  return _mm256_set1_epi32(four);
}

// The activation's 32-element sums two per dword (sub-blocks 2p, 2p + 1 as int16, each at most
// 32 x 128 in magnitude): the operand of the minimums' vpmaddwd.
inline void sub_block_sum_pairs(const enc::BlockQ8_K& x, std::int32_t (&pairs)[4]) {
  for (int p = 0; p < 4; ++p) {
    const int lo = x.bsums[4 * p] + x.bsums[4 * p + 1];
    const int hi = x.bsums[4 * p + 2] + x.bsums[4 * p + 3];
    pairs[p] = static_cast<std::int32_t>(
        static_cast<std::uint16_t>(lo) |
        (static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16));
  }
}

// Byte shuffle of 8 scale bytes (rows 8h .. 8h + 7, in both 128-bit lanes) into each row's
// 32-bit lane as two int16 words: the scale of lane r twice, so that one vpmaddwd applies it to
// both of the lane's pair sums.
struct alignas(32) ScaleWords {
  std::int8_t bytes[32];
};
constexpr ScaleWords kScaleWords = [] {
  ScaleWords t{};
  for (int lane = 0; lane < 8; ++lane) {  // lanes 0-3 from the low 128 bits, 4-7 from the high
    for (int w = 0; w < 2; ++w) {
      t.bytes[4 * lane + 2 * w] = static_cast<std::int8_t>(lane);  // byte `lane` of the 8
      t.bytes[4 * lane + 2 * w + 1] = -128;                        // zero
    }
  }
  return t;
}();

// One block of a group: acc[h] (rows 8h .. 8h + 7) += (d x xd) x isum, then += -(dmin x xd) x msum,
// isum = sum_u scale_u x dot_u and msum = sum_u min_u x (the activation's 32-element sum u), exact.
// vpmaddubsw's pair of products is at most 2 x 15 x 128 = 3840 in magnitude, so a sub-block's
// four code vectors (low and high slices: 8 pairs) add up in int16 words exactly (at most 30720),
// and one vpmaddwd with the scale in both words of a lane gives scale_u x dot_u (at most 63 x
// 61440) in int32.
inline void q4k_block(const Q4KRowGroupBlock& gb, const enc::BlockQ8_K& x,
                      const std::int32_t (&pairs)[4], __m256 (&acc)[2]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i scale_words =
      _mm256_load_si256(reinterpret_cast<const __m256i*>(kScaleWords.bytes));
  const __m256 xd = _mm256_set1_ps(x.d);
#pragma GCC unroll 1
  for (std::size_t h = 0; h < 2; ++h) {
    __m256i isum = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int u = 0; u < 8; ++u) {
      __m256i words = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const __m256i v =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(code_vector(gb, u, k) + 32 * h));
        const __m256i lo = _mm256_and_si256(v, low4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        words = _mm256_add_epi16(
            words,
            _mm256_add_epi16(_mm256_maddubs_epi16(lo, broadcast4(x.qs + 32 * u + 4 * k)),
                             _mm256_maddubs_epi16(hi, broadcast4(x.qs + 32 * u + 16 + 4 * k))));
      }
      std::int64_t eight;
      std::memcpy(&eight, gb.scales[u] + kHalfRows * h, 8);
      const __m256i scale = _mm256_shuffle_epi8(_mm256_set1_epi64x(eight), scale_words);
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(words, scale));
    }
    __m256i msum = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i mins = _mm256_cvtepu8_epi16(
          _mm_load_si128(reinterpret_cast<const __m128i*>(gb.mins[p][kHalfRows * h])));
      msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mins, _mm256_set1_epi32(pairs[p])));
    }
    const __m256 d =
        _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(gb.d + kHalfRows * h)));
    const __m256 dmin =
        _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(gb.dmin + kHalfRows * h)));
    acc[h] = _mm256_fmadd_ps(_mm256_mul_ps(d, xd), _mm256_cvtepi32_ps(isum), acc[h]);
    const __m256 dm = _mm256_xor_ps(_mm256_mul_ps(dmin, xd), _mm256_set1_ps(-0.0F));
    acc[h] = _mm256_fmadd_ps(dm, _mm256_cvtepi32_ps(msum), acc[h]);
  }
}

// One token: y[16 g + r], the groups one after another, each group's blocks front to back (the
// hardware prefetchers follow the one stream, as on the AVX-512 table: no software hint).
void q4k_decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x,
                std::size_t n_super, float* y) {
  constexpr std::size_t kChunk = 64;  // activation blocks whose sums are made once per pass
  const auto* blocks = static_cast<const Q4KRowGroupBlock*>(groups);
  std::int32_t pairs[kChunk][4];
  for (std::size_t b0 = 0; b0 < n_super; b0 += kChunk) {
    const std::size_t n = std::min(kChunk, n_super - b0);
    for (std::size_t b = 0; b < n; ++b)
      sub_block_sum_pairs(x[b0 + b], pairs[b]);
    for (std::size_t g = 0; g < n_groups; ++g) {
      const Q4KRowGroupBlock* gb = blocks + g * n_super + b0;
      float* yg = y + g * kRowGroupRows;
      __m256 acc[2];
      for (std::size_t h = 0; h < 2; ++h)
        acc[h] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(yg + kHalfRows * h);
      for (std::size_t b = 0; b < n; ++b)
        q4k_block(gb[b], x[b0 + b], pairs[b], acc);
      for (std::size_t h = 0; h < 2; ++h)
        _mm256_storeu_ps(yg + kHalfRows * h, acc[h]);
    }
  }
}

// A group block's 16 rows as stored, row r at out[r * stride]: the inverse of pack_k4_row.
// Sub-block u's scale and minimum go back into the 12 packed bytes (enc::detail::k4_scale_min's
// layout), its codes into the low (u even) or high (u odd) nibbles of qs[32 (u / 2) ..]: the
// lane words of code vectors 4u + 2 half and 4u + 2 half + 1, side by side, are elements
// 32u + 8 half + j (low nibbles) and 32u + 16 + 8 half + j (high nibbles) of the lane's row, so
// sub-blocks 2c and 2c + 1 give a row's 8 bytes qs[32c + 8 half ..] and qs[32c + 16 + 8 half ..],
// 8 rows per register.
void unpack_q4k_block(const Q4KRowGroupBlock& gb, enc::BlockQ4_K* out, std::size_t stride) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i high4 = _mm256_set1_epi8(static_cast<char>(0xF0));
  auto vector = [&](int u, int k, std::size_t part) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(code_vector(gb, u, k) + 32 * part));
  };
  // The row words of `w` (64-bit lanes: rows first, first + 1, first + 4, first + 5) to byte
  // `at` of each row's qs.
  auto store_rows = [&](__m256i w, std::size_t first, std::size_t at) {
    const __m128i lo = _mm256_castsi256_si128(w);
    const __m128i hi = _mm256_extracti128_si256(w, 1);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out[first * stride].qs + at), lo);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out[(first + 1) * stride].qs + at),
                     _mm_unpackhi_epi64(lo, lo));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out[(first + 4) * stride].qs + at), hi);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out[(first + 5) * stride].qs + at),
                     _mm_unpackhi_epi64(hi, hi));
  };
  for (int c = 0; c < 4; ++c) {
    for (int half = 0; half < 2; ++half) {
      for (std::size_t part = 0; part < 2; ++part) {
        const __m256i even_a = vector(2 * c, 2 * half, part);
        const __m256i even_b = vector(2 * c, 2 * half + 1, part);
        const __m256i odd_a = vector(2 * c + 1, 2 * half, part);
        const __m256i odd_b = vector(2 * c + 1, 2 * half + 1, part);
        // [rows 0, 1 | 4, 5] and [rows 2, 3 | 6, 7] of this part, each row's 8 bytes.
        const __m256i even[2] = {_mm256_unpacklo_epi32(even_a, even_b),
                                 _mm256_unpackhi_epi32(even_a, even_b)};
        const __m256i odd[2] = {_mm256_unpacklo_epi32(odd_a, odd_b),
                                _mm256_unpackhi_epi32(odd_a, odd_b)};
        for (std::size_t i = 0; i < 2; ++i) {
          const __m256i lo = _mm256_or_si256(_mm256_and_si256(even[i], low4),
                                             _mm256_and_si256(_mm256_slli_epi64(odd[i], 4), high4));
          const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(even[i], 4), low4),
                                             _mm256_and_si256(odd[i], high4));
          const std::size_t first = kHalfRows * part + 2 * i;
          store_rows(lo, first, 32 * static_cast<std::size_t>(c) + 8 * half);
          store_rows(hi, first, 32 * static_cast<std::size_t>(c) + 16 + 8 * half);
        }
      }
    }
  }
  for (std::size_t r = 0; r < kRowGroupRows; ++r) {
    enc::BlockQ4_K& row = out[r * stride];
    std::uint8_t s[8];
    std::uint8_t m[8];
    for (int u = 0; u < 8; ++u) {
      s[u] = gb.scales[u][r];
      m[u] = gb.mins[u / 2][r][u % 2];
    }
    for (int j = 0; j < 4; ++j) {
      row.scales[j] = static_cast<std::uint8_t>((s[j] & 63) | ((s[j + 4] >> 4) << 6));
      row.scales[j + 4] = static_cast<std::uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
      row.scales[j + 8] = static_cast<std::uint8_t>((s[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
    row.d = gb.d[r];
    row.dmin = gb.dmin[r];
  }
}

// Several tokens: each group's 16 rows unpacked as stored, then the table's product of stored
// rows (the prompt tiles past kTokenTile tokens, as for rows read from the file).
void q4k_gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x,
              std::size_t n_super, std::size_t n, float* y, std::size_t ldy) {
  constexpr std::size_t kTokenTile = 16;  // matmul.cpp's: more tokens are a prompt
  const KQuantGemm product =
      n > kTokenTile ? kquant_prompt_gemm_avx2(DType::kQ4_K) : kquant_gemm_avx2(DType::kQ4_K);
  const auto* blocks = static_cast<const Q4KRowGroupBlock*>(groups);
  enc::BlockQ4_K* rows = group_scratch<enc::BlockQ4_K>(kRowGroupRows * n_super);
  const std::size_t row_bytes = n_super * sizeof(enc::BlockQ4_K);
  for (std::size_t g = 0; g < n_groups; ++g) {
    for (std::size_t b = 0; b < n_super; ++b)
      unpack_q4k_block(blocks[g * n_super + b], rows + b, n_super);
    product(rows, row_bytes, kRowGroupRows, x, n_super, n, y + g * kRowGroupRows, ldy);
  }
}

}  // namespace

RowGroupProducts row_group_products_avx2(DType dtype) {
  if (dtype == DType::kQ4_K) return {q4k_decode, q4k_gemm};
  return bit_pair_row_group_products_avx2(dtype);
}

}  // namespace eredu::cpu::detail
