// AVX-512 one-token products (decode) of Q3_K, Q4_K, Q5_K and Q6_K weight rows with one q8_K
// activation row, with the values of kquant_gemm (kquant_avx512.cpp), and so of
// reference::dot_q8_K, bit for bit: per 256-block the same exact int32 sums, then the same one or
// two fused multiply-adds into the row's one accumulator, the blocks in order.
//
// Why a kernel of its own: a decode product reads each weight once, so whatever the kernel spends
// per block is spent on every weight of the model. The row-at-a-time kernel of kquant_avx512.cpp
// unpacks 64 codes from 32 bytes (a load, a shift, an insert, a mask per pair of chunks) and keeps
// the scales in memory; on a Zen 4 guest it ran no faster from L2 than llama1b Q4_K_M decode
// streamed from memory. Here
//   - a 64-byte load gives 128 codes: its low nibbles are one vector, its high nibbles another.
//     For Q6_K those vectors hold elements in order. For Q4_K / Q5_K they hold chunks (4h, 4h + 2)
//     and (4h + 1, 4h + 3) of half h, so the call lays the activation codes out once in that order
//     for all its rows (the integer sums are exact: the order of their products cannot matter);
//   - the scales stay in registers;
//   - Q6_K's and Q3_K's code offset (32 or 4 x scale x each 16-element activation sum) is
//     subtracted inside the int32 accumulator (exact, as the definition's isum - msum), so a block
//     needs one horizontal sum, not two;
//   - Q3_K's third code bit is a byte test and a masked add. Before this kernel Q3_K decode took
//     the row kernel of kquant_avx512.cpp, whose scalar scale unpacking held it to 6.7 GB/s on one
//     Zen 5 thread (24 now) and llama1b Q3_K decode to 0.63x llama.cpp's (2.1x now);
//   - the activation scales are gathered once per call, so the float steps of four blocks read
//     them with one load;
//   - Q4_K / Q5_K / Q2_K rows go four at a time (min_rows): each row's chain of fused
//     multiply-adds is one lane of a 4-lane vector, so a block's float steps and horizontal sums
//     serve four rows, and the four rows' scale bytes unpack in one pass at 512 bits. Each row
//     still runs the definition's steps in its order; a short last group repeats its last row.
//     One thread, 2048 x 8192 from cache on a Zen 5 guest (eredu_bench_cpu_kernels
//     --benchmark_filter='Matvec/Q4_K/'): Q4_K 34 -> 50 GB/s, Q5_K 36 -> 49, Q2_K 22 -> 29; from
//     memory (16384 x 8192) Q4_K 33 -> 40, the thread's memory bandwidth. Q6_K, at 55 GB/s one
//     row at a time, ran no faster in groups and slower from memory, so it stays.
// K-quant and IQ4_XS weights the backend binds on this table are read from row groups instead
// (row_groups_avx512.cpp); this kernel takes their last rows % 16 and views without groups.
// Rows longer than kChunkBlocks blocks are taken a chunk of columns at a time for all the rows,
// each row's accumulator carried from one chunk to the next in y: the same steps in the same
// order.
#include <immintrin.h>

#include <algorithm>
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

// Activation blocks laid out per pass: 16 KiB of codes on the stack, rows of up to 16384 columns
// in one pass.
constexpr std::size_t kChunkBlocks = 64;

// The sub-block of 16 of pair sum i (0..31) of code vector k (0: low nibbles of half 0, 1: its
// high nibbles, 2, 3: half 1). Element order: vector k holds elements 64k .. 64k + 63. Nibble
// order: half h = k / 2 holds chunks 4h + (k % 2) (lanes 0-15) and 4h + 2 + (k % 2) (lanes 16-31).
constexpr int sub_block16(bool nibble_order, int k, int i) {
  return nibble_order ? 8 * (k / 2) + 2 * (k % 2) + 4 * (i / 16) + (i % 16) / 8 : 4 * k + i / 8;
}

// The int16 scale index of each pair sum in element order (Q6_K, Q3_K: a scale per 16).
struct alignas(64) ScaleIndex {
  std::int16_t lane[4][32];
};
constexpr ScaleIndex kElementOrder = [] {
  ScaleIndex s{};
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 32; ++i)
      s.lane[k][i] = static_cast<std::int16_t>(sub_block16(false, k, i));
  }
  return s;
}();

