// AVX-512 VNNI one-token products (decode) of Q4_0, Q8_0, Q4_1, Q5_0 and Q5_1 weights laid out in
// groups of 16 rows (row_groups.hpp: Nibble32RowGroupPair, Q8_0RowGroupPair, Q4_1RowGroupPair,
// Q5_0RowGroupPair, Q5_1RowGroupPair), with the AVX2 table's row dots' values bit for bit
// (avx2/vec_avx2.cpp): per block, eight exact int32 lane sums (lane l: elements 4l .. 4l + 3 of
// code x activation), each converted and added by a fused multiply-add scaled by fl(d_w x d_x)
// into lane l of a chain: Q4_0 and Q8_0 keep two (block b in chain b % 2, row_dot_two_chains), the
// others one; Q4_1 / Q5_1 also add fl(m_w) x s_x per block into a sum of minimums by a fused
// multiply-add. At the end the chains' sum, AVX2's horizontal sum ((v0 + v4) + (v2 + v6)) +
// ((v1 + v5) + (v3 + v7)), plus the minimums. So choosing this table still changes no token of a
// model in these encodings.
//
// Why: the four-row product of rows as stored (quant_matvec_avx512.cpp) spends, per pair of blocks
// and row, a lane permute of the codes, a conversion, a scale product and a multiply-add on 64
// weights, and lays the scales of each pair out again: one Zen 4 core ran it at 19-22 GB/s from
// cache (Matvec/Q4_0 576 x 1536 and 2048 x 8192), hardly more than a core reads from memory, so
// llama1b Q4_0 decoded at 54-72% of the read test whenever memory was fast. Here the eight lanes of
// a row are never in one register: with 16 rows side by side each lane sum is a whole register
// (row r in lane r), so per block of 16 rows the work is 4 loads, 8 nibble masks, 8 vpdpbusd (the
// slice's 4 activation bytes broadcast from memory, minus 8 x their sum as the start value), 8
// conversions and 8 multiply-adds into 16 accumulators (two chains x eight lanes), and one scale
// product: 44 GB/s on one core from cache, 72 on two (Q8_0 the same without the nibble masks, on
// twice the bytes; the codes are stored + 128, unsigned, so that the offset's share is again one
// of the activations only). The conversions and multiply-adds, which the AVX2 values need per lane
// and block, are a fifth of that (without them: 56-58 GB/s); a product with an exact sum per block
// (as the prompt tiles' and IQ4_NL's) would need one of each per block, at the price of the tokens
// the AVX2 table gives.
//
// A group's pairs are one stream, hinted into L2 kGroupStreamAheadBytes ahead for the 4- and 5-bit
// encodings (kStreamHinted), as IQ4_NL's: on a Zen 4 guest in its slow memory state (read test
// ~31-34 GB/s), llama1b decode, 2 threads, six interleaved rounds, medians: Q4_0 50.3 tokens/s
// hinted, 47.6 not (the four-row product of stored rows: 51.6); Q8_0, twice the bytes for the
// same work, 26.1 hinted, 28.6 not (26.8), so its stream is left to the hardware prefetchers. The
// last rows % 16 of a weight take the four-row products of rows as stored. Q4_1, Q5_0 and Q5_1
// (quant_matvec_row_pairs_avx512.cpp before: 16-20 GB/s on one core from cache, now 34-45) take
// one chain; Q5_0 and Q5_1 a shift and a bitwise select more per slice for the fifth bits.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "block32_slices_avx512.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {

