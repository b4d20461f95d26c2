// AVX2 products of Q4_K and Q5_K weights laid out in groups of 16 rows (row_groups.hpp:
// Q4KRowGroupBlock, Q5KRowGroupBlock), for one token (decode) and for several (prompts, short
// batches). Each value is the definition's, reference::dot_q8_K, bit for bit: per 256-block the
// exact integer sums, then the definition's two fused multiply-adds, block after block, one float
// chain per row.
//
// Why: the AVX2 table read Q4_K rows as stored, one row at a time (kquant_decode_avx2.cpp's
// k4_row: its lanes summed per block, the scales unpacked per row). On a Zen 4 guest with
// EREDU_CPU_ISA=avx2 llama1b Q4_K_M decoded at 0.87x llama.cpp's AVX2 build, whose Q4_K rows are
// repacked in groups at load, with 72% of the token in k4_row; Q5_K rows ran at 28 GB/s from cache
// (Matvec/Q5_K 576 x 1536) where the Q4_K groups run at 52. Here a group's code vector holds one
// 4-element slice of 16 rows per nibble: rows 0-7 in its first 32 bytes, rows 8-15 in its second,
// a row per 32-bit lane (Q5_K's fifth bits from one more vector per sub-block, a shift and a mask
// per slice). vpmaddubsw with the slice's 4 activation bytes broadcast adds 2 products to each
// int16 word of a row's lane (AVX2 has no vpdpbusd); a sub-block's slices add up in those words
// exactly (Q4_K: all 8, at most 8 x 2 x 15 x 128 = 30720; Q5_K: the 4 low and the 4 high ones
// apart, at most 4 x 2 x 31 x 128 = 31744 each), and one vpmaddwd with the row's scale in both
// words gives scale x dot in int32. The rows' sums never leave their lanes, and 8 rows' scales of
// a sub-block are one 8-byte load.
//
// Several tokens: each half group is repacked straight into the prompt tile's layout
// (kquant_prompt_tile_avx2.hpp: a byte per code, the scales and minimums as int16 pairs), which
// is the groups' layout with the codes unpacked; the file's rows are never read after the load.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "kquant_codes_avx2.hpp"
#include "kquant_prompt_tile_avx2.hpp"
#include "row_group_lanes_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

struct Q4KGroups {
  using Block = Q4KRowGroupBlock;
  using F = Q4K;
  static constexpr bool kFifthBit = false;
};
struct Q5KGroups {
  using Block = Q5KRowGroupBlock;
  using F = Q5K;
  static constexpr bool kFifthBit = true;
};

// Slice k of sub-block u for rows 8h .. 8h + 7: lo = elements 32u + 4k .. + 3 (the low nibbles
// of code vector 4u + k), hi = elements 32u + 16 + 4k .. + 3 (its high nibbles); Q5_K's fifth bits
// are bits k and 4 + k of the sub-block's high vector (16-bit shifts: what crosses from the
// neighbouring byte lands outside the bit kept).
template <typename L>
inline void slices(const typename L::Block& gb, int u, int k, std::size_t h, __m256i& lo,
                   __m256i& hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i v =
      _mm256_load_si256(reinterpret_cast<const __m256i*>(code_vector(gb, u, k) + 32 * h));
  lo = _mm256_and_si256(v, low4);
  hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
  if constexpr (L::kFifthBit) {
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    const __m256i high =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(gb.units[u].high + 32 * h));
    lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(high, 4 - k), bit4));
    hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_srli_epi16(high, k), bit4));
  }
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