inline __m512i bytes_mask(int mask) {
  return _mm512_set1_epi8(static_cast<char>(mask));
}
// Per-half 16-bit shifts: left by lo / hi (non-negative), or right by -lo / -hi.
inline __m512i shift_halves(__m512i v, int lo, int hi) {
  if (lo >= 0 && hi >= 0) return _mm512_sllv_epi16(v, shifts(lo, hi));
  return _mm512_srlv_epi16(v, shifts(-lo, -hi));
}

// Per encoding: the block, the code order its vectors give, and codes(b, h, lo, hi): the 128
// codes of half h as two vectors of 64 (vector 2h and 2h + 1 of ScaleIndex), unsigned.
struct Q4KDecode {
  using Block = enc::BlockQ4_K;
  static constexpr bool kNibbleOrdered = true;
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i v = load512(b.qs + 64 * h);
    lo = _mm512_and_si512(v, bytes_mask(0x0F));
    hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), bytes_mask(0x0F));
  }
};

struct Q5KDecode {
  using Block = enc::BlockQ5_K;
  static constexpr bool kNibbleOrdered = true;
  // Bit c of qh[j] is the fifth bit of element j of chunk c: moved to bit 4 by a shift of 4 - c.
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i v = load512(b.qs + 64 * h);
    const __m512i qh = both_halves(load256(b.qh));
    const int c = 4 * h;  // chunks c, c + 2 (lo) and c + 1, c + 3 (hi)
    lo = and_or(v, _mm512_and_si512(shift_halves(qh, 4 - c, 2 - c), bytes_mask(0x10)),
                bytes_mask(0x0F));
    hi = and_or(_mm512_srli_epi16(v, 4),
                _mm512_and_si512(shift_halves(qh, 3 - c, 1 - c), bytes_mask(0x10)),
                bytes_mask(0x0F));
  }
};

struct Q6KDecode {
  using Block = enc::BlockQ6_K;
  static constexpr bool kNibbleOrdered = false;
  static constexpr int kOffsetShift = 5;  // codes are value + 32: the offset is 32 x scale
  static __m256i scales(const Block& b) { return q6k_scale_vector(b.scales); }
  // ql[64h + j]: low nibble element 128h + j, high nibble 128h + 64 + j; qh[32h + j] bits 2k,
  // 2k + 1: the top two bits of element 128h + 32k + j. Moved to bits 4, 5 by a shift of 4 - 2k.
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i ql = load512(b.ql + 64 * h);
    const __m512i qh = both_halves(load256(b.qh + 32 * h));
    lo = and_or(ql, _mm512_and_si512(shift_halves(qh, 4, 2), bytes_mask(0x30)), bytes_mask(0x0F));
    hi = and_or(_mm512_srli_epi16(ql, 4),
                _mm512_and_si512(shift_halves(qh, 0, -2), bytes_mask(0x30)), bytes_mask(0x0F));
  }
};

struct Q3KDecode {
  using Block = enc::BlockQ3_K;
  static constexpr bool kNibbleOrdered = false;
  static constexpr int kOffsetShift = 2;  // codes are value + 4: the offset is 4 x scale
  // Chunk c = 4h + k: bits 2k, 2k + 1 of qs[32h + j] are the low bits of element 32c + j, bit c of
  // hmask[j] its third bit. Vector 2h holds chunks 4h, 4h + 1, vector 2h + 1 chunks 4h + 2, 4h + 3.
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i q = both_halves(load256(b.qs + 32 * h));
    const __m512i hmask = both_halves(load256(b.hmask));
    auto chunk_pair = [&](int k) {
      const int c = 4 * h + k;
      const __m512i low =
          _mm512_and_si512(_mm512_srlv_epi16(q, shifts(2 * k, 2 * k + 2)), bytes_mask(3));
      const __mmask64 third =
          _mm512_test_epi8_mask(hmask, join(_mm256_set1_epi8(static_cast<char>(1 << c)),
                                            _mm256_set1_epi8(static_cast<char>(1 << (c + 1)))));
      return _mm512_mask_add_epi8(low, third, low, bytes_mask(4));
    };
    lo = chunk_pair(0);
    hi = chunk_pair(2);
  }
  static __m256i scales(const Block& b) { return q3k_scale_vector(b.scales); }
};

