// AVX2 + FMA + F16C primitives. This file alone is compiled with -mavx2 -mfma -mf16c
// (backends/cpu/CMakeLists.txt); see vec_ops.hpp for the rules that keep AVX2 code out of the
// baseline paths. Selected at run time only when cpuid reports all three features.
//
// The integer dot products follow the scheme llama.cpp uses on AVX2: the activation is quantized
// to 8-bit blocks of 32, each weight block is widened to 32 signed (or unsigned) bytes, and
// _mm256_maddubs_epi16 + _mm256_madd_epi16 give the block's integer dot, scaled by the two block
// scales and accumulated in float.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "../vec_ops.hpp"
#include "block_codes_avx2.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

float dot_f32(const float* a, const float* b, std::size_t n) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps();
  __m256 acc3 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

// A weight row as the token kernels read it: load(i) gives weights i .. i + 7 as floats, weight(i)
// weight i, and prefetch(i) asks for the cache line `kAhead` weights on (the row is streamed from
// memory once, by the first token group; the prefetch keeps that stream ahead of the heavier
// per-row arithmetic).
struct RowF32 {
  using Elem = float;
  static constexpr std::size_t kAhead = 256;  // 1 KiB ahead
  const float* a;
  __m256 load(std::size_t i) const { return _mm256_loadu_ps(a + i); }
  float weight(std::size_t i) const { return a[i]; }
  void prefetch(std::size_t i) const {
    _mm_prefetch(reinterpret_cast<const char*>(a + i + kAhead), _MM_HINT_T0);
  }
};
// F16 rows: 8 KiB ahead into L2 (llama1b F16 decode with the activations as halves, 2 threads on a
// Zen 4 guest: 4 KiB into L1 13.4 tokens/s, 8 KiB into L2 15.4, interleaved).
struct RowF16 {
  using Elem = std::uint16_t;
  static constexpr std::size_t kAhead = 4096;
  const std::uint16_t* a;
  __m256 load(std::size_t i) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
  }
  float weight(std::size_t i) const { return half_to_float(a[i]); }
  void prefetch(std::size_t i) const {
    _mm_prefetch(reinterpret_cast<const char*>(a + i + kAhead), _MM_HINT_T1);
  }
};

