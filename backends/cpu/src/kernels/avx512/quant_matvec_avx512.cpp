// AVX-512 one-token products of Q4_0 / Q8_0 weight rows with one activation row (decode), with
// the values of the AVX-512 row dots (quant_avx512.cpp) bit for bit, and so of the AVX2 table's.
// Q4_1 / Q5_0 / Q5_1 have theirs in quant_matvec_row_pairs_avx512.cpp.
// The weights a load binds are read from their row groups instead (block32_row_groups_avx512.cpp,
// the same values); this product reads their last rows % 16 and weights without groups.
//
// Why a second kernel for the same values: a decode product reads each weight once, so whatever a
// row dot spends per block is spent on every weight of the model. The row dot also prepares, for
// every row again, what depends only on the activations: their codes laid out against the
// weights, the share of the code offset (offset x sum of four activations) and the block scales
// gathered for the pair's two halves. llama1b Q4_0 at 2 threads streamed ~26 GB/s of a measured
// ~36, and its 2048 x 8192 product ran no faster from cache than from memory. Here a call lays the
// activations out once for all its rows (a work item of several hundred rows), so a pair of
// blocks costs its weight loads, one vpdpbusd, one conversion and the scale product with its
// multiply-add.
//
// Rows go four at a time: the activation loads serve four rows and four accumulator chains run
// side by side, and the weights are hinted into L2 as one stream at least a group of rows and
// kGroupStreamAheadBytes ahead of use. One row at a time, hinted 4 KiB ahead into L1, llama1b
// decode on a Zen 4 guest (2 threads, medians of interleaved rounds) ran Q4_0 at 41 and Q8_0 at
// 21 tokens/s, with the 576 x 1536 Q4_0 product at 14.5 GB/s from L2 on one thread (17.5 now);
// four rows without a hint ran at 20 and 16, four rows hinted into L1 one group ahead at 40 and
// 24, and hinted as here at 47 and 29.
//
// Q4_0 rows take four pairs at a time (Q4_0Pairs::quad_step): on a Zen 5 guest the float steps,
// not the codes, bounded the pair loop (576 x 1536 from L2 on one thread: 33 GB/s; 47 with the
// weight scale conversion and product left out, 54 with every float step left out). Converting a
// pair's two scales took a 512-bit conversion and product per pair; eight at once in 256 bits,
// then a lane permute per pair, took the product to 42 GB/s (2048 x 8192: 34 -> 41). Decode from
// memory gained 1-3% (llama1b at 2 threads, interleaved), as that stream is near the bandwidth.
//
// The values: per pair of blocks (b even, b + 1), the same exact int32 sums of four products (lane
// l of block b: elements 4l .. 4l + 3), converted, multiplied by the same scale products
// fl(d_w * d_x) and added by the same fused multiply-adds into chain 0 (even blocks) and chain 1
// (odd blocks), then the chains' sum and the same horizontal sum. Only the lanes sit elsewhere in
// the register for Q4_0 (see Q4_0Pairs), and the epilogue puts them back before the sums.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// One pair of activation blocks as the pair loop reads them (64-byte aligned).
struct alignas(64) PairActivations {
  std::int8_t codes[64];       // the activation codes, in the weight codes' lane order
  std::int32_t minus_off[16];  // -(offset x sum of the four activations of each int32 lane)
  float d[16];                 // each lane's activation block scale
};
static_assert(sizeof(PairActivations) == 192);

