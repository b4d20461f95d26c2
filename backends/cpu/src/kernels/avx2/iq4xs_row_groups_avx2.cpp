// AVX2 products of IQ4_XS weights laid out in groups of 16 rows (row_groups.hpp:
// IQ4XSRowGroupBlock), for one token (decode) and for several (prompts, short batches). Each value
// is the definition's, reference::dot_q8_K, bit for bit: per 256-block the exact integer sum
// sum_u scale_u x (codebook values . activations)_u, then the definition's one fused
// multiply-add, block after block, one float chain per row.
//
// Why: the AVX2 table read IQ4_XS rows as stored, one row at a time (kquant_decode_avx2.cpp): per
// 32 codes of a row a load into both 128-bit lanes, a variable shift and a mask, the codebook
// lookup, the sign trick and the product, a permute for the sub-block's scale and vpmaddwd, and
// per block the row's lanes reduced. On a Zen 4 guest with EREDU_CPU_ISA=avx2 that ran at 21 us
// from cache (Matvec/IQ4_XS 576 x 1536, 2 threads) where the table's Q4_K groups ran at 9, and a
// llama1b IQ4_XS file's products at 0.80 of the read test where the AVX-512 table's groups read at
// 0.93. Here a code vector holds one 4-element slice of 16 rows per nibble (rows 0-7 in its first
// 32 bytes, a row per 32-bit lane): the codebook lookup (vpshufb) gives the slice's values, and
// vpmaddubsw of the activations' absolute values (broadcast) with the values carrying the
// activations' signs gives each row's pair sums (at most 2 x 128 x 127, so each goes through
// vpmaddwd with the row's scale on its own); the rows' sums never leave their lanes.
//
// Several tokens: each group is unpacked back into its 16 rows as stored (code vectors are the
// rows' qs bytes 4 at a time: a 4 x 8 transpose of 32-bit lanes per half), then the table's
// IQ4_XS product of stored rows, so the file's rows are never read after the load.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "row_group_lanes_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kChunk = 64;  // activation blocks whose absolute values are made per pass

struct alignas(32) AbsActivations {
  std::int8_t v[kChunk][enc::kQK_K];  // |x| as unsigned bytes (128 for -128)
};

// Rows 8h .. 8h + 7's signed scales of sub-block u, each twice in its lane (int16 words).
inline __m256i scale_words(const IQ4XSRowGroupBlock& gb, int u, std::size_t h) {
  return signed_byte_words(gb.scales[u] + kHalfRows * h);
}

// Slice i's pair sums times the rows' scale: the codebook values of the slice's indices with the
// activations' signs (x_signs: the slice's 4 activations broadcast), against the activations'
// absolute values (abs_x, likewise).
inline __m256i slice_sum(__m256i indices, __m256i x_signs, __m256i abs_x, __m256i codebook,
                         __m256i scale) {
  const __m256i values = _mm256_sign_epi8(_mm256_shuffle_epi8(codebook, indices), x_signs);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(abs_x, values), scale);
}

// One block of a group: acc[h] (rows 8h .. 8h + 7) += (d x xd) x isum. Both halves go through a
// slice together, so each activation broadcast serves 16 rows, and the sub-blocks are a loop: with
// the halves one after the other GCC kept the first half's broadcasts for the second on the stack
// (as it did in row_groups_avx2.cpp's Q4_K / Q5_K step). On a Zen 3 guest (AVX2 only, 2 threads,
// four interleaved rounds) Matvec/IQ4_XS 2048 x 8192 from L3 went 13-17 -> 24-27 GB/s, 16384 x 8192
// from memory 10-16 -> 17-22.
inline void block_step(const IQ4XSRowGroupBlock& gb, const enc::BlockQ8_K& x,
                       const std::int8_t* abs_x, __m256i codebook, __m256 (&acc)[2]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 1
  for (int u = 0; u < 8; ++u) {
    const __m256i scale[2] = {scale_words(gb, u, 0), scale_words(gb, u, 1)};
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const int lo = 32 * u + 4 * k;
      const int hi = lo + 16;
      const __m256i x_lo = broadcast4(x.qs + lo);
      const __m256i x_hi = broadcast4(x.qs + hi);
      const __m256i abs_lo = broadcast4(abs_x + lo);
      const __m256i abs_hi = broadcast4(abs_x + hi);
#pragma GCC unroll 2
      for (std::size_t h = 0; h < 2; ++h) {
        const __m256i v =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(gb.codes[4 * u + k] + 32 * h));
        isum[h] = _mm256_add_epi32(
            isum[h], slice_sum(_mm256_and_si256(v, low4), x_lo, abs_lo, codebook, scale[h]));
        isum[h] =
            _mm256_add_epi32(isum[h], slice_sum(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
                                                x_hi, abs_hi, codebook, scale[h]));
      }
    }
  }
  const __m256 xd = _mm256_set1_ps(x.d);
#pragma GCC unroll 2
  for (std::size_t h = 0; h < 2; ++h) {
    const __m256 dd = _mm256_mul_ps(half_floats(gb.d + kHalfRows * h), xd);
    acc[h] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(isum[h]), acc[h]);
  }
}

