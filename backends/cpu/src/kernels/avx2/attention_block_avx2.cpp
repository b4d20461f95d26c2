// AVX2 attention for a block of up to 16 query rows that read the same KV head
// (VecOps::attention_block): the heads of one query group for one or more tokens (a prompt) or
// for one token (decode, short batches). Compiled with -mavx2 -mfma -mf16c
// (backends/cpu/CMakeLists.txt) and reached only through vec_ops_avx2().
//
// Why: one row at a time (attention_scores / attention_weighted_sum), every head of a query group
// reads its KV head's whole cache again and every score ends in a horizontal sum. With it the
// attention of one llama1b layer (query groups of 4 heads, F16 cache of 4096 positions, 2 threads)
// took 550-590 us to decode a token against 270-310 us here, and a 128-token prompt at depth 2048
// 33 ms against 17. This is the AVX-512 kernel (avx512/attention_block_avx512.cpp) at 8 lanes,
// with the same numerics:
//   - rows in lanes (prompts, and blocks whose rows see different positions): rows 0-7 and 8-15
//     in two registers; a score step is one multiply-add of a key element (broadcast) with the
//     rows' transposed queries, the softmax runs on 8 rows at once per register;
//   - keys in lanes (a block of at most 8 rows that all see the same positions: decode's heads of
//     one token): element d of 16 consecutive positions (8 for more than 4 rows) in two registers
//     (one), loaded from the keys' blocks of 16 (KeyLayout::kBlocks16, what the CPU backend's
//     cache holds for this table), one multiply-add per row (its query element broadcast). The
//     exponentials stay in the rows' own order (sr[r * ld + j]) and the weighted sum reads them
//     there, adding each row's sum as it goes: no transpose of keys or exponentials.
//
// Numerics, bit for bit those of the AVX-512 kernel (test_prompt_attention.cpp compares the two
// where both run): score s = sum_d q[d] k[d], one fused multiply-add per element in order
// d = 0, 1, ...; p_j = e^(s_j * scale - max_j(s_j * scale)) with the softmax's exp_nonpositive
// (simd_avx2.hpp, 0 below -87); sum = sum_j p_j in order j; out = (sum_j p_j v_j) * (1 / sum),
// the weighted sum in order j. One row's value depends neither on the other rows of its block nor
// on the thread count, so a token decoded alone gets the value it gets inside a prompt. A row's
// positions past its visible[r] get p = 0 exactly (their scores are -infinity before the softmax).
//
// Any head size: the last vector of a row that is not a multiple of 8 elements is read and
// written element by element, the lanes past it zero, so the sums above are the same
// multiply-adds.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../vec_ops.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

constexpr std::size_t kRows = kAttentionBlockRows;  // 16: s[j * 16 + r], the AVX-512 layout
constexpr std::size_t kLanes = 8;

constexpr std::size_t padded(std::size_t n) {
  return (n + kLanes - 1) / kLanes * kLanes;
}

// The 8 elements from `at` of F16 or F32 memory as floats.
template <bool kF16>
inline __m256 eight(const void* base, std::size_t at) {
  if constexpr (kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(
        reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(base) + at)));
  } else {
    return _mm256_loadu_ps(static_cast<const float*>(base) + at);
  }
}

inline __m256 eight_floats(const void* base, bool f16, std::size_t at) {
  return f16 ? eight<true>(base, at) : eight<false>(base, at);
}

inline float one_float(const void* base, bool f16, std::size_t at) {
  return f16 ? half_to_float(static_cast<const std::uint16_t*>(base)[at])
             : static_cast<const float*>(base)[at];
}

// 8 elements of cache row j (of b.k when it holds rows, or of b.v: `cache`) from element d, as
// floats, zeros past dim.
inline __m256 row_elements(const AttentionBlock& b, const void* cache, std::size_t j,
                           std::size_t d) {
  const std::size_t at = j * b.stride + d;
  if (b.dim - d >= kLanes) return eight_floats(cache, b.f16, at);
  alignas(32) float tail[kLanes] = {};
  for (std::size_t e = 0; e < b.dim - d; ++e)
    tail[e] = one_float(cache, b.f16, at + e);
  return _mm256_load_ps(tail);
}

