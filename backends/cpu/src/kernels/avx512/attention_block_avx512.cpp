// AVX-512 attention for a block of up to 16 query rows that read the same KV head
// (VecOps::attention_block): the heads of one query group for one or more tokens (a prompt) or
// for one token (decode, short batches). Compiled with the AVX-512 flags
// (backends/cpu/CMakeLists.txt) and reached only through vec_ops_avx512().
//
// Why: one row at a time (attention_scores / attention_weighted_sum), every score is a dot product
// with its own horizontal sum and every row reads the whole cache of its KV head again, so at a
// depth of 4096 a 128-token prompt of smol135m ran at 0.93x llama.cpp (2.9x with an empty cache).
// Here the 16 rows sit in the 16 lanes of a register: a score step is one multiply-add of a
// cache element (broadcast) with the rows' transposed queries, the softmax runs on 16 rows at
// once, and each cache row is read once per block instead of once per row. A block of at most 8
// rows that all see the same positions (decode: one token's heads, attention.cpp) puts the keys in
// the lanes instead (attend_few_rows), with the same values.
//
// Numerics (tested against the float64 reference within the op-parity bounds): score
// s = sum_d q[d] k[d], one fused multiply-add per element in order d = 0, 1, ...; then
// p_j = e^(s_j * scale - max_j(s_j * scale)) with the vectorized exp of the AVX2 softmax (within
// about one ulp; 0 below -87), the sum of p_j in order j; out = (sum_j p_j v_j) * (1 / sum), the
// weighted sum in order j. One row's value does not depend on the other rows of its block, nor on
// the thread count. A row's positions past its visible[r] get p = 0 exactly (their scores are set
// to -infinity before the softmax).
//
// Keys in blocks of 16 positions (KeyLayout::kBlocks16, what the CPU backend's cache holds for
// this table; AttentionBlock::key_block_stride != 0): element d of 16 consecutive keys is one
// load, so the keys-in-lanes path needs no transpose of 16 key rows per 16 elements (its
// multiply-adds are the same, in the same order), and the rows-in-lanes path reads 8 keys'
// element d as one load where it read 8 rows. Same values as keys in rows, bit for bit
// (test_attention_key_layouts.cpp). A standalone timing of attend_few_rows with 4 rows, 4096 F16
// keys of 64 elements, one thread: scores and softmax 54 us from rows, 29 us from blocks.
//
// Any head size: the last vector of a row that is not a multiple of 16 elements is read and
// written through a lane mask (lanes_from), its other lanes zero, so the sums above are the same
// multiply-adds. Before, head sizes other than multiples of 16 took the one-row path: stories260K
// (head size 8) spent a quarter of a 128-token prompt in it.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../vec_ops.hpp"
#include "transpose_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

constexpr std::size_t kLanes = kAttentionBlockRows;  // 16: one row per float lane
constexpr std::size_t kKeys = 8;                     // keys per score step: 8 independent chains

// dim rounded up to whole 16-lane vectors.
constexpr std::size_t padded(std::size_t dim) {
  return (dim + 15) / 16 * 16;
}

// e^x for x <= 0 within about one ulp, 0 below -87: the AVX2 softmax's exp_nonpositive
// (avx2/vec_avx2.cpp) at 16 lanes, the same steps.
inline __m512 exp_nonpositive(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341F)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375F), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440054690583e-4F), r);
  __m512 p = _mm512_set1_ps(1.0F / 5040.0F);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0F / 720.0F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0F / 120.0F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0F / 24.0F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0F / 6.0F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0F));
  const __mmask16 finite = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0F), _CMP_GE_OQ);
  const __m512i two_n = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_maskz_mov_ps(finite, n)), _mm512_set1_epi32(127)),
      23);
  return _mm512_maskz_mul_ps(finite, p, _mm512_castsi512_ps(two_n));
}

// The lanes of the 16 elements from d that a row of dim elements has (all 16 but at its end):
// head sizes that are not multiples of 16 (stories260K's 8) read and write only their own
// elements, and the lanes past them hold zeros.
inline __mmask16 lanes_from(std::size_t d, std::size_t dim) {
  return dim - d >= 16 ? static_cast<__mmask16>(0xFFFF)
                       : static_cast<__mmask16>((1U << (dim - d)) - 1U);
}