inline __m128i load128(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
inline __m512i load512(const void* p) {
  return _mm512_loadu_si512(p);
}
inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// The permutes of Q4_0Pairs::quad_step: each pair's codes, twice (the upper half is shifted down a
// nibble), as 16-bit words of the load(s) it spans; the eight scales' words; each pair's two scale
// products spread over its lanes (kSecondBlockHalves).
struct Q4_0QuadIndices {
  alignas(64) std::int16_t code_words[4][32];
  alignas(64) std::int16_t scale_words[32];
  alignas(64) std::int32_t scale_lanes[4][16];
};
constexpr Q4_0QuadIndices kQ4_0Quad = [] {
  Q4_0QuadIndices t{};
  constexpr int kFirstWord[4] = {0, 18, 36 - 32, 54 - 32};  // pair p's first word in its load
  for (int p = 0; p < 4; ++p) {
    for (int i = 0; i < 32; ++i) {
      const int field = (i % 16) / 8;  // 0: qs of block 2p, 1: of block 2p + 1
      t.code_words[p][i] = static_cast<std::int16_t>(kFirstWord[p] + 1 + 9 * field + i % 8);
    }
    for (int l = 0; l < 16; ++l)
      t.scale_lanes[p][l] = 2 * p + (l % 8) / 4;
  }
  for (int k = 0; k < 8; ++k)
    t.scale_words[k] = static_cast<std::int16_t>(9 * k);
  return t;
}();

// Q4_0: the two blocks' packed bytes side by side, then the low nibbles (elements 0..15) and the
// high nibbles (16..31): 128-bit lanes [b lo, b+1 lo, b hi, b+1 hi]. int32 lane j holds block b's
// lane j (j < 4) or j - 4 (8 <= j < 12), block b+1's lane j - 4 (4 <= j < 8) or j - 8 (j >= 12).
struct Q4_0Pairs {
  using Block = enc::BlockQ4_0;
  static constexpr int kOffset = 8;
  static constexpr __mmask16 kSecondBlockHalves = 0xF0F0;  // the 16-bit lanes of block b + 1
  static __m512i codes(const Block* w) {
    const __m256i ab =
        _mm256_inserti128_si256(_mm256_castsi128_si256(load128(w[0].qs)), load128(w[1].qs), 1);
    const __m512i both =
        _mm512_inserti64x4(_mm512_castsi256_si512(ab), _mm256_srli_epi16(ab, 4), 1);
    return _mm512_and_si512(both, _mm512_set1_epi8(0x0F));
  }
  // Four pairs (eight blocks, 144 bytes) of one row: the pair steps in order, as pair_step takes
  // them, but the eight weight scales are converted and multiplied by the activation scales
  // (xd[0..7]) at once, eight lanes in one go, and each pair broadcasts its two products into its
  // lanes. The bytes come in three loads and each pair's codes (and the scales) are gathered from
  // them by 16-bit permutes: every field starts on an even byte.
  static __m512 quad_step(const Block* w, const PairActivations* xp, const float* xd, __m512 acc) {
    const auto* bytes = reinterpret_cast<const std::byte*>(w);
    const __m512i a = _mm512_loadu_si512(bytes);                      // words 0..31
    const __m512i b = _mm512_loadu_si512(bytes + 64);                 // words 32..63
    const __m512i c = _mm512_maskz_loadu_epi16(0x00FF, bytes + 128);  // words 64..71
    // Pair p starts at word 18p: d0, qs0 (8 words), d1, qs1 (8 words).
    const __m512i scales8 = _mm512_permutex2var_epi16(a, load512(kQ4_0Quad.scale_words), b);
    const __m256 products =
        _mm256_mul_ps(_mm256_cvtph_ps(_mm512_castsi512_si128(scales8)), _mm256_loadu_ps(xd));
    const __m512 products16 = _mm512_castps256_ps512(products);
    const __m512i code_words[4] = {
        _mm512_permutexvar_epi16(load512(kQ4_0Quad.code_words[0]), a),
        _mm512_permutex2var_epi16(a, load512(kQ4_0Quad.code_words[1]), b),
        _mm512_permutexvar_epi16(load512(kQ4_0Quad.code_words[2]), b),
        _mm512_permutex2var_epi16(b, load512(kQ4_0Quad.code_words[3]), c),
    };
    for (int p = 0; p < 4; ++p) {
      const __m512i codes =
          _mm512_and_si512(_mm512_mask_srli_epi16(code_words[p], 0xFFFF0000u, code_words[p], 4),
                           _mm512_set1_epi8(0x0F));
      const __m512i sums = _mm512_dpbusd_epi32(_mm512_load_si512(xp[p].minus_off), codes,
                                               _mm512_load_si512(xp[p].codes));
      const __m512 scales = _mm512_permutexvar_ps(load512(kQ4_0Quad.scale_lanes[p]), products16);
      acc = _mm512_fmadd_ps(scales, _mm512_cvtepi32_ps(sums), acc);
    }
    return acc;
  }
  // One block in element order.
  static __m256i block_codes(const Block& b) { return nibbles_to_bytes(b.qs); }
  // The activations in the same order as codes().
  static __m512i act_codes(const ActQ8Block& x0, const ActQ8Block& x1) {
    const __m256i lo =
        _mm256_inserti128_si256(_mm256_castsi128_si256(load128(x0.qs)), load128(x1.qs), 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(x0.qs + 16)),
                                               load128(x1.qs + 16), 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
  // Back to [chain 0 lanes 0..7, chain 1 lanes 0..7].
  static __m512 chains(__m512 acc) {
    return _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15), acc);
  }
};