// Writes the first dim - d (at most 8) lanes of v to out + d.
inline void store_row_elements(const AttentionBlock& b, float* out, std::size_t d, __m256 v) {
  if (b.dim - d >= kLanes) return _mm256_storeu_ps(out + d, v);
  alignas(32) float tail[kLanes];
  _mm256_store_ps(tail, v);
  for (std::size_t e = 0; e < b.dim - d; ++e)
    out[d + e] = tail[e];
}

// Keys in blocks of 16 positions: element 0 of position j, whose element d is d * 16 elements on.
inline std::size_t key_block_start(const AttentionBlock& b, std::size_t j) {
  return j / 16 * b.key_block_stride + j % 16;
}

// Element d of key j as a float, in either layout.
inline float key_element(const AttentionBlock& b, std::size_t j, std::size_t d) {
  const std::size_t at =
      b.key_block_stride != 0 ? key_block_start(b, j) + d * 16 : j * b.stride + d;
  return one_float(b.k, b.f16, at);
}

// ---- Rows in lanes --------------------------------------------------------------------------

// Scores of keys j0 .. j0 + kN - 1 for the rows in kH registers of 8 (qt: the transposed
// queries, qt[d * 16 + r]), into s[j * 16 + r]. keys: scratch for the kN keys as floats,
// element-major (keys[d * kN + i]). In blocks of 16 positions keys j0 .. j0 + kN - 1
// (j0 % kN == 0) are kN consecutive elements for each d.
template <std::size_t kN, std::size_t kH>
inline void score_keys(const AttentionBlock& b, const float* qt, std::size_t j0, float* keys,
                       float* s) {
  if (b.key_block_stride != 0 && kN == 8) {
    const std::size_t at = key_block_start(b, j0);
    for (std::size_t d = 0; d < b.dim; ++d)
      _mm256_store_ps(keys + d * 8, eight_floats(b.k, b.f16, at + d * 16));
  } else if (b.key_block_stride != 0 && kN == 4) {
    const std::size_t at = key_block_start(b, j0);
    for (std::size_t d = 0; d < b.dim; ++d) {
      const std::size_t e = at + d * 16;
      const __m128 four = b.f16 ? _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(
                                      static_cast<const std::uint16_t*>(b.k) + e)))
                                : _mm_loadu_ps(static_cast<const float*>(b.k) + e);
      _mm_store_ps(keys + d * 4, four);
    }
  } else {
    for (std::size_t i = 0; i < kN; ++i) {
      for (std::size_t d = 0; d < b.dim; ++d)
        keys[d * kN + i] = key_element(b, j0 + i, d);
    }
  }
  __m256 acc[kN][kH];
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kN; ++i) {
#pragma GCC unroll 2
    for (std::size_t h = 0; h < kH; ++h)
      acc[i][h] = _mm256_setzero_ps();
  }
  for (std::size_t d = 0; d < b.dim; ++d) {
    __m256 q[kH];
#pragma GCC unroll 2
    for (std::size_t h = 0; h < kH; ++h)
      q[h] = _mm256_load_ps(qt + d * kRows + h * kLanes);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kN; ++i) {
      const __m256 key = _mm256_broadcast_ss(keys + d * kN + i);
#pragma GCC unroll 2
      for (std::size_t h = 0; h < kH; ++h)
        acc[i][h] = _mm256_fmadd_ps(key, q[h], acc[i][h]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kN; ++i) {
#pragma GCC unroll 2
    for (std::size_t h = 0; h < kH; ++h)
      _mm256_store_ps(s + (j0 + i) * kRows + h * kLanes, acc[i][h]);
  }
}