// 16 elements of cache row j (of b.k or b.v: `cache`) from element d, as floats (zeros past dim).
inline __m512 row_elements(const AttentionBlock& b, const void* cache, std::size_t j,
                           std::size_t d) {
  const __mmask16 lanes = lanes_from(d, b.dim);
  if (b.f16) {
    const auto* row = static_cast<const std::uint16_t*>(cache) + j * b.stride;
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes, row + d));
  }
  return _mm512_maskz_loadu_ps(lanes, static_cast<const float*>(cache) + j * b.stride + d);
}

// Cache row j of the block's KV head as floats: dim elements into `out` (room for dim rounded up
// to 16; the lanes past dim hold zeros).
inline void load_row(const AttentionBlock& b, std::size_t j, float* out) {
  for (std::size_t d = 0; d < b.dim; d += 16)
    _mm512_store_ps(out + d, row_elements(b, b.k, j, d));
}

// Keys in blocks of 16 positions (b.key_block_stride != 0): element 0 of position j, whose element
// d is d * 16 elements on.
inline std::size_t key_block_start(const AttentionBlock& b, std::size_t j) {
  return j / 16 * b.key_block_stride + j % 16;
}

// Element d of the `lanes` positions from j0 (j0 % 16 == 0, so one block) as floats, zeros in the
// other lanes.
inline __m512 key_lanes(const AttentionBlock& b, std::size_t j0, std::size_t d, __mmask16 lanes) {
  const std::size_t at = key_block_start(b, j0) + d * 16;
  if (b.f16) {
    return _mm512_cvtph_ps(
        _mm256_maskz_loadu_epi16(lanes, static_cast<const std::uint16_t*>(b.k) + at));
  }
  return _mm512_maskz_loadu_ps(lanes, static_cast<const float*>(b.k) + at);
}

// Scores of keys j0 .. j0 + kN - 1 for the 16 rows (qt: the transposed queries, qt[d * 16 + r]),
// into s[j * 16 + r]. keys: the kN keys as floats, rows of dim (keys[i * ld + d]) where the cache
// holds rows, or element-major (keys[d * kN + i]) where it holds blocks of 16 positions: there
// keys j0 .. j0 + 7 (j0 % 8 == 0) are 8 consecutive elements for each d. The same multiply-adds
// either way.
template <std::size_t kN, bool kBlocks>
inline void score_keys(const AttentionBlock& b, const float* qt, std::size_t j0, float* keys,
                       float* s) {
  const std::size_t ld = padded(b.dim);
  if constexpr (!kBlocks) {
    for (std::size_t i = 0; i < kN; ++i)
      load_row(b, j0 + i, keys + i * ld);
  } else if constexpr (kN == 8) {
    const std::size_t at = key_block_start(b, j0);
    for (std::size_t d = 0; d < b.dim; ++d) {
      const std::size_t e = at + d * 16;
      const __m256 eight = b.f16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                       static_cast<const std::uint16_t*>(b.k) + e)))
                                 : _mm256_loadu_ps(static_cast<const float*>(b.k) + e);
      _mm256_store_ps(keys + d * 8, eight);
    }
  } else {
    static_assert(kN == 1, "blocks are read 8 keys or one key at a time");
    const std::size_t at = key_block_start(b, j0);
    for (std::size_t d = 0; d < b.dim; ++d) {
      keys[d] = b.f16 ? _cvtsh_ss(static_cast<const std::uint16_t*>(b.k)[at + d * 16])
                      : static_cast<const float*>(b.k)[at + d * 16];
    }
  }
  __m512 acc[kN];
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kN; ++i)
    acc[i] = _mm512_setzero_ps();
  for (std::size_t d = 0; d < b.dim; ++d) {
    const __m512 q = _mm512_load_ps(qt + d * kLanes);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kN; ++i) {
      const float key = kBlocks ? keys[d * kN + i] : keys[i * ld + d];
      acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(key), q, acc[i]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kN; ++i)
    _mm512_store_ps(s + (j0 + i) * kLanes, acc[i]);
}