struct Q2KDecode {
  using Block = enc::BlockQ2_K;
  static constexpr bool kNibbleOrdered = false;
  // Chunk c = 4h + k: bits 2k, 2k + 1 of qs[32h + j] are element 32c + j. Vector 2h holds chunks
  // 4h, 4h + 1, vector 2h + 1 chunks 4h + 2, 4h + 3.
  static void codes(const Block& b, int h, __m512i& lo, __m512i& hi) {
    const __m512i q = both_halves(load256(b.qs + 32 * h));
    lo = _mm512_and_si512(_mm512_srlv_epi16(q, shifts(0, 2)), bytes_mask(3));
    hi = _mm512_and_si512(_mm512_srlv_epi16(q, shifts(4, 6)), bytes_mask(3));
  }
};

// What every row of a call reads of the activations, laid out once.
struct alignas(64) Prepared {
  std::int8_t codes[kChunkBlocks][enc::kQK_K];  // nibble order (Q4_K / Q5_K) or as stored
  float d[kChunkBlocks];
};

template <typename F>
void prepare(const enc::BlockQ8_K* x, std::size_t n, Prepared& p) {
  for (std::size_t b = 0; b < n; ++b) {
    p.d[b] = x[b].d;
    if constexpr (F::kNibbleOrdered) {
      const std::int8_t* s = x[b].qs;
      for (int h = 0; h < 2; ++h) {
        std::int8_t* out = p.codes[b] + 128 * h;
        _mm512_store_si512(out, join(load256(s + 128 * h), load256(s + 128 * h + 64)));
        _mm512_store_si512(out + 64, join(load256(s + 128 * h + 32), load256(s + 128 * h + 96)));
      }
    }
  }
}

// The integer part of one block: scale_s x (codes . activations) per sub-block, as 16 int32
// partial sums, starting from `init`; words[k] holds the int16 scale of each of code vector k's 32
// pair sums.
template <typename F>
inline __m512i block_sum_words(const typename F::Block& w, const std::int8_t* xcodes,
                               const __m512i (&words)[4], __m512i init) {
  __m512i acc = init;
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    __m512i lo;
    __m512i hi;
    F::codes(w, h, lo, hi);
    acc =
        _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(lo, load512(xcodes + 128 * h)), words[2 * h]);
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(hi, load512(xcodes + 128 * h + 64)),
                              words[2 * h + 1]);
  }
  return acc;
}

// The same from the block's 16 int16 scales (each sub-block of 16's) and the ScaleIndex vectors.
template <typename F>
inline __m512i block_sum(const typename F::Block& w, const std::int8_t* xcodes, __m256i scales16,
                         __m512i init, const __m512i (&index)[4]) {
  const __m512i scales = _mm512_castsi256_si512(scales16);
  const __m512i words[4] = {
      _mm512_permutexvar_epi16(index[0], scales), _mm512_permutexvar_epi16(index[1], scales),
      _mm512_permutexvar_epi16(index[2], scales), _mm512_permutexvar_epi16(index[3], scales)};
  return block_sum_words<F>(w, xcodes, words, init);
}

inline void hint_ahead(const void* block, std::size_t bytes) {
  const char* ahead = static_cast<const char*>(block) + kGroupStreamAheadBytes;
  for (std::size_t line = 0; line < bytes; line += 64)
    _mm_prefetch(ahead + line, _MM_HINT_T1);
}

// Four rows side by side, so that the definition's fused multiply-adds, one chain per row, run as
// one chain of 4-lane vectors (row r in lane r): per block, each row's exact int32 sums, their
// totals gathered into the rows' lanes (sum4), and the rows' scale products.
constexpr std::size_t kRows = 4;

