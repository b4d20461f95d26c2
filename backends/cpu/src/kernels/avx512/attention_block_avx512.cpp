// AVX-512 attention for a block of up to 16 query rows that read the same KV head
// (VecOps::attention_block): a prompt's rows, the heads of one query group for one or more
// tokens. Compiled with the AVX-512 flags (backends/cpu/CMakeLists.txt) and reached only through
// vec_ops_avx512().
//
// Why: one row at a time (attention_scores / attention_weighted_sum), every score is a dot product
// with its own horizontal sum and every row reads the whole cache of its KV head again, so at a
// depth of 4096 a 128-token prompt of smol135m ran at 0.93x llama.cpp (2.9x with an empty cache).
// Here the 16 rows sit in the 16 lanes of a register: a score step is one multiply-add of a
// cache element (broadcast) with the rows' transposed queries, the softmax runs on 16 rows at
// once, and each cache row is read once per block instead of once per row.
//
// Numerics (tested against the float64 reference within the op-parity bounds): score
// s = sum_d q[d] k[d], one fused multiply-add per element in order d = 0, 1, ...; then
// p_j = e^(s_j * scale - max_j(s_j * scale)) with the vectorized exp of the AVX2 softmax (within
// about one ulp; 0 below -87), the sum of p_j in order j; out = (sum_j p_j v_j) * (1 / sum), the
// weighted sum in order j. One row's value does not depend on the other rows of its block, nor on
// the thread count. A row's positions past its visible[r] get p = 0 exactly (their scores are set
// to -infinity before the softmax).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "../vec_ops.hpp"

namespace eredu::cpu::detail {

namespace {

constexpr std::size_t kLanes = kAttentionBlockRows;  // 16: one row per float lane
constexpr std::size_t kKeys = 8;                     // keys per score step: 8 independent chains

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

// Cache row j of the block's KV head as floats: dim elements into `out` (dim a multiple of 16).
inline void load_row(const AttentionBlock& b, std::size_t j, float* out) {
  if (b.f16) {
    const auto* row = static_cast<const std::uint16_t*>(b.k) + j * b.stride;
    for (std::size_t d = 0; d < b.dim; d += 16)
      _mm512_store_ps(
          out + d, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + d))));
  } else {
    const float* row = static_cast<const float*>(b.k) + j * b.stride;
    for (std::size_t d = 0; d < b.dim; d += 16)
      _mm512_store_ps(out + d, _mm512_loadu_ps(row + d));
  }
}

// 16 elements of V row j from element d, as floats.
inline __m512 v_elements(const AttentionBlock& b, std::size_t j, std::size_t d) {
  if (b.f16) {
    const auto* row = static_cast<const std::uint16_t*>(b.v) + j * b.stride;
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + d)));
  }
  return _mm512_loadu_ps(static_cast<const float*>(b.v) + j * b.stride + d);
}

// Scores of keys j0 .. j0 + kN - 1 for the 16 rows (qt: the transposed queries, qt[d * 16 + r]),
// into s[j * 16 + r]. keys: kKeys rows of dim floats.
template <std::size_t kN>
inline void score_keys(const AttentionBlock& b, const float* qt, std::size_t j0, float* keys,
                       float* s) {
  for (std::size_t i = 0; i < kN; ++i)
    load_row(b, j0 + i, keys + i * b.dim);
  __m512 acc[kN];
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kN; ++i)
    acc[i] = _mm512_setzero_ps();
  for (std::size_t d = 0; d < b.dim; ++d) {
    const __m512 q = _mm512_load_ps(qt + d * kLanes);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kN; ++i)
      acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(keys[i * b.dim + d]), q, acc[i]);
  }
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kN; ++i)
    _mm512_store_ps(s + (j0 + i) * kLanes, acc[i]);
}

// Rows r0 .. r0 + kR - 1 of the weighted sum over keys j < n_keys, kV vectors of 16 dims from d0,
// scaled by 1 / sum and stored.
template <std::size_t kR, std::size_t kV>
inline void weighted_rows(const AttentionBlock& b, const float* s, std::size_t n_keys,
                          std::size_t r0, std::size_t d0, const float* inv_sum) {
  __m512 acc[kR][kV];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kR; ++r) {
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kV; ++v)
      acc[r][v] = _mm512_setzero_ps();
  }
  for (std::size_t j = 0; j < n_keys; ++j) {
    __m512 vj[kV];
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kV; ++v)
      vj[v] = v_elements(b, j, d0 + 16 * v);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < kR; ++r) {
      const __m512 p = _mm512_set1_ps(s[j * kLanes + r0 + r]);
#pragma GCC unroll 16
      for (std::size_t v = 0; v < kV; ++v)
        acc[r][v] = _mm512_fmadd_ps(p, vj[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kR; ++r) {
    if (r0 + r >= b.n_rows) break;
    const __m512 scale = _mm512_set1_ps(inv_sum[r0 + r]);
#pragma GCC unroll 16
    for (std::size_t v = 0; v < kV; ++v)
      _mm512_storeu_ps(b.out[r0 + r] + d0 + 16 * v, _mm512_mul_ps(acc[r][v], scale));
  }
}

// The weighted sums of all rows: 4 rows x 4 vectors (64 dims) per pass, so 16 accumulators.
void weighted_sums(const AttentionBlock& b, const float* s, std::size_t n_keys,
                   const float* inv_sum) {
  for (std::size_t r0 = 0; r0 < b.n_rows; r0 += 4) {
    std::size_t d0 = 0;
    for (; d0 + 64 <= b.dim; d0 += 64)
      weighted_rows<4, 4>(b, s, n_keys, r0, d0, inv_sum);
    for (; d0 < b.dim; d0 += 16)
      weighted_rows<4, 1>(b, s, n_keys, r0, d0, inv_sum);
  }
}

}  // namespace

void attention_block_avx512(const AttentionBlock& b, float* scratch) {
  // scratch: scores [n_keys rounded up to 8][16], transposed queries [dim][16], keys [8][dim],
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
  for (std::size_t d = 0; d < b.dim; ++d) {
    for (std::size_t r = 0; r < kLanes; ++r)
      qt[d * kLanes + r] = r < b.n_rows ? b.q[r][d] : 0.0F;
  }

  std::size_t j = 0;
  for (; j + kKeys <= n_keys; j += kKeys)
    score_keys<kKeys>(b, qt, j, keys, s);
  for (; j < n_keys; ++j)
    score_keys<1>(b, qt, j, keys, s);

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
  alignas(64) float inv_sum[kLanes];
  _mm512_store_ps(inv_sum, _mm512_div_ps(_mm512_set1_ps(1.0F), sum));

  weighted_sums(b, s, n_keys, inv_sum);
}

}  // namespace eredu::cpu::detail