// All keys' scores for the 16 rows, 8 keys at a time.
template <bool kBlocks>
void score_all_keys(const AttentionBlock& b, const float* qt, std::size_t n_keys, float* keys,
                    float* s) {
  std::size_t j = 0;
  for (; j + kKeys <= n_keys; j += kKeys)
    score_keys<kKeys, kBlocks>(b, qt, j, keys, s);
  for (; j < n_keys; ++j)
    score_keys<1, kBlocks>(b, qt, j, keys, s);
}

// The scaled scores of a block of kR <= 8 rows that all see the same n_keys positions (decode:
// one token's heads) and their exponentials, into sr[r * ld + j] (ld: n_keys rounded up to 16),
// with the values of the general path below, bit for bit. There the rows sit in the 16 lanes, so
// with a few rows most of every score step and every exponential is spent on empty lanes. Here
// the keys sit in the lanes: element d of 16 keys is one load from their block (or, where keys
// are rows, 16 rows transposed 16 elements at a time), and each element is one multiply-add per
// row (the row's query element broadcast) for all 16 keys -- the same fused multiply-adds in the
// same order d = 0, 1, ... as score_keys -- then each row's maximum (exact in any order), and the
// exponentials 16 keys of a row at a time. The weighted sum reads them in the rows' order and adds
// each row's sum in order j, as the general path does per lane. (Before, a transpose put the
// exponentials in the general path's layout: a tenth of a decode block's time.)
template <std::size_t kR>
void attend_few_rows(const AttentionBlock& b, std::size_t n_keys, float* sr) {
  const std::size_t ld = (n_keys + 15) / 16 * 16;  // sr[r * ld + j]
  const __m512 scale = _mm512_set1_ps(b.scale);
  __m512 max[kR];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r)
    max[r] = _mm512_set1_ps(-INFINITY);
  for (std::size_t j0 = 0; j0 < n_keys; j0 += 16) {
    const std::size_t n = std::min<std::size_t>(16, n_keys - j0);
    const __mmask16 valid = static_cast<__mmask16>((1U << n) - 1U);
    __m512 acc[kR];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kR; ++r)
      acc[r] = _mm512_setzero_ps();
    if (b.key_block_stride != 0) {
      // Blocks of 16 positions: element d of the 16 keys is one load, in order d as below.
      for (std::size_t d = 0; d < b.dim; ++d) {
        const __m512 k = key_lanes(b, j0, d, valid);
#pragma GCC unroll 8
        for (std::size_t r = 0; r < kR; ++r)
          acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(b.q[r][d]), k, acc[r]);
      }
    }
    for (std::size_t d0 = 0; b.key_block_stride == 0 && d0 < b.dim; d0 += 16) {
      __m512i keys[16];
#pragma GCC unroll 16
      for (std::size_t i = 0; i < 16; ++i) {
        keys[i] =
            i < n ? _mm512_castps_si512(row_elements(b, b.k, j0 + i, d0)) : _mm512_setzero_si512();
      }
      transpose16(keys);  // keys[e]: element d0 + e of the 16 keys
      const std::size_t elements = std::min<std::size_t>(16, b.dim - d0);
#pragma GCC unroll 16
      for (std::size_t e = 0; e < 16; ++e) {
        if (e == elements) break;
#pragma GCC unroll 8
        for (std::size_t r = 0; r < kR; ++r)
          acc[r] =
              _mm512_fmadd_ps(_mm512_set1_ps(b.q[r][d0 + e]), _mm512_castsi512_ps(keys[e]), acc[r]);
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kR; ++r) {
      const __m512 v = _mm512_mul_ps(acc[r], scale);
      _mm512_store_ps(sr + r * ld + j0, v);
      max[r] = _mm512_mask_max_ps(max[r], valid, max[r], v);
    }
  }
  // The exponentials in place, in each row's own order: the weighted sum reads them there and
  // adds each row's sum as it goes (in order j, as the rows-in-lanes path adds its lanes).
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kR; ++r) {
    const __m512 row_max = _mm512_set1_ps(_mm512_reduce_max_ps(max[r]));
    for (std::size_t j0 = 0; j0 < n_keys; j0 += 16) {
      float* at = sr + r * ld + j0;
      _mm512_store_ps(at, exp_nonpositive(_mm512_sub_ps(_mm512_load_ps(at), row_max)));
    }
  }
}