// BF16 rows likewise (4 KiB into L1 before: one Zen 5 thread's product from memory, 16384 x 8192,
// went 31.9 -> 33.8 GB/s with EREDU_CPU_ISA=avx2).
struct RowBF16 {
  using Elem = std::uint16_t;
  static constexpr std::size_t kAhead = 4096;  // 8 KiB ahead
  const std::uint16_t* a;
  __m256 load(std::size_t i) const {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  float weight(std::size_t i) const {
    const std::uint32_t bits = static_cast<std::uint32_t>(a[i]) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  void prefetch(std::size_t i) const {
    _mm_prefetch(reinterpret_cast<const char*>(a + i + kAhead), _MM_HINT_T1);
  }
};

// One weight row against a group of kTokens activation rows, the row read once for the group: each
// token keeps its own four accumulators and is fed exactly the products dot_f32 feeds them, in the
// same order (the same steps of 32, then of 8, the same reduction, the same scalar tail), so every
// out[t * out_stride] is bit-identical to the one-token dot. A speculative verification thus reads
// each weight row once per three tokens instead of once per token. The prefetch (first group only:
// later groups find the row in cache) reads no value, so it cannot change one.
//
// The activation rows are read as Act rows: floats (RowF32), or, on the F16 / BF16 paths, the
// activations stored in the weights' type (they are rounded to it anyway, so widening gives the
// same floats, from half the bytes: a long activation row then stays in L1 while the weights
// stream).
template <int kTokens, bool kPrefetch, typename Row, typename Act>
void dot_token_group(Row row, const typename Act::Elem* x, std::size_t ldx, std::size_t n,
                     float* out, std::size_t out_stride) {
  __m256 acc[kTokens][4];
  for (int t = 0; t < kTokens; ++t)
    for (int c = 0; c < 4; ++c)
      acc[t][c] = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    if constexpr (kPrefetch) row.prefetch(i);
    const __m256 w0 = row.load(i), w1 = row.load(i + 8), w2 = row.load(i + 16),
                 w3 = row.load(i + 24);
    for (int t = 0; t < kTokens; ++t) {
      const Act xt{x + static_cast<std::size_t>(t) * ldx};
      acc[t][0] = _mm256_fmadd_ps(w0, xt.load(i), acc[t][0]);
      acc[t][1] = _mm256_fmadd_ps(w1, xt.load(i + 8), acc[t][1]);
      acc[t][2] = _mm256_fmadd_ps(w2, xt.load(i + 16), acc[t][2]);
      acc[t][3] = _mm256_fmadd_ps(w3, xt.load(i + 24), acc[t][3]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 w0 = row.load(i);
    for (int t = 0; t < kTokens; ++t)
      acc[t][0] =
          _mm256_fmadd_ps(w0, Act{x + static_cast<std::size_t>(t) * ldx}.load(i), acc[t][0]);
  }
  for (int t = 0; t < kTokens; ++t) {
    const Act xt{x + static_cast<std::size_t>(t) * ldx};
    float sum = hsum(
        _mm256_add_ps(_mm256_add_ps(acc[t][0], acc[t][1]), _mm256_add_ps(acc[t][2], acc[t][3])));
    for (std::size_t j = i; j < n; ++j)
      sum += row.weight(j) * xt.weight(j);
    out[static_cast<std::size_t>(t) * out_stride] = sum;
  }
}

// Any number of tokens: groups of three (12 accumulators and 4 weight vectors fill the 16
// registers; groups of two measured slower), then the remainder.
template <typename Act, typename Row>
void dot_tokens(Row row, const typename Act::Elem* x, std::size_t ldx, std::size_t n_tokens,
                std::size_t n, float* out, std::size_t out_stride) {
  std::size_t t = 0;
  for (; t + 3 <= n_tokens; t += 3) {
    if (t == 0) {
      dot_token_group<3, true, Row, Act>(row, x, ldx, n, out, out_stride);
    } else {
      dot_token_group<3, false, Row, Act>(row, x + t * ldx, ldx, n, out + t * out_stride,
                                          out_stride);
    }
  }
  const bool first = t == 0;
  if (n_tokens - t == 2) {
    if (first) {
      dot_token_group<2, true, Row, Act>(row, x, ldx, n, out, out_stride);
    } else {
      dot_token_group<2, false, Row, Act>(row, x + t * ldx, ldx, n, out + t * out_stride,
                                          out_stride);
    }
  } else if (n_tokens - t == 1) {
    if (first) {
      dot_token_group<1, true, Row, Act>(row, x, ldx, n, out, out_stride);
    } else {
      dot_token_group<1, false, Row, Act>(row, x + t * ldx, ldx, n, out + t * out_stride,
                                          out_stride);
    }
  }
}

void dot_f32_tokens(const float* a, const float* x, std::size_t ldx, std::size_t n_tokens,
                    std::size_t n, float* out, std::size_t out_stride) {
  dot_tokens<RowF32>(RowF32{a}, x, ldx, n_tokens, n, out, out_stride);
}

void dot_f16_f16_tokens(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                        std::size_t n_tokens, std::size_t n, float* out, std::size_t out_stride) {
  dot_tokens<RowF16>(RowF16{a}, x, ldx, n_tokens, n, out, out_stride);
}

void dot_bf16_bf16_tokens(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                          std::size_t n_tokens, std::size_t n, float* out, std::size_t out_stride) {
  dot_tokens<RowBF16>(RowBF16{a}, x, ldx, n_tokens, n, out, out_stride);
}

void axpy_f32(float alpha, const float* x, float* y, std::size_t n) {
  const __m256 va = _mm256_set1_ps(alpha);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i)
    y[i] += alpha * x[i];
}

// Attention over a KV cache whose rows are `stride` elements apart, F32 or F16; dim a multiple
// of 8. Each score is exactly dot_f32(q, row) (same accumulators and order, the F16 elements
// widened in registers instead of through a buffer), and the weighted sum performs exactly the
// operations of zero-filling `out` and calling axpy_f32(w[j], row j, out) for j = 0, 1, ...
struct F32Rows {
  const float* base;
  __m256 load(std::size_t row, std::size_t stride, std::size_t i) const {
    return _mm256_loadu_ps(base + row * stride + i);
  }
};
struct F16Rows {
  const std::uint16_t* base;
  __m256 load(std::size_t row, std::size_t stride, std::size_t i) const {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + row * stride + i)));
  }
};