// Q8_0: block b in the low 256 bits, b + 1 in the high, codes + 128 (the sign bit flipped).
struct Q8_0Pairs {
  using Block = enc::BlockQ8_0;
  static constexpr int kOffset = 128;
  static constexpr __mmask16 kSecondBlockHalves = 0xFF00;
  static __m512i codes(const Block* w) {
    const __m512i ab =
        _mm512_inserti64x4(_mm512_castsi256_si512(load256(w[0].qs)), load256(w[1].qs), 1);
    return _mm512_xor_si512(ab, _mm512_set1_epi8(static_cast<char>(0x80)));
  }
  static __m256i block_codes(const Block& b) {
    return _mm256_xor_si256(load256(b.qs), _mm256_set1_epi8(static_cast<char>(0x80)));
  }
  static __m512i act_codes(const ActQ8Block& x0, const ActQ8Block& x1) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(load256(x0.qs)), load256(x1.qs), 1);
  }
  static __m512 chains(__m512 acc) { return acc; }
};

template <typename F>
void prepare(const ActQ8Block* x, std::size_t n_pairs, PairActivations* out) {
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(F::kOffset));
  for (std::size_t p = 0; p < n_pairs; ++p) {
    const ActQ8Block& x0 = x[2 * p];
    const ActQ8Block& x1 = x[2 * p + 1];
    const __m512i codes = F::act_codes(x0, x1);
    _mm512_store_si512(out[p].codes, codes);
    _mm512_store_si512(
        out[p].minus_off,
        _mm512_sub_epi32(_mm512_setzero_si512(),
                         _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, codes)));
    _mm512_store_ps(out[p].d, _mm512_mask_blend_ps(F::kSecondBlockHalves, _mm512_set1_ps(x0.d),
                                                   _mm512_set1_ps(x1.d)));
  }
}

// The pair step of one row: its exact int32 sums, converted, times the scale products, added into
// the row's accumulator.
template <typename F>
inline __m512 pair_step(const typename F::Block* wb, const PairActivations& xp, __m512 acc) {
  const __m512i sums = _mm512_dpbusd_epi32(_mm512_load_si512(xp.minus_off), F::codes(wb),
                                           _mm512_load_si512(xp.codes));
  // The two weight scales, each in its block's lanes.
  const __m256i wd = _mm256_mask_set1_epi16(_mm256_set1_epi16(static_cast<short>(wb[0].d)),
                                            F::kSecondBlockHalves, static_cast<short>(wb[1].d));
  const __m512 scales = _mm512_mul_ps(_mm512_cvtph_ps(wd), _mm512_load_ps(xp.d));
  return _mm512_fmadd_ps(scales, _mm512_cvtepi32_ps(sums), acc);
}

// The row's value from its pair accumulator: the last, odd block, then the sums.
template <typename F>
float finish(__m512 acc, const typename F::Block* w, const ActQ8Block* x, std::size_t n_blocks) {
  acc = F::chains(acc);
  if (n_blocks % 2 != 0) {  // a last, even block: chain 0 (lanes 0..7), as the row dot adds it
    const std::size_t b = n_blocks - 1;
    const __m256i xv = load256(x[b].qs);
    const __m256i raw = _mm256_dpbusd_epi32(_mm256_setzero_si256(), F::block_codes(w[b]), xv);
    const __m256i offset = _mm256_dpbusd_epi32(_mm256_setzero_si256(),
                                               _mm256_set1_epi8(static_cast<char>(F::kOffset)), xv);
    const __m256 dot = _mm256_cvtepi32_ps(_mm256_sub_epi32(raw, offset));
    const __m512 scale = _mm512_set1_ps(half_to_float(w[b].d) * x[b].d);
    acc = _mm512_mask3_fmadd_ps(scale, _mm512_zextps256_ps512(dot), acc, 0x00FF);
  }
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1)));
}