// One block of a group: acc[h] (rows 8h .. 8h + 7) += (d x xd) x isum, then += -(dmin x xd) x msum,
// isum = sum_u scale_u x dot_u and msum = sum_u min_u x (the activation's 32-element sum u), exact.
// Both halves go through a slice together, so each activation broadcast serves 16 rows, and the
// sub-blocks are a loop, not unrolled. With the halves one after the other GCC kept the first
// half's 64 broadcasts for the second by storing them on the stack, and fully unrolled it spilled
// word sums too: llvm-mca -mcpu=znver3 put the block at 229 cycles, bound by those stores and
// reloads, now ~172. On a Zen 3 guest (AVX2 only, 2 threads, four interleaved rounds) Matvec
// 2048 x 8192 from L3: Q4_K 27-30 -> 41-49 GB/s, Q5_K 18-27 -> 36-44 (unrolled sub-blocks: 35-44
// and 26-39). From memory the llama1b Q4_K_M products did not move (0.58-0.70 of the read test
// before and after): there the stream, not the arithmetic, bounds them.
template <typename L>
inline void block_step(const typename L::Block& gb, const enc::BlockQ8_K& x,
                       const std::int32_t (&pairs)[4], __m256 (&acc)[2]) {
  const __m256 xd = _mm256_set1_ps(x.d);
  __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 1
  for (int u = 0; u < 8; ++u) {
    __m256i low_words[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    __m256i high_words[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256i act_lo = broadcast4(x.qs + 32 * u + 4 * k);
      const __m256i act_hi = broadcast4(x.qs + 32 * u + 16 + 4 * k);
#pragma GCC unroll 2
      for (std::size_t h = 0; h < 2; ++h) {
        __m256i lo;
        __m256i hi;
        slices<L>(gb, u, k, h, lo, hi);
        low_words[h] = _mm256_add_epi16(low_words[h], _mm256_maddubs_epi16(lo, act_lo));
        high_words[h] = _mm256_add_epi16(high_words[h], _mm256_maddubs_epi16(hi, act_hi));
      }
    }
#pragma GCC unroll 2
    for (std::size_t h = 0; h < 2; ++h) {
      const __m256i scale = byte_words(gb.scales[u] + kHalfRows * h);
      if constexpr (L::kFifthBit) {
        isum[h] =
            _mm256_add_epi32(isum[h], _mm256_add_epi32(_mm256_madd_epi16(low_words[h], scale),
                                                       _mm256_madd_epi16(high_words[h], scale)));
      } else {
        isum[h] = _mm256_add_epi32(
            isum[h], _mm256_madd_epi16(_mm256_add_epi16(low_words[h], high_words[h]), scale));
      }
    }
  }
#pragma GCC unroll 2
  for (std::size_t h = 0; h < 2; ++h) {
    __m256i msum = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i mins = _mm256_cvtepu8_epi16(
          _mm_load_si128(reinterpret_cast<const __m128i*>(gb.mins[p][kHalfRows * h])));
      msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mins, _mm256_set1_epi32(pairs[p])));
    }
    const __m256 d = half_floats(gb.d + kHalfRows * h);
    const __m256 dmin = half_floats(gb.dmin + kHalfRows * h);
    acc[h] = _mm256_fmadd_ps(_mm256_mul_ps(d, xd), _mm256_cvtepi32_ps(isum[h]), acc[h]);
    const __m256 dm = _mm256_xor_ps(_mm256_mul_ps(dmin, xd), _mm256_set1_ps(-0.0F));
    acc[h] = _mm256_fmadd_ps(dm, _mm256_cvtepi32_ps(msum), acc[h]);
  }
}