template <typename Rows>
void scores_rows(const float* q, Rows rows, std::size_t stride, std::size_t n_rows, std::size_t dim,
                 float* out) {
  for (std::size_t j = 0; j < n_rows; ++j) {
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    __m256 acc2 = _mm256_setzero_ps();
    __m256 acc3 = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
      acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), rows.load(j, stride, i), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), rows.load(j, stride, i + 8), acc1);
      acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 16), rows.load(j, stride, i + 16), acc2);
      acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 24), rows.load(j, stride, i + 24), acc3);
    }
    for (; i + 8 <= dim; i += 8) {
      acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), rows.load(j, stride, i), acc0);
    }
    out[j] = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  }
}

// NV vectors (8 * NV elements starting at d0) of the weighted sum, accumulated in registers.
template <int NV, typename Rows>
void weighted_chunk(const float* w, Rows rows, std::size_t stride, std::size_t n_rows,
                    std::size_t d0, float* out) {
  __m256 acc[NV];
#pragma GCC unroll 8
  for (int c = 0; c < NV; ++c)
    acc[c] = _mm256_setzero_ps();
  for (std::size_t j = 0; j < n_rows; ++j) {
    const __m256 s = _mm256_set1_ps(w[j]);
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c)
      acc[c] = _mm256_fmadd_ps(s, rows.load(j, stride, d0 + 8 * c), acc[c]);
  }
#pragma GCC unroll 8
  for (int c = 0; c < NV; ++c)
    _mm256_storeu_ps(out + d0 + 8 * c, acc[c]);
}

template <typename Rows>
void weighted_rows(const float* w, Rows rows, std::size_t stride, std::size_t n_rows,
                   std::size_t dim, float* out) {
  std::size_t d0 = 0;
  for (; d0 + 64 <= dim; d0 += 64)
    weighted_chunk<8>(w, rows, stride, n_rows, d0, out);
  switch ((dim - d0) / 8) {
    case 7:
      return weighted_chunk<7>(w, rows, stride, n_rows, d0, out);
    case 6:
      return weighted_chunk<6>(w, rows, stride, n_rows, d0, out);
    case 5:
      return weighted_chunk<5>(w, rows, stride, n_rows, d0, out);
    case 4:
      return weighted_chunk<4>(w, rows, stride, n_rows, d0, out);
    case 3:
      return weighted_chunk<3>(w, rows, stride, n_rows, d0, out);
    case 2:
      return weighted_chunk<2>(w, rows, stride, n_rows, d0, out);
    case 1:
      return weighted_chunk<1>(w, rows, stride, n_rows, d0, out);
    default:
      return;
  }
}

void attention_scores(const float* q, const void* k, bool f16, std::size_t stride,
                      std::size_t n_rows, std::size_t dim, float* out) {
  if (f16) {
    scores_rows(q, F16Rows{static_cast<const std::uint16_t*>(k)}, stride, n_rows, dim, out);
  } else {
    scores_rows(q, F32Rows{static_cast<const float*>(k)}, stride, n_rows, dim, out);
  }
}

void attention_weighted_sum(const float* w, const void* v, bool f16, std::size_t stride,
                            std::size_t n_rows, std::size_t dim, float* out) {
  if (f16) {
    weighted_rows(w, F16Rows{static_cast<const std::uint16_t*>(v)}, stride, n_rows, dim, out);
  } else {
    weighted_rows(w, F32Rows{static_cast<const float*>(v)}, stride, n_rows, dim, out);
  }
}