// The group's rows, and the stream hints for them: the four rows advance together, so their
// bytes are hinted as one stream that advances by four blocks a step, at least a group of rows and
// kGroupStreamAheadBytes ahead (as the Q4_0 product does). Hinting each row's own block 8 KiB
// ahead made llama1b Q4_K_M decode slower than one row at a time (87 against 93 tokens/s).
template <typename Block>
struct RowGroup {
  const Block* w[kRows];
  const char* next;
  // `count` rows (1 .. kRows) from `rows`; a short group repeats its last row in the other lanes.
  RowGroup(const std::byte* rows, std::size_t w_stride, std::size_t count, std::size_t b0) {
    for (std::size_t r = 0; r < kRows; ++r)
      w[r] = reinterpret_cast<const Block*>(rows + std::min(r, count - 1) * w_stride) + b0;
    next = reinterpret_cast<const char*>(w[0]) + std::max(kRows * w_stride, kGroupStreamAheadBytes);
  }
  void hint(std::size_t b) const {
    constexpr std::size_t kStep = kRows * sizeof(Block);
    for (std::size_t line = 0; line < kStep; line += 64)
      _mm_prefetch(next + b * kStep + line, _MM_HINT_T1);
  }
};

// The four rows' d and dmin of block b as floats: [d0, dmin0, d1, dmin1, ...].
template <typename Block>
inline __m256 row_scales(const RowGroup<Block>& g, std::size_t b) {
  static_assert(offsetof(Block, dmin) == offsetof(Block, d) + 2);
  int v[kRows];
  for (std::size_t r = 0; r < kRows; ++r)
    std::memcpy(&v[r], &g.w[r][b].d, 4);  // d and dmin, two halves
  return _mm256_cvtph_ps(_mm_setr_epi32(v[0], v[1], v[2], v[3]));
}

// Scales of four rows at once, row r in 128-bit lane r: a scale byte vector and a minimum byte
// vector per block (GroupScales). Each row's scale words are then a byte shuffle of its lane (the
// high byte of every word zeroed) instead of a widening and a word permute per vector, and the
// four rows' minimum sums one shuffle, multiply-add and reduction per two rows.
struct alignas(64) GroupShuffles {
  std::int8_t words[4][64];  // code vector k: each int16 pair sum's scale byte, zero-extended
  std::int8_t mins[64];      // lanes [row a, row a, row b, row b]: bsums words 0-7 / 8-15's minimum
};
// Q4_K / Q5_K (nibble order, a scale per 32: sub16 / 2, minimums in bytes 8-15, each twice) or
// Q2_K (element order, a scale and a minimum per 16).
constexpr GroupShuffles group_shuffles(bool k4) {
  GroupShuffles t{};
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 32; ++i) {
      const int sub16 = sub_block16(k4, k, i);
      t.words[k][2 * i] = static_cast<std::int8_t>(k4 ? sub16 / 2 : sub16);
      t.words[k][2 * i + 1] = -128;
    }
  }
  for (int i = 0; i < 32; ++i) {  // word i of lane i / 8: bsums word 8 (lane % 2) + i % 8
    const int bsum_word = 8 * ((i / 8) % 2) + i % 8;
    t.mins[2 * i] = static_cast<std::int8_t>(k4 ? 8 + bsum_word / 2 : bsum_word);
    t.mins[2 * i + 1] = -128;
  }
  return t;
}

struct GroupScales {
  __m512i scales;
  __m512i mins;
};

template <typename Block>
inline __m512i group_load16(const RowGroup<Block>& g, std::size_t b) {
  auto load128 = [](const void* q) { return _mm_loadu_si128(static_cast<const __m128i*>(q)); };
  __m512i v = _mm512_castsi128_si512(load128(g.w[0][b].scales));
  v = _mm512_inserti32x4(v, load128(g.w[1][b].scales), 1);
  v = _mm512_inserti32x4(v, load128(g.w[2][b].scales), 2);
  return _mm512_inserti32x4(v, load128(g.w[3][b].scales), 3);
}

// Q4_K / Q5_K: k4_scale_vectors (kquant_scales.hpp) unpacks one block's 12 bytes into its 8 scales
// and 8 minimums with 128-bit steps that never cross a 128-bit lane, so the same steps at 512 bits
// unpack four rows' blocks: bytes 0-7 the scales, 8-15 the minimums.
template <typename Block>
inline GroupScales k4_group_scales(const RowGroup<Block>& g, std::size_t b) {
  const __m512i v = group_load16(g, b);
  auto lanes = [](__m128i x) { return _mm512_broadcast_i32x4(x); };
  const __m512i low_src = _mm512_shuffle_epi8(
      v, lanes(_mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11)));
  const __m512i top_src = _mm512_shuffle_epi8(
      v, lanes(_mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7)));
  const __m512i low =
      _mm512_and_si512(_mm512_srlv_epi32(low_src, lanes(_mm_setr_epi32(0, 0, 0, 4))),
                       lanes(_mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F)));
  const __m512i top = _mm512_and_si512(_mm512_srli_epi16(top_src, 2), _mm512_set1_epi8(0x30));
  const __m512i bytes = _mm512_or_si512(low, top);
  return {bytes, bytes};
}