namespace {

// Activation blocks prepared per pass: rows of up to 16384 columns in one, so that each group is
// one stream (IQ4_NL found 64 blocks per pass far slower from memory: each group's hint ran past
// its pass). Longer rows keep each group's 16 accumulators between passes.
constexpr std::size_t kChunk = 512;

// A block's 16-row sums for lane l start at -offset x (sum of activations 4l .. 4l + 3), so that
// one vpdpbusd of the unsigned codes (code + offset) with the signed activations leaves the exact
// lane sum of code x activation.
struct alignas(32) BlockStarts {
  std::int32_t minus_offset[8];
};

inline __m512i broadcast4(const std::int8_t* p) {
  std::int32_t four;
  std::memcpy(&four, p, 4);
  return _mm512_set1_epi32(four);
}

// Per encoding: whether its stream is hinted, the pair layout, the offset its unsigned codes
// carry, its chains, whether it has minimums, and slice j (elements 4j .. 4j + 3 of each row, row r
// in lane r) of half h of a pair as unsigned bytes.
struct Q4_0Groups {
  static constexpr bool kStreamHinted = true;
  using Pair = Nibble32RowGroupPair;
  static constexpr int kOffset = 8;
  static constexpr int kChains = 2;
  static constexpr bool kMinimum = false;
  static __m512i slice(const Pair& p, int h, int j) { return low_bits(p.codes[h], j); }
};
struct Q8_0Groups {
  static constexpr bool kStreamHinted = false;
  using Pair = Q8_0RowGroupPair;
  static constexpr int kOffset = 128;
  static constexpr int kChains = 2;
  static constexpr bool kMinimum = false;
  static __m512i slice(const Pair& p, int h, int j) { return _mm512_load_si512(p.codes[h][j]); }
};
struct Q4_1Groups {
  static constexpr bool kStreamHinted = true;
  using Pair = Q4_1RowGroupPair;
  static constexpr int kOffset = 0;
  static constexpr int kChains = 1;
  static constexpr bool kMinimum = true;
  static __m512i slice(const Pair& p, int h, int j) { return low_bits(p.codes[h], j); }
};
struct Q5_0Groups {
  static constexpr bool kStreamHinted = true;
  using Pair = Q5_0RowGroupPair;
  static constexpr int kOffset = 16;
  static constexpr int kChains = 1;
  static constexpr bool kMinimum = false;
  static __m512i slice(const Pair& p, int h, int j) { return five_bits(p.codes[h], p.high[h], j); }
};
struct Q5_1Groups {
  static constexpr bool kStreamHinted = true;
  using Pair = Q5_1RowGroupPair;
  static constexpr int kOffset = 0;
  static constexpr int kChains = 1;
  static constexpr bool kMinimum = true;
  static __m512i slice(const Pair& p, int h, int j) { return five_bits(p.codes[h], p.high[h], j); }
};

// The accumulators of a group: chain c (block parity where there are two), lane l at acc[8 c + l];
// the minimums' sums.
struct Chains {
  __m512 acc[16];
  __m512 mins;
};

// Half h of a pair (one block of 16 rows) into chain `chain`'s eight lanes and the minimums.
template <typename L>
inline void block_step(const typename L::Pair& pair, int h, const ActQ8Block& x,
                       const BlockStarts& start, __m512* chain, __m512& mins) {
  const __m512 wd = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(pair.d[h])));
  const __m512 scale = _mm512_mul_ps(wd, _mm512_set1_ps(x.d));  // fl(d_w x d_x), row by row
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m512i first =
        L::kOffset == 0 ? _mm512_setzero_si512() : _mm512_set1_epi32(start.minus_offset[j]);
    const __m512i sum = _mm512_dpbusd_epi32(first, L::slice(pair, h, j), broadcast4(x.qs + 4 * j));
    chain[j] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(sum), chain[j]);
  }
  if constexpr (L::kMinimum) {
    const __m512 wm =
        _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(pair.m[h])));
    mins = _mm512_fmadd_ps(wm, _mm512_set1_ps(x.s), mins);
  }
}