// out = silu(gate) * up with silu(g) = g / (1 + e^-g), written as g / (1 + t) for g >= 0 and
// g t / (1 + t) for g < 0 with t = e^-|g| (never overflows); e^ within about one ulp.
void silu_mul(const float* gate, const float* up, float* out, std::size_t n) {
  const __m256 one = _mm256_set1_ps(1.0F);
  const __m256 sign_bit = _mm256_set1_ps(-0.0F);
  auto block = [&](__m256 g, __m256 u) {
    const __m256 t = exp_nonpositive(_mm256_or_ps(g, sign_bit));  // e^-|g|
    const __m256 negative = _mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 numerator = _mm256_blendv_ps(g, _mm256_mul_ps(g, t), negative);
    return _mm256_mul_ps(_mm256_div_ps(numerator, _mm256_add_ps(one, t)), u);
  };
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, block(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) {
    alignas(32) float g[8] = {};
    alignas(32) float u[8] = {};
    for (std::size_t j = i; j < n; ++j) {
      g[j - i] = gate[j];
      u[j - i] = up[j];
    }
    _mm256_store_ps(g, block(_mm256_load_ps(g), _mm256_load_ps(u)));
    for (std::size_t j = i; j < n; ++j)
      out[j] = g[j - i];
  }
}

// In place: s[j] = e^(s[j] * scale - max), max over the scaled scores; returns the sum of the
// exponentials (eight interleaved partial sums, then the tail in order).
float attention_softmax(float* s, std::size_t n, float scale) {
  const __m256 vscale = _mm256_set1_ps(scale);
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(s + i), vscale);
    _mm256_storeu_ps(s + i, v);
    vmax = _mm256_max_ps(vmax, v);
  }
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  float max_score = _mm_cvtss_f32(m);
  for (std::size_t j = i; j < n; ++j) {
    s[j] = s[j] * scale;
    max_score = s[j] > max_score ? s[j] : max_score;
  }
  const __m256 vmax_all = _mm256_set1_ps(max_score);
  __m256 vsum = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(s + i), vmax_all));
    _mm256_storeu_ps(s + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  float sum = hsum(vsum);
  if (i < n) {
    alignas(32) float tail[8] = {};
    for (std::size_t j = i; j < n; ++j)
      tail[j - i] = s[j] - max_score;
    _mm256_store_ps(tail, exp_nonpositive(_mm256_load_ps(tail)));
    for (std::size_t j = i; j < n; ++j) {
      s[j] = tail[j - i];
      sum += s[j];
    }
  }
  return sum;
}

void f16_to_f32(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i)
    dst[i] = half_to_float(src[i]);
}

// Activation quantization as ggml's AVX2 quantize_row_q8_0/q8_1: d = max|x| / 127,
// q = round-to-nearest-even(x * 127 / max|x|).
void quantize_act_q8(const float* x, ActQ8Block* y, std::size_t n) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0F);
  for (std::size_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(xb + 8 * k);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_bit, v[k]));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float max_abs = _mm_cvtss_f32(m);
    const float d = max_abs / 127.0F;
    const float id = max_abs != 0.0F ? 127.0F / max_abs : 0.0F;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      q[k] = _mm256_cvtps_epi32(
          _mm256_round_ps(_mm256_mul_ps(v[k], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    // Pack 32 int32 -> 32 int8; packs work per 128-bit lane, so restore the element order.
    const __m256i q01 = _mm256_packs_epi32(q[0], q[1]);
    const __m256i q23 = _mm256_packs_epi32(q[2], q[3]);
    __m256i q8 = _mm256_packs_epi16(q01, q23);
    q8 = _mm256_permutevar8x32_epi32(q8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), q8);
    // Block sum of the codes: maddubs with ones needs an unsigned operand, so use madd on int16.
    const __m256i lo16 = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(q8));
    const __m256i hi16 = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(q8, 1));
    const __m256i s32 = _mm256_madd_epi16(_mm256_add_epi16(lo16, hi16), _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    // ggml stores both in F16 (block_q8_0 / block_q8_1); round the same way to track its results.
    y[b].d = round_to_half(d);
    y[b].s = round_to_half(d * static_cast<float>(_mm_cvtsi128_si32(s)));
  }
}