// Q2_K: 16 bytes, a scale in each low nibble and a minimum in each high nibble.
inline GroupScales q2k_group_scales(const RowGroup<enc::BlockQ2_K>& g, std::size_t b) {
  const __m512i v = group_load16(g, b);
  return {_mm512_and_si512(v, _mm512_set1_epi8(0x0F)),
          _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F))};
}

// Row r's 16 bytes in every lane.
template <int kRow>
inline __m512i row_lane(__m512i bytes) {
  return _mm512_shuffle_i32x4(bytes, bytes, _MM_SHUFFLE(kRow, kRow, kRow, kRow));
}

// The encodings decoded four rows at a time (min_rows): their shuffles and scale unpacking.
template <typename F>
struct Group {
  static constexpr bool kUsed = false;
};
template <typename F>
struct K4Group {
  static constexpr bool kUsed = true;
  static constexpr GroupShuffles kShuffles = group_shuffles(true);
  static GroupScales scales(const RowGroup<typename F::Block>& g, std::size_t b) {
    return k4_group_scales(g, b);
  }
};
template <>
struct Group<Q4KDecode> : K4Group<Q4KDecode> {};
template <>
struct Group<Q5KDecode> : K4Group<Q5KDecode> {};
template <>
struct Group<Q2KDecode> {
  static constexpr bool kUsed = true;
  static constexpr GroupShuffles kShuffles = group_shuffles(false);
  static GroupScales scales(const RowGroup<enc::BlockQ2_K>& g, std::size_t b) {
    return q2k_group_scales(g, b);
  }
};

// The four rows' exact sums sum_j min_j x bsums[j] (min_j: the minimum of sub-block of 16 j), in
// lanes 0..3.
inline __m128i group_min_sums(__m512i mins, const enc::BlockQ8_K& x, __m512i shuffle) {
  const __m512i bsums = both_halves(load256(x.bsums));
  const __m512i rows01 = _mm512_madd_epi16(
      _mm512_shuffle_epi8(_mm512_shuffle_i32x4(mins, mins, _MM_SHUFFLE(1, 1, 0, 0)), shuffle),
      bsums);
  const __m512i rows23 = _mm512_madd_epi16(
      _mm512_shuffle_epi8(_mm512_shuffle_i32x4(mins, mins, _MM_SHUFFLE(3, 3, 2, 2)), shuffle),
      bsums);
  return totals(rows01, rows23);  // each already a pair form: [row a, row a, row b, row b]
}

template <typename F, int kRow>
inline __m512i group_row_sum(const RowGroup<typename F::Block>& g, std::size_t b, __m512i bytes,
                             const std::int8_t* xcodes, const __m512i (&shuffles)[4]) {
  const auto& wb = g.w[kRow][b];
  const __m512i lane = row_lane<kRow>(bytes);
  const __m512i words[4] = {
      _mm512_shuffle_epi8(lane, shuffles[0]), _mm512_shuffle_epi8(lane, shuffles[1]),
      _mm512_shuffle_epi8(lane, shuffles[2]), _mm512_shuffle_epi8(lane, shuffles[3])};
  return block_sum_words<F>(wb, xcodes, words, _mm512_setzero_si512());
}