// AVX2's hsum(chain 0 [+ chain 1]) [+ minimums] for the 16 rows at once.
template <typename L>
inline __m512 finish(const Chains& c) {
  __m512 v[8];
#pragma GCC unroll 8
  for (int l = 0; l < 8; ++l)
    v[l] = L::kChains == 2 ? _mm512_add_ps(c.acc[l], c.acc[8 + l]) : c.acc[l];
  const __m512 s0 = _mm512_add_ps(v[0], v[4]);
  const __m512 s1 = _mm512_add_ps(v[1], v[5]);
  const __m512 s2 = _mm512_add_ps(v[2], v[6]);
  const __m512 s3 = _mm512_add_ps(v[3], v[7]);
  const __m512 dot = _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));
  return L::kMinimum ? _mm512_add_ps(dot, c.mins) : dot;
}

template <typename L>
void decode(const void* groups, std::size_t n_groups, const ActQ8Block* x, std::size_t n_blocks,
            float* y) {
  using Pair = typename L::Pair;
  const auto* pairs = static_cast<const Pair*>(groups);
  const std::size_t n_pairs = (n_blocks + 1) / 2;
  // Rows longer than one pass keep every group's chains here between passes (operator new, not a
  // container: no inline library template is instantiated with this unit's AVX-512 flags).
  Chains* kept = nullptr;
  if (n_blocks > kChunk)
    kept = static_cast<Chains*>(::operator new (n_groups * sizeof(Chains), std::align_val_t{64}));
  alignas(64) BlockStarts starts[kChunk];
  for (std::size_t b0 = 0; b0 < n_blocks; b0 += kChunk) {
    const std::size_t n = std::min(kChunk, n_blocks - b0);
    const bool first = b0 == 0;
    const bool last = b0 + n == n_blocks;
    for (std::size_t b = 0; L::kOffset != 0 && b < n; ++b) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b0 + b].qs));
      const __m256i offset_sums = _mm256_dpbusd_epi32(
          _mm256_setzero_si256(), _mm256_set1_epi8(static_cast<char>(L::kOffset)), xv);
      _mm256_store_si256(reinterpret_cast<__m256i*>(starts[b].minus_offset),
                         _mm256_sub_epi32(_mm256_setzero_si256(), offset_sums));
    }
    for (std::size_t g = 0; g < n_groups; ++g) {
      const Pair* gp = pairs + g * n_pairs + b0 / 2;
      Chains c;
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        c.acc[i] = first ? _mm512_setzero_ps() : kept[g].acc[i];
      c.mins = first ? _mm512_setzero_ps() : kept[g].mins;
      for (std::size_t b = 0; b < n; b += 2) {
        const Pair& pair = gp[b / 2];
        const char* ahead = reinterpret_cast<const char*>(&pair) + kGroupStreamAheadBytes;
        if constexpr (L::kStreamHinted) {
          for (std::size_t line = 0; line < sizeof(Pair); line += 64)
            _mm_prefetch(ahead + line, _MM_HINT_T1);
        }
        block_step<L>(pair, 0, x[b0 + b], starts[b], c.acc, c.mins);
        if (b + 1 < n) {
          block_step<L>(pair, 1, x[b0 + b + 1], starts[b + 1], c.acc + 8 * (L::kChains - 1),
                        c.mins);
        }
      }
      if (last) {
        _mm512_storeu_ps(y + g * kRowGroupRows, finish<L>(c));
      } else {
        kept[g] = c;
      }
    }
  }
  if (kept != nullptr) ::operator delete (kept, std::align_val_t{64});
}

}  // namespace

RowGroupDecodeQ8 q4_0_row_group_decode_avx512() {
  return decode<Q4_0Groups>;
}

RowGroupDecodeQ8 q8_0_row_group_decode_avx512() {
  return decode<Q8_0Groups>;
}

RowGroupDecodeQ8 q4_1_row_group_decode_avx512() {
  return decode<Q4_1Groups>;
}

RowGroupDecodeQ8 q5_0_row_group_decode_avx512() {
  return decode<Q5_0Groups>;
}

RowGroupDecodeQ8 q5_1_row_group_decode_avx512() {
  return decode<Q5_1Groups>;
}

}  // namespace eredu::cpu::detail