// The one-token row dots hint the weights kGroupStreamAheadBytes ahead into L2: a decode streams
// every weight row once from memory, row after row, and the hint keeps the stream ahead of the
// per-block arithmetic. ~0.5 KiB ahead into L1 took llama1b Q4_0 decode on a 2-core EPYC from
// 16.7 to ~18-20 tokens/s; 8 KiB into L2 took one Zen 5 thread's Q8_0 product from memory
// (16384 x 8192) from 27 to 39 GB/s and llama1b Q8_0 decode on two threads from 38-39 to 44-45
// tokens/s (three interleaved rounds). Q4_1, Q5_0 and Q5_1 had no hint until a 2-core Zen 3 guest
// (AVX2 only) showed their products from memory (16384 x 8192) ~10% slower than from L3: with it,
// Q5_0 14.5-15.4 -> 16.1-17.8 GB/s, Q5_1 16.0-17.2 -> 17.6-19.1, and the smol135m Q4_K_M products
// (mostly Q5_0, llama-quantize's fallback for 576 columns) 11.5-14.2 -> 14.6-16.7 GB/s (three
// interleaved rounds each). A hint reads no value, so it changes no result.
template <typename Block>
inline void hint_stream(const Block* block) {
  _mm_prefetch(reinterpret_cast<const char*>(block) + kGroupStreamAheadBytes, _MM_HINT_T1);
}

// Q8_0 and Q4_0 keep two chains of multiply-adds, block b in chain b % 2, summed at the end:
// hsum(chain 0 + chain 1). The AVX-512 table computes the same with one 512-bit accumulator (chain
// 0 in the low half, chain 1 in the high), one multiply-add per pair of blocks, and the tiles
// (gemm_avx2.cpp, quant_avx512.cpp) run the same chains, so every path gives these values.
template <typename F>
float row_dot_two_chains(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  const auto* w = static_cast<const typename F::Block*>(w_row);
  const auto step = [&](std::size_t b, __m256 acc) {
    hint_stream(w + b);
    const __m256 scale = _mm256_set1_ps(half_to_float(w[b].d) * x[b].d);
    return _mm256_fmadd_ps(scale, dot_i8_i8(F::codes(w[b]), load_act(x[b])), acc);
  };
  // Two named accumulators, not an array indexed by b & 1: that kept them in memory (a store and
  // a reload per block; llama1b Q4_0 decode 37 -> 28 tokens/s).
  __m256 even = _mm256_setzero_ps();
  __m256 odd = _mm256_setzero_ps();
  std::size_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    even = step(b, even);
    odd = step(b + 1, odd);
  }
  if (b < n_blocks) even = step(b, even);
  return hsum(_mm256_add_ps(even, odd));
}

float row_dot_q8_0(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  return row_dot_two_chains<Q8_0SignedCodes>(w_row, x, n_blocks);
}

float row_dot_q4_0(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  return row_dot_two_chains<Q4_0SignedCodes>(w_row, x, n_blocks);
}

float row_dot_q4_1(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  const auto* w = static_cast<const enc::BlockQ4_1*>(w_row);
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0F;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    hint_stream(w + b);
    const __m256 scale = _mm256_set1_ps(half_to_float(w[b].d) * x[b].d);
    acc = _mm256_fmadd_ps(scale, dot_u8_i8(nibbles_to_bytes(w[b].qs), load_act(x[b])), acc);
    mins += half_to_float(w[b].m) * x[b].s;
  }
  return hsum(acc) + mins;
}

float row_dot_q5_0(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  const auto* w = static_cast<const enc::BlockQ5_0*>(w_row);
  __m256 acc = _mm256_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    hint_stream(w + b);
    const __m256i qw = Q5_0SignedCodes::codes(w[b]);
    const __m256 scale = _mm256_set1_ps(half_to_float(w[b].d) * x[b].d);
    acc = _mm256_fmadd_ps(scale, dot_i8_i8(qw, load_act(x[b])), acc);
  }
  return hsum(acc);
}