// All keys' scores: 8 chains of multiply-adds per step (8 keys for one register of rows, 4 for
// two), the keys left one at a time.
template <std::size_t kH>
void score_all_keys(const AttentionBlock& b, const float* qt, std::size_t n_keys, float* keys,
                    float* s) {
  constexpr std::size_t kN = 8 / kH;
  std::size_t j = 0;
  for (; j + kN <= n_keys; j += kN)
    score_keys<kN, kH>(b, qt, j, keys, s);
  for (; j < n_keys; ++j)
    score_keys<1, kH>(b, qt, j, keys, s);
}

// The softmax of every row (lane) of kH registers at once, in place in s; 1 / sum per row into
// inv_sum. Positions a row does not see (visible[r] <= j: a prompt's later tokens) first become
// -infinity, so their p is 0 exactly.
template <std::size_t kH>
void softmax_lanes(const AttentionBlock& b, std::size_t fewest, std::size_t n_keys, float* s,
                   float* inv_sum) {
  alignas(32) std::int32_t visible[kRows] = {};
  for (std::size_t r = 0; r < b.n_rows; ++r)
    visible[r] = static_cast<std::int32_t>(b.visible[r]);
  for (std::size_t h = 0; h < kH; ++h) {
    const __m256i seen = _mm256_load_si256(reinterpret_cast<const __m256i*>(visible + h * kLanes));
    float* sh = s + h * kLanes;
    for (std::size_t j = fewest; j < n_keys; ++j) {
      // Hidden where visible[r] <= j, i.e. not visible[r] > j.
      const __m256 shown = _mm256_castsi256_ps(
          _mm256_cmpgt_epi32(seen, _mm256_set1_epi32(static_cast<std::int32_t>(j))));
      _mm256_store_ps(sh + j * kRows, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY),
                                                       _mm256_load_ps(sh + j * kRows), shown));
    }
    const __m256 scale = _mm256_set1_ps(b.scale);
    __m256 max = _mm256_set1_ps(-INFINITY);
    for (std::size_t j = 0; j < n_keys; ++j) {
      const __m256 v = _mm256_mul_ps(_mm256_load_ps(sh + j * kRows), scale);
      _mm256_store_ps(sh + j * kRows, v);
      max = _mm256_max_ps(max, v);
    }
    __m256 sum = _mm256_setzero_ps();
    for (std::size_t j = 0; j < n_keys; ++j) {
      const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_load_ps(sh + j * kRows), max));
      _mm256_store_ps(sh + j * kRows, e);
      sum = _mm256_add_ps(sum, e);
    }
    _mm256_store_ps(inv_sum + h * kLanes, _mm256_div_ps(_mm256_set1_ps(1.0F), sum));
  }
}

// ---- Keys in lanes --------------------------------------------------------------------------

// The scores of kR rows for kG * 8 keys whose element d is at keys + at + d * 16 (+ 8 for the
// second 8): one multiply-add per row and element, in order d.
template <std::size_t kR, std::size_t kG, bool kF16>
inline void step_scores(const AttentionBlock& b, const void* keys, std::size_t at,
                        __m256 (&acc)[kR][kG]) {
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r) {
#pragma GCC unroll 2
    for (std::size_t g = 0; g < kG; ++g)
      acc[r][g] = _mm256_setzero_ps();
  }
  const float* q[kR];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r)
    q[r] = b.q[r];
  const std::size_t dim = b.dim;
  for (std::size_t d = 0; d < dim; ++d) {
    __m256 k[kG];
#pragma GCC unroll 2
    for (std::size_t g = 0; g < kG; ++g)
      k[g] = eight<kF16>(keys, at + d * 16 + g * kLanes);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kR; ++r) {
      const __m256 qd = _mm256_broadcast_ss(q[r] + d);
#pragma GCC unroll 2
      for (std::size_t g = 0; g < kG; ++g)
        acc[r][g] = _mm256_fmadd_ps(qd, k[g], acc[r][g]);
    }
  }
}