// Where the exponentials p_j of the rows are: s[j * 16 + r] for rows in lanes, or
// sr[r * ld + j] for keys in lanes (kKeysInLanes).
struct Probabilities {
  const float* p;
  std::size_t ld;  // keys in lanes: floats per row
};

// Rows r0 .. r0 + kR - 1 of the weighted sum over keys j < n_keys, kV vectors of 16 dims from d0,
// scaled by 1 / sum and stored. kSum: the rows' sums are added here, in order j, and their
// reciprocals written to inv_sum (the first pass of a keys-in-lanes block); otherwise inv_sum
// holds them.
template <std::size_t kR, std::size_t kV, bool kKeysInLanes, bool kSum>
inline void weighted_rows(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                          std::size_t r0, std::size_t d0, float* inv_sum) {
  __m512 acc[kR][kV];
  float sum[kR] = {};
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kR; ++r) {
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kV; ++v)
      acc[r][v] = _mm512_setzero_ps();
  }
  const float* p[kR];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kR; ++r)
    p[r] = pr.p + (r0 + r) * (kKeysInLanes ? pr.ld : 1);
  for (std::size_t j = 0; j < n_keys; ++j) {
    __m512 vj[kV];
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kV; ++v)
      vj[v] = row_elements(b, b.v, j, d0 + 16 * v);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < kR; ++r) {
      const float* pj = p[r] + j * (kKeysInLanes ? 1 : kLanes);
      if constexpr (kSum) sum[r] += *pj;
      const __m512 w = _mm512_set1_ps(*pj);
#pragma GCC unroll 16
      for (std::size_t v = 0; v < kV; ++v)
        acc[r][v] = _mm512_fmadd_ps(w, vj[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kR; ++r) {
    if (r0 + r >= b.n_rows) break;
    if constexpr (kSum) inv_sum[r0 + r] = 1.0F / sum[r];
    const __m512 scale = _mm512_set1_ps(inv_sum[r0 + r]);
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kV; ++v) {
      _mm512_mask_storeu_ps(b.out[r0 + r] + d0 + 16 * v, lanes_from(d0 + 16 * v, b.dim),
                            _mm512_mul_ps(acc[r][v], scale));
    }
  }
}

// kR rows from r0 of the weighted sums, 4 vectors (64 dims) per pass; the first pass adds the
// sums where the keys are in lanes.
template <std::size_t kR, bool kKeysInLanes>
void weighted_row_group(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                        std::size_t r0, float* inv_sum) {
  std::size_t d0 = 0;
  auto pass = [&]<std::size_t kV>(std::integral_constant<std::size_t, kV>) {
    if (kKeysInLanes && d0 == 0) {
      weighted_rows<kR, kV, kKeysInLanes, true>(b, pr, n_keys, r0, d0, inv_sum);
    } else {
      weighted_rows<kR, kV, kKeysInLanes, false>(b, pr, n_keys, r0, d0, inv_sum);
    }
    d0 += 16 * kV;
  };
  while (d0 + 64 <= b.dim)
    pass(std::integral_constant<std::size_t, 4>{});
  while (d0 < b.dim)
    pass(std::integral_constant<std::size_t, 1>{});
}

// The weighted sums of all rows: 4 rows x 4 vectors per pass, so 16 accumulators (the last pass
// only the rows left, as a block of one to three rows, decode's, would otherwise spend most of
// its multiply-adds on rows it does not have). Rows of one vector (head sizes up to 16) take 8 rows
// per pass, so that each cache row loaded serves 8 multiply-adds.
template <bool kKeysInLanes>
void weighted_sums(const AttentionBlock& b, const Probabilities& pr, std::size_t n_keys,
                   float* inv_sum) {
  std::size_t r0 = 0;
  if (b.dim <= 16) {
    for (; r0 + 8 <= b.n_rows; r0 += 8)
      weighted_row_group<8, kKeysInLanes>(b, pr, n_keys, r0, inv_sum);
  }
  for (; r0 + 4 <= b.n_rows; r0 += 4)
    weighted_row_group<4, kKeysInLanes>(b, pr, n_keys, r0, inv_sum);
  switch (b.n_rows - r0) {
    case 3:
      return weighted_row_group<3, kKeysInLanes>(b, pr, n_keys, r0, inv_sum);
    case 2:
      return weighted_row_group<2, kKeysInLanes>(b, pr, n_keys, r0, inv_sum);
    case 1:
      return weighted_row_group<1, kKeysInLanes>(b, pr, n_keys, r0, inv_sum);
    default:
      return;
  }
}

}  // namespace