// kRows rows side by side: each row's steps are its own, in its own order (so each row's value is
// the one-row loop's), while the activation loads serve all of them and the rows' accumulator
// chains run in parallel.
template <typename F, std::size_t kRows>
void rows(const std::byte* w, std::size_t w_stride, const PairActivations* xp, const float* xd,
          const ActQ8Block* x, std::size_t n_blocks, float* y) {
  using Block = typename F::Block;
  const Block* wr[kRows];
  __m512 acc[kRows];
  for (std::size_t i = 0; i < kRows; ++i) {
    wr[i] = reinterpret_cast<const Block*>(w + i * w_stride);
    acc[i] = _mm512_setzero_ps();
  }
  const std::size_t n_pairs = n_blocks / 2;
  // Stream hints (read no value), kLines lines per pair: the rows' bytes taken as one stream that
  // advances as fast as the rows do, hinted at least a group of rows and kGroupStreamAheadBytes
  // ahead.
  constexpr std::size_t kPairBytes = 2 * sizeof(Block);
  constexpr std::size_t kLines = (kRows * kPairBytes + 63) / 64;
  const char* next =
      reinterpret_cast<const char*>(w) + std::max(kRows * w_stride, kGroupStreamAheadBytes);
  std::size_t p = 0;
  if constexpr (requires { F::quad_step(wr[0], xp, xd, acc[0]); }) {
    constexpr std::size_t kQuadLines = (4 * kRows * kPairBytes + 63) / 64;
    for (; p + 4 <= n_pairs; p += 4) {
      for (std::size_t l = 0; l < kQuadLines; ++l)
        _mm_prefetch(next + p * kRows * kPairBytes + 64 * l, _MM_HINT_T1);
      for (std::size_t i = 0; i < kRows; ++i)
        acc[i] = F::quad_step(wr[i] + 2 * p, xp + p, xd + 2 * p, acc[i]);
    }
  }
  for (; p < n_pairs; ++p) {
    for (std::size_t l = 0; l < kLines; ++l)
      _mm_prefetch(next + p * kRows * kPairBytes + 64 * l, _MM_HINT_T1);
    for (std::size_t i = 0; i < kRows; ++i)
      acc[i] = pair_step<F>(wr[i] + 2 * p, xp[p], acc[i]);
  }
  for (std::size_t i = 0; i < kRows; ++i)
    y[i] = finish<F>(acc[i], wr[i], x, n_blocks);
}

template <typename F>
void matvec(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
            std::size_t n_blocks, float* y, void* scratch) {
  constexpr std::size_t kRowGroup = 4;
  auto* xp = static_cast<PairActivations*>(scratch);
  prepare<F>(x, n_blocks / 2, xp);
  // The activation block scales in order, after the pairs, for quad_step (eight at a time).
  auto* xd = reinterpret_cast<float*>(xp + n_blocks / 2);
  if constexpr (requires { F::quad_step; }) {
    for (std::size_t b = 0; b < n_blocks; ++b)
      xd[b] = x[b].d;
  }
  const auto* base = static_cast<const std::byte*>(w);
  std::size_t r = 0;
  for (; r + kRowGroup <= m; r += kRowGroup)
    rows<F, kRowGroup>(base + r * w_stride, w_stride, xp, xd, x, n_blocks, y + r);
  for (; r < m; ++r)
    rows<F, 1>(base + r * w_stride, w_stride, xp, xd, x, n_blocks, y + r);
}

}  // namespace

QuantMatvec quant_matvec_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return matvec<Q4_0Pairs>;
    case DType::kQ8_0:
      return matvec<Q8_0Pairs>;
    case DType::kIQ4_NL:
      return quant_matvec_iq4_nl_avx512();
    default:
      return quant_matvec_row_pairs_avx512(dtype);  // Q4_1, Q5_0, Q5_1, or none
  }
}

}  // namespace eredu::cpu::detail