// The scaled scores of kR rows that all see the n_keys positions, kG * 8 keys per step, into
// sr[r * ld + j] (ld: n_keys rounded up to 16), and each row's maximum into row_max.
// tmp (16 * dim floats) holds a step's keys, as a block of 16 F32 positions, where they cannot
// be read in place: keys in rows, and the last step when it runs past n_keys (zeros there, and
// those lanes left out of the maximum).
template <std::size_t kR, std::size_t kG>
void scores_few_rows(const AttentionBlock& b, std::size_t n_keys, std::size_t ld, float* sr,
                     float* tmp, float* row_max) {
  constexpr std::size_t kStep = kG * kLanes;
  const __m256 scale = _mm256_set1_ps(b.scale);
  const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  __m256 max[kR];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r)
    max[r] = _mm256_set1_ps(-INFINITY);
  for (std::size_t j0 = 0; j0 < n_keys; j0 += kStep) {
    const std::size_t n = std::min(kStep, n_keys - j0);
    const void* keys = b.k;
    bool f16 = b.f16;
    std::size_t at = 0;
    if (b.key_block_stride != 0 && n == kStep) {
      at = key_block_start(b, j0);  // kStep divides 16: the step lies in one block
    } else {
      for (std::size_t d = 0; d < b.dim; ++d) {
        for (std::size_t i = 0; i < kStep; ++i)
          tmp[d * 16 + i] = i < n ? key_element(b, j0 + i, d) : 0.0F;
      }
      keys = tmp;
      f16 = false;
    }
    __m256 acc[kR][kG];
    if (f16) {
      step_scores<kR, kG, true>(b, keys, at, acc);
    } else {
      step_scores<kR, kG, false>(b, keys, at, acc);
    }
#pragma GCC unroll 2
    for (std::size_t g = 0; g < kG; ++g) {
      // Lanes of positions past n_keys stay out of the maximum.
      const __m256 valid =
          _mm256_cmp_ps(lane,
                        _mm256_set1_ps(static_cast<float>(static_cast<std::ptrdiff_t>(n) -
                                                          static_cast<std::ptrdiff_t>(g * kLanes))),
                        _CMP_LT_OQ);
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kR; ++r) {
        const __m256 v = _mm256_mul_ps(acc[r][g], scale);
        _mm256_store_ps(sr + r * ld + j0 + g * kLanes, v);
        max[r] = _mm256_max_ps(max[r], _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v, valid));
      }
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(max[r]), _mm256_extractf128_ps(max[r], 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    row_max[r] = _mm_cvtss_f32(m);
  }
}

// The rows' exponentials in place in sr (ld floats per row, all lanes; those past n_keys are
// never read).
void exponentials_few_rows(std::size_t n_rows, std::size_t n_keys, std::size_t ld, float* sr,
                           const float* row_max) {
  for (std::size_t r = 0; r < n_rows; ++r) {
    const __m256 max = _mm256_set1_ps(row_max[r]);
    float* row = sr + r * ld;
    for (std::size_t j = 0; j < n_keys; j += kLanes)
      _mm256_store_ps(row + j, exp_nonpositive(_mm256_sub_ps(_mm256_load_ps(row + j), max)));
  }
}

// ---- The weighted sums ----------------------------------------------------------------------

// Where the exponentials p_j of the rows are: s[j * 16 + r] for rows in lanes, or
// sr[r * ld + j] for keys in lanes (kKeysInLanes).
struct Probabilities {
  const float* p;
  std::size_t ld;  // keys in lanes: floats per row
};