float row_dot_q5_1(const void* w_row, const ActQ8Block* x, std::size_t n_blocks) {
  const auto* w = static_cast<const enc::BlockQ5_1*>(w_row);
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0F;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    hint_stream(w + b);
    const __m256i high = _mm256_and_si256(bits_to_bytes(w[b].qh), _mm256_set1_epi8(16));
    const __m256i qw = _mm256_or_si256(nibbles_to_bytes(w[b].qs), high);
    const __m256 scale = _mm256_set1_ps(half_to_float(w[b].d) * x[b].d);
    acc = _mm256_fmadd_ps(scale, dot_u8_i8(qw, load_act(x[b])), acc);
    mins += half_to_float(w[b].m) * x[b].s;
  }
  return hsum(acc) + mins;
}

QuantRowDot quant_row_dot(DType dtype) {
  switch (dtype) {
    case DType::kQ8_0:
      return row_dot_q8_0;
    case DType::kQ4_0:
      return row_dot_q4_0;
    case DType::kQ4_1:
      return row_dot_q4_1;
    case DType::kQ5_0:
      return row_dot_q5_0;
    case DType::kQ5_1:
      return row_dot_q5_1;
    case DType::kIQ4_NL:
      return row_dot_iq4_nl_avx2;
    default:
      return nullptr;
  }
}

void f32_to_f16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i)
    dst[i] = static_cast<std::uint16_t>(_cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT));
}

// ggml's GGML_FP32_TO_BF16 on one value's bits: round to nearest even, NaN kept quiet.
inline std::uint16_t bf16_bits(std::uint32_t u) {
  if ((u & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>((u | 0x00400000U) >> 16);
  return static_cast<std::uint16_t>((u + 0x7FFFU + ((u >> 16) & 1U)) >> 16);
}

void f32_to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)),
                                           _mm256_set1_epi32(0x7F800000));
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd), 16);
    const __m256i quiet = _mm256_srli_epi32(_mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), 16);
    const __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);
    // Eight 32-bit lanes below 65536 -> eight 16-bit values (packus works per 128-bit lane).
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, src + i, 4);
    dst[i] = bf16_bits(u);
  }
}

// F16: round to nearest even through F16C. BF16: round to nearest even on the bit pattern (ggml's
// GGML_FP32_TO_BF16), NaN kept quiet.
void round_act_to_half(DType weight_dtype, const float* x, float* y, std::size_t n) {
  if (weight_dtype == DType::kF16) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
      _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i)
      y[i] = round_to_half(x[i]);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, x + i, 4);
    u = static_cast<std::uint32_t>(bf16_bits(u)) << 16;
    std::memcpy(y + i, &u, 4);
  }
}

constexpr VecOps kAvx2Ops{
    .dot_f32 = dot_f32,
    .axpy_f32 = axpy_f32,
    .f16_to_f32 = f16_to_f32,
    .f32_to_f16 = f32_to_f16,
    .f32_to_bf16 = f32_to_bf16,
    .dot_f32_tokens = dot_f32_tokens,
    .dot_f16_f16_tokens = dot_f16_f16_tokens,
    .dot_bf16_bf16_tokens = dot_bf16_bf16_tokens,
    .quantize_act_q8 = quantize_act_q8,
    .quant_row_dot = quant_row_dot,
    .quant_matvec = quant_matvec_avx2,
    .quantize_act_q8k = quantize_act_q8k_avx2,
    .kquant_gemm = kquant_gemm_avx2,
    .kquant_prompt_gemm = kquant_prompt_gemm_avx2,
    .row_group_products = row_group_products_avx2,
    .round_act_to_half = round_act_to_half,
    .quant_gemm = quant_gemm_avx2,
    .quant_prompt_gemm = quant_prompt_gemm_avx2,
    .float_gemm = float_gemm_avx2,
    .float_gemm_row_tile = kFloatGemmRowsAvx2,
    .f16_gemm = f16_gemm_avx2,
    .bf16_gemm = nullptr,
    .attention_scores = attention_scores,
    .attention_weighted_sum = attention_weighted_sum,
    .attention_softmax = attention_softmax,
    .silu_mul = silu_mul,
    .attention_block = attention_block_avx2,
};

}  // namespace

const VecOps& vec_ops_avx2() noexcept {
  return kAvx2Ops;
}

}  // namespace eredu::cpu::detail