// One token: y[16 g + r], the groups one after another, each group's blocks front to back, hinted
// into L2 kGroupStreamAheadBytes ahead. The AVX-512 table's Q4_K and Q5_K groups read faster
// without the hint (row_groups_avx512.hpp); these, which spend more instructions per byte, read
// faster with it: on the Zen 4 guest (EREDU_CPU_ISA=avx2, 2 threads) Matvec 16384 x 8192 from
// memory Q4_K 2.0-2.1 -> 1.34-1.37 ms, Q5_K 2.76-2.84 -> 1.88-1.92; llama1b decode, paired rounds,
// Q4_K_M 65.6-66 -> 70.5-73 tokens/s while memory was fast (read test ~50-60 GB/s), unchanged while
// it was slow (~33), Q5_K_M 40-47 -> 48-55.
template <typename L>
void decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
            float* y) {
  using Block = typename L::Block;
  constexpr std::size_t kChunk = 64;  // activation blocks whose sums are made once per pass
  const auto* blocks = static_cast<const Block*>(groups);
  std::int32_t pairs[kChunk][4];
  for (std::size_t b0 = 0; b0 < n_super; b0 += kChunk) {
    const std::size_t n = std::min(kChunk, n_super - b0);
    for (std::size_t b = 0; b < n; ++b)
      sub_block_sum_pairs(x[b0 + b], pairs[b]);
    for (std::size_t g = 0; g < n_groups; ++g) {
      const Block* gb = blocks + g * n_super + b0;
      float* yg = y + g * kRowGroupRows;
      __m256 acc[2];
      for (std::size_t h = 0; h < 2; ++h)
        acc[h] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(yg + kHalfRows * h);
      for (std::size_t b = 0; b < n; ++b) {
        const char* ahead = reinterpret_cast<const char*>(gb + b) + kGroupStreamAheadBytes;
        for (std::size_t line = 0; line < sizeof(Block); line += 64)
          _mm_prefetch(ahead + line, _MM_HINT_T1);
        block_step<L>(gb[b], x[b0 + b], pairs[b], acc);
      }
      for (std::size_t h = 0; h < 2; ++h)
        _mm256_storeu_ps(yg + kHalfRows * h, acc[h]);
    }
  }
}

// Rows 8h .. 8h + 7 of a group's blocks into the prompt tile's layout: slice k of sub-block u as
// code dwords 8u + k (lo) and 8u + 4 + k (hi), the sub-block's scale twice per lane, its minimum
// twice as the minimum of its two 16-element units, d and dmin widened.
template <typename L>
void repack_half(const typename L::Block* gb, std::size_t h, kquant_tile::GroupBlock* out,
                 std::size_t n_super) {
  for (std::size_t b = 0; b < n_super; ++b) {
    kquant_tile::GroupBlock& o = out[b];
    for (int u = 0; u < 8; ++u) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.scale[u]),
                         byte_words(gb[b].scales[u] + kHalfRows * h));
      for (int k = 0; k < 4; ++k) {
        __m256i lo;
        __m256i hi;
        slices<L>(gb[b], u, k, h, lo, hi);
        _mm256_store_si256(reinterpret_cast<__m256i*>(o.codes[8 * u + k]), lo);
        _mm256_store_si256(reinterpret_cast<__m256i*>(o.codes[8 * u + 4 + k]), hi);
      }
    }
    for (int p = 0; p < 4; ++p) {
      const __m256i mins = _mm256_cvtepu8_epi16(
          _mm_load_si128(reinterpret_cast<const __m128i*>(gb[b].mins[p][kHalfRows * h])));
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.mins[2 * p]), word_twice(mins, 0));
      _mm256_store_si256(reinterpret_cast<__m256i*>(o.mins[2 * p + 1]), word_twice(mins, 1));
    }
    _mm256_store_ps(o.d, half_floats(gb[b].d + kHalfRows * h));
    _mm256_store_ps(o.dmin, half_floats(gb[b].dmin + kHalfRows * h));
  }
}

template <typename L>
void gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
          std::size_t n, float* y, std::size_t ldy) {
  kquant_tile::row_group_gemm<typename L::F, typename L::Block>(
      groups, n_groups, x, n_super, n, y, ldy,
      [&](const typename L::Block* gb, std::size_t h, kquant_tile::GroupBlock* out) {
        repack_half<L>(gb, h, out, n_super);
      });
}

}  // namespace

RowGroupProducts row_group_products_avx2(DType dtype) {
  switch (dtype) {
    case DType::kQ4_K:
      return {decode<Q4KGroups>, gemm<Q4KGroups>};
    case DType::kQ5_K:
      return {decode<Q5KGroups>, gemm<Q5KGroups>};
    case DType::kQ6_K:
      return q6k_row_group_products_avx2();
    case DType::kIQ4_XS:
      return iq4xs_row_group_products_avx2();
    default:
      return bit_pair_row_group_products_avx2(dtype);
  }
}

}  // namespace eredu::cpu::detail