// Q4_K / Q5_K / Q2_K: per block acc += (d x xd) x isum, then acc += -(dmin x xd) x msum.
template <typename F>
__m128 min_rows(const RowGroup<typename F::Block>& g, const enc::BlockQ8_K* x, const Prepared& p,
                std::size_t n, __m128 acc) {
  const __m128 negate = _mm_castsi128_ps(_mm_set1_epi32(INT32_MIN));
  __m512i shuffles[4];
  for (int k = 0; k < 4; ++k)
    shuffles[k] = _mm512_load_si512(Group<F>::kShuffles.words[k]);
  const __m512i min_shuffle = _mm512_load_si512(Group<F>::kShuffles.mins);
  for (std::size_t b = 0; b < n; ++b) {
    g.hint(b);
    const GroupScales s = Group<F>::scales(g, b);
    const std::int8_t* xcodes = F::kNibbleOrdered ? p.codes[b] : x[b].qs;
    const __m128i isums = sum4(group_row_sum<F, 0>(g, b, s.scales, xcodes, shuffles),
                               group_row_sum<F, 1>(g, b, s.scales, xcodes, shuffles),
                               group_row_sum<F, 2>(g, b, s.scales, xcodes, shuffles),
                               group_row_sum<F, 3>(g, b, s.scales, xcodes, shuffles));
    const __m128 is = _mm_cvtepi32_ps(isums);
    const __m128 ms = _mm_cvtepi32_ps(group_min_sums(s.mins, x[b], min_shuffle));
    // [d0 xd, dmin0 xd, d1 xd, ...] -> [d0 xd .. d3 xd | dmin0 xd .. dmin3 xd]
    const __m256 products =
        _mm256_permutevar8x32_ps(_mm256_mul_ps(row_scales(g, b), _mm256_set1_ps(p.d[b])),
                                 _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    acc = _mm_fmadd_ps(_mm256_castps256_ps128(products), is, acc);
    acc = _mm_fmadd_ps(_mm_xor_ps(_mm256_extractf128_ps(products, 1), negate), ms, acc);
  }
  return acc;
}

// Q6_K / Q3_K: per block acc += (d x xd) x (isum - msum), msum = sum_s offset x scale_s bsum_s
// (offset 32 or 4).
template <typename F>
float offset_row(const typename F::Block* w, const enc::BlockQ8_K* x, const Prepared& p,
                 std::size_t n, float acc, const __m512i (&index)[4]) {
  auto block = [&](std::size_t b) {
    hint_ahead(&w[b], sizeof(w[b]));
    const __m256i scales = F::scales(w[b]);
    const __m256i minus_offsets =
        _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(scales, F::kOffsetShift));
    const __m512i init =
        _mm512_zextsi256_si512(_mm256_madd_epi16(minus_offsets, load256(x[b].bsums)));
    return block_sum<F>(w[b], x[b].qs, scales, init, index);
  };
  return one_scale_blocks(w, p.d, n, acc, block);
}

template <typename F>
void decode(const void* w, std::size_t w_stride, std::size_t m, const enc::BlockQ8_K* x,
            std::size_t n_super, float* y) {
  using Block = typename F::Block;
  Prepared p;
  const auto* rows = static_cast<const std::byte*>(w);
  for (std::size_t b0 = 0; b0 < n_super; b0 += kChunkBlocks) {
    const std::size_t n = std::min(kChunkBlocks, n_super - b0);
    prepare<F>(x + b0, n, p);
    if constexpr (Group<F>::kUsed) {
      for (std::size_t r = 0; r < m; r += kRows) {
        const std::size_t count = std::min(kRows, m - r);
        const RowGroup<Block> g(rows + r * w_stride, w_stride, count, b0);
        alignas(16) float acc[kRows] = {};
        if (b0 != 0) std::copy(y + r, y + r + count, acc);
        _mm_store_ps(acc, min_rows<F>(g, x + b0, p, n, _mm_load_ps(acc)));
        std::copy(acc, acc + count, y + r);
      }
    } else {
      __m512i index[4];
      for (int k = 0; k < 4; ++k)
        index[k] = _mm512_load_si512(kElementOrder.lane[k]);
      for (std::size_t r = 0; r < m; ++r) {
        const auto* wr = reinterpret_cast<const Block*>(rows + r * w_stride) + b0;
        y[r] = offset_row<F>(wr, x + b0, p, n, b0 == 0 ? 0.0F : y[r], index);
      }
    }
  }
}

}  // namespace

void kquant_decode_q2k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q2KDecode>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q3k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q3KDecode>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q4k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q4KDecode>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q5k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q5KDecode>(w, w_stride, m, x, n_super, y);
}
void kquant_decode_q6k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const enc::BlockQ8_K* x, std::size_t n_super, float* y) {
  decode<Q6KDecode>(w, w_stride, m, x, n_super, y);
}

}  // namespace eredu::cpu::detail