void attention_block_avx512(const AttentionBlock& b, float* scratch) {
  // scratch: scores [n_keys rounded up to 8][16], transposed queries [dim][16],
  // keys [8][dim rounded up to 16],
  // (few rows) scaled scores [8][n_keys rounded up to 16],
  // each 64-byte aligned (attention_block_scratch's floats include the slack).
  float* s = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~63ULL);
  std::size_t n_keys = 0;
  std::size_t fewest = b.n_rows > 0 ? b.visible[0] : 0;
  for (std::size_t r = 0; r < b.n_rows; ++r) {
    n_keys = std::max(n_keys, b.visible[r]);
    fewest = std::min(fewest, b.visible[r]);
  }
  float* qt = s + (n_keys + kKeys) / kKeys * kKeys * kLanes;
  float* keys = qt + b.dim * kLanes;
  alignas(64) float inv_sum[kLanes];
  if (b.n_rows > 0 && b.n_rows <= 8 && fewest == n_keys) {
    float* sr = keys + kKeys * padded(b.dim);
    using FewRows = void (*)(const AttentionBlock&, std::size_t, float*);
    static constexpr FewRows kFewRows[] = {
        attend_few_rows<1>, attend_few_rows<2>, attend_few_rows<3>, attend_few_rows<4>,
        attend_few_rows<5>, attend_few_rows<6>, attend_few_rows<7>, attend_few_rows<8>};
    kFewRows[b.n_rows - 1](b, n_keys, sr);
    weighted_sums<true>(b, Probabilities{sr, (n_keys + 15) / 16 * 16}, n_keys, inv_sum);
    return;
  }
  for (std::size_t d = 0; d < b.dim; ++d) {
    for (std::size_t r = 0; r < kLanes; ++r)
      qt[d * kLanes + r] = r < b.n_rows ? b.q[r][d] : 0.0F;
  }

  if (b.key_block_stride != 0) {
    score_all_keys<true>(b, qt, n_keys, keys, s);
  } else {
    score_all_keys<false>(b, qt, n_keys, keys, s);
  }
  std::size_t j = 0;

  // Positions a row does not see (the prompt's later tokens): -infinity, so p = 0 exactly.
  alignas(64) std::int32_t visible[kLanes] = {};
  for (std::size_t r = 0; r < b.n_rows; ++r)
    visible[r] = static_cast<std::int32_t>(b.visible[r]);
  const __m512i seen = _mm512_load_si512(visible);
  for (j = fewest; j < n_keys; ++j) {
    const __mmask16 hidden = _mm512_cmp_epi32_mask(_mm512_set1_epi32(static_cast<std::int32_t>(j)),
                                                   seen, _MM_CMPINT_NLT);
    _mm512_store_ps(s + j * kLanes, _mm512_mask_mov_ps(_mm512_load_ps(s + j * kLanes), hidden,
                                                       _mm512_set1_ps(-INFINITY)));
  }

  // The softmax of every row (lane) at once.
  const __m512 scale = _mm512_set1_ps(b.scale);
  __m512 max = _mm512_set1_ps(-INFINITY);
  for (j = 0; j < n_keys; ++j) {
    const __m512 v = _mm512_mul_ps(_mm512_load_ps(s + j * kLanes), scale);
    _mm512_store_ps(s + j * kLanes, v);
    max = _mm512_max_ps(max, v);
  }
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j < n_keys; ++j) {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_load_ps(s + j * kLanes), max));
    _mm512_store_ps(s + j * kLanes, e);
    sum = _mm512_add_ps(sum, e);
  }
  _mm512_store_ps(inv_sum, _mm512_div_ps(_mm512_set1_ps(1.0F), sum));

  weighted_sums<false>(b, Probabilities{s, 0}, n_keys, inv_sum);
}

}  // namespace eredu::cpu::detail