// Rows r0 .. r0 + kR - 1 of the weighted sum over keys j < n_keys, kV vectors of 8 dims from d0,
// scaled by 1 / sum and stored. kSum: the rows' sums are added here, in order j, and their
// reciprocals written to inv_sum (the pass from d0 = 0 of keys-in-lanes blocks); otherwise
// inv_sum holds them. kWhole: the kV vectors lie inside the row (read in place as kF16 says);
// otherwise one vector that runs past dim, read element by element.
template <std::size_t kR, std::size_t kV, bool kKeysInLanes, bool kSum, bool kF16, bool kWhole>
void weighted_rows(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                   std::size_t r0, std::size_t d0, float* inv_sum) {
  static_assert(kWhole || kV == 1);
  __m256 acc[kR][kV];
  float sum[kR] = {};
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r) {
#pragma GCC unroll 4
    for (std::size_t v = 0; v < kV; ++v)
      acc[r][v] = _mm256_setzero_ps();
  }
  const float* p[kR];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r)
    p[r] = pr.p + (r0 + r) * (kKeysInLanes ? pr.ld : 1);
  constexpr std::size_t key_stride = kKeysInLanes ? 1 : kRows;
  const std::size_t stride = b.stride;
  const void* values = b.v;
  for (std::size_t j = 0; j < n_keys; ++j) {
    __m256 vj[kV];
#pragma GCC unroll 4
    for (std::size_t v = 0; v < kV; ++v) {
      if constexpr (kWhole) {
        vj[v] = eight<kF16>(values, j * stride + d0 + kLanes * v);
      } else {
        vj[v] = row_elements(b, values, j, d0);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kR; ++r) {
      const float* pj = p[r] + j * key_stride;
      if constexpr (kSum) sum[r] += *pj;
      const __m256 w = _mm256_broadcast_ss(pj);
#pragma GCC unroll 4
      for (std::size_t v = 0; v < kV; ++v)
        acc[r][v] = _mm256_fmadd_ps(w, vj[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r) {
    if (r0 + r >= b.n_rows) break;
    if constexpr (kSum) inv_sum[r0 + r] = 1.0F / sum[r];
    const __m256 scale = _mm256_set1_ps(inv_sum[r0 + r]);
#pragma GCC unroll 4
    for (std::size_t v = 0; v < kV; ++v)
      store_row_elements(b, b.out[r0 + r], d0 + kLanes * v, _mm256_mul_ps(acc[r][v], scale));
  }
}

// kR rows from r0 of the weighted sums, 2 vectors (16 dims) per pass; the first pass adds the
// sums where the keys are in lanes.
template <std::size_t kR, bool kKeysInLanes, bool kF16>
void weighted_row_group(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                        std::size_t r0, float* inv_sum) {
  std::size_t d0 = 0;
  auto pass = [&]<std::size_t kV, bool kWhole>(std::integral_constant<std::size_t, kV>,
                                               std::bool_constant<kWhole>) {
    if (kKeysInLanes && d0 == 0) {
      weighted_rows<kR, kV, kKeysInLanes, true, kF16, kWhole>(b, pr, n_keys, r0, d0, inv_sum);
    } else {
      weighted_rows<kR, kV, kKeysInLanes, false, kF16, kWhole>(b, pr, n_keys, r0, d0, inv_sum);
    }
    d0 += kV * kLanes;
  };
  while (d0 + 2 * kLanes <= b.dim)
    pass(std::integral_constant<std::size_t, 2>{}, std::true_type{});
  if (d0 + kLanes <= b.dim) pass(std::integral_constant<std::size_t, 1>{}, std::true_type{});
  if (d0 < b.dim) pass(std::integral_constant<std::size_t, 1>{}, std::false_type{});
}

// The weighted sums of all rows: 4 rows x 2 vectors per pass (8 accumulators; the last pass only
// the rows left). Rows of one vector (head sizes up to 8) take 8 rows per pass, so that each cache
// row loaded serves 8 multiply-adds.
template <bool kKeysInLanes, bool kF16>
void weighted_sums_of(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                      float* inv_sum) {
  std::size_t r0 = 0;
  if (b.dim <= kLanes) {
    for (; r0 + 8 <= b.n_rows; r0 += 8)
      weighted_row_group<8, kKeysInLanes, kF16>(b, pr, n_keys, r0, inv_sum);
  }
  for (; r0 + 4 <= b.n_rows; r0 += 4)
    weighted_row_group<4, kKeysInLanes, kF16>(b, pr, n_keys, r0, inv_sum);
  switch (b.n_rows - r0) {
    case 3:
      return weighted_row_group<3, kKeysInLanes, kF16>(b, pr, n_keys, r0, inv_sum);
    case 2:
      return weighted_row_group<2, kKeysInLanes, kF16>(b, pr, n_keys, r0, inv_sum);
    case 1:
      return weighted_row_group<1, kKeysInLanes, kF16>(b, pr, n_keys, r0, inv_sum);
    default:
      return;
  }
}

template <bool kKeysInLanes>
void weighted_sums(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                   float* inv_sum) {
  if (b.f16) return weighted_sums_of<kKeysInLanes, true>(b, pr, n_keys, inv_sum);
  weighted_sums_of<kKeysInLanes, false>(b, pr, n_keys, inv_sum);
}

// A block of kR <= 8 rows that all see the same n_keys positions, keys in lanes (16 keys a step
// for up to 4 rows, 8 for more: 8 or fewer accumulators either way).
template <std::size_t kR>
void attend_few_rows(const AttentionBlock& b, std::size_t n_keys, float* sr, float* tmp) {
  const std::size_t ld = (n_keys + 15) / 16 * 16;
  alignas(32) float row_max[8];
  scores_few_rows<kR, (kR <= 4 ? 2 : 1)>(b, n_keys, ld, sr, tmp, row_max);
  exponentials_few_rows(kR, n_keys, ld, sr, row_max);
  alignas(32) float inv_sum[kRows];
  weighted_sums<true>(b, Probabilities{sr, ld}, n_keys, inv_sum);
}

}  // namespace

void attention_block_avx2(const AttentionBlock& b, float* scratch) {
  // scratch (attention_block_scratch's floats, 64-byte aligned here): scores [n_keys + 8][16],
  // transposed queries or a step's keys [dim][16], keys [8][dim rounded up to 16],
  // (few rows) scaled scores [8][n_keys rounded up to 16].
  float* s = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~63ULL);
  std::size_t n_keys = 0;
  std::size_t fewest = b.n_rows > 0 ? b.visible[0] : 0;
  for (std::size_t r = 0; r < b.n_rows; ++r) {
    n_keys = std::max(n_keys, b.visible[r]);
    fewest = std::min(fewest, b.visible[r]);
  }
  if (b.n_rows == 0) return;
  float* qt = s + (n_keys + 8) / 8 * 8 * kRows;
  float* keys = qt + b.dim * kRows;
  if (b.n_rows <= 8 && fewest == n_keys) {
    float* sr = keys + 8 * ((b.dim + 15) / 16 * 16);
    using FewRows = void (*)(const AttentionBlock&, std::size_t, float*, float*);
    static constexpr FewRows kFewRows[] = {
        attend_few_rows<1>, attend_few_rows<2>, attend_few_rows<3>, attend_few_rows<4>,
        attend_few_rows<5>, attend_few_rows<6>, attend_few_rows<7>, attend_few_rows<8>};
    return kFewRows[b.n_rows - 1](b, n_keys, sr, qt);
  }
  for (std::size_t d = 0; d < b.dim; ++d) {
    for (std::size_t r = 0; r < kRows; ++r)
      qt[d * kRows + r] = r < b.n_rows ? b.q[r][d] : 0.0F;
  }
  alignas(32) float inv_sum[kRows];
  if (b.n_rows <= kLanes) {
    score_all_keys<1>(b, qt, n_keys, keys, s);
    softmax_lanes<1>(b, fewest, n_keys, s, inv_sum);
  } else {
    score_all_keys<2>(b, qt, n_keys, keys, s);
    softmax_lanes<2>(b, fewest, n_keys, s, inv_sum);
  }
  weighted_sums<false>(b, Probabilities{s, 0}, n_keys, inv_sum);
}

}  // namespace eredu::cpu::detail