// One token: y[16 g + r], the groups one after another, each group's blocks front to back, hinted
// into L2 kGroupStreamAheadBytes ahead as the table's other row groups are.
void decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
            float* y) {
  const auto* blocks = static_cast<const IQ4XSRowGroupBlock*>(groups);
  const __m256i codebook = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(enc::kIQ4NLValues)));
  AbsActivations abs_x;
  for (std::size_t b0 = 0; b0 < n_super; b0 += kChunk) {
    const std::size_t n = std::min(kChunk, n_super - b0);
    for (std::size_t b = 0; b < n; ++b) {
      for (std::size_t i = 0; i < enc::kQK_K; i += 32) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(abs_x.v[b] + i),
                           _mm256_abs_epi8(_mm256_loadu_si256(
                               reinterpret_cast<const __m256i*>(x[b0 + b].qs + i))));
      }
    }
    for (std::size_t g = 0; g < n_groups; ++g) {
      const IQ4XSRowGroupBlock* gb = blocks + g * n_super + b0;
      float* yg = y + g * kRowGroupRows;
      __m256 acc[2];
      for (std::size_t h = 0; h < 2; ++h)
        acc[h] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(yg + kHalfRows * h);
      for (std::size_t b = 0; b < n; ++b) {
        const char* ahead = reinterpret_cast<const char*>(gb + b) + kGroupStreamAheadBytes;
        for (std::size_t line = 0; line < sizeof(IQ4XSRowGroupBlock); line += 64)
          _mm_prefetch(ahead + line, _MM_HINT_T1);
        block_step(gb[b], x[b0 + b], abs_x.v[b], codebook, acc);
      }
      for (std::size_t h = 0; h < 2; ++h)
        _mm256_storeu_ps(yg + kHalfRows * h, acc[h]);
    }
  }
}

// A group block's 16 rows as stored, row r at out[r * stride]: the inverse of pack_iq4xs_row.
void unpack_block(const IQ4XSRowGroupBlock& gb, enc::BlockIQ4_XS* out, std::size_t stride) {
  for (int u = 0; u < 8; ++u) {
    for (std::size_t part = 0; part < 2; ++part) {
      __m256i a[4];
      for (int k = 0; k < 4; ++k) {
        a[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb.codes[4 * u + k] + 32 * part));
      }
      // 128-bit lanes: rows 0-3 low, 4-7 high (of this part's 8).
      const __m256i t0 = _mm256_unpacklo_epi32(a[0], a[1]);  // rows 0, 1 | 4, 5: bytes 0-7
      const __m256i t1 = _mm256_unpacklo_epi32(a[2], a[3]);  // rows 0, 1 | 4, 5: bytes 8-15
      const __m256i t2 = _mm256_unpackhi_epi32(a[0], a[1]);  // rows 2, 3 | 6, 7: bytes 0-7
      const __m256i t3 = _mm256_unpackhi_epi32(a[2], a[3]);  // rows 2, 3 | 6, 7: bytes 8-15
      const __m256i rows[4] = {_mm256_unpacklo_epi64(t0, t1), _mm256_unpackhi_epi64(t0, t1),
                               _mm256_unpacklo_epi64(t2, t3), _mm256_unpackhi_epi64(t2, t3)};
      for (std::size_t i = 0; i < 4; ++i) {
        const std::size_t r = kHalfRows * part + i;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out[r * stride].qs + 16 * u),
                         _mm256_castsi256_si128(rows[i]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out[(r + 4) * stride].qs + 16 * u),
                         _mm256_extracti128_si256(rows[i], 1));
      }
    }
  }
  for (std::size_t r = 0; r < kRowGroupRows; ++r) {
    enc::BlockIQ4_XS& row = out[r * stride];
    std::uint16_t high = 0;
    for (int u = 0; u < 8; ++u) {
      const int ls = gb.scales[u][r] + 32;  // 0 .. 63
      if (u % 2 == 0) row.scales_l[u / 2] = 0;
      row.scales_l[u / 2] =
          static_cast<std::uint8_t>(row.scales_l[u / 2] | (ls & 0xF) << (4 * (u % 2)));
      high = static_cast<std::uint16_t>(high | (ls >> 4) << (2 * u));
    }
    row.scales_h = high;
    row.d = gb.d[r];
  }
}

// Several tokens: each group's 16 rows unpacked as stored, then the table's product of stored
// IQ4_XS rows.
void gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
          std::size_t n, float* y, std::size_t ldy) {
  const KQuantGemm product = kquant_gemm_avx2(DType::kIQ4_XS);
  const auto* blocks = static_cast<const IQ4XSRowGroupBlock*>(groups);
  enc::BlockIQ4_XS* rows = group_scratch<enc::BlockIQ4_XS>(kRowGroupRows * n_super);
  for (std::size_t g = 0; g < n_groups; ++g) {
    for (std::size_t b = 0; b < n_super; ++b)
      unpack_block(blocks[g * n_super + b], rows + b, n_super);
    product(rows, n_super * sizeof(enc::BlockIQ4_XS), kRowGroupRows, x, n_super, n,
            y + g * kRowGroupRows, ldy);
  }
}

}  // namespace

RowGroupProducts iq4xs_row_group_products_avx2() {
  return {decode, gemm};
}

}  // namespace eredu::cpu::detail
