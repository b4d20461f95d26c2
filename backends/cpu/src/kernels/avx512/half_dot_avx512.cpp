// AVX-512 one-row products of F16 (BF16) weights with F16 (BF16) activations for decode and short
// batches (VecOps::dot_f16_f16_tokens, dot_bf16_bf16_tokens). Compiled with the AVX-512 flags
// (backends/cpu/CMakeLists.txt) and reached only through vec_ops_avx512().
//
// The values are the AVX2 table's (avx2/vec_avx2.cpp, dot_token_group), bit for bit:
// that kernel keeps four 8-lane accumulators per token over steps of 32 weights (acc0 takes
// weights i..i+7 of each step, acc1 i+8..i+15, ...), then the steps of 8 into acc0, the sum
// hsum((acc0 + acc1) + (acc2 + acc3)) and the scalar tail. Here one 16-lane register holds
// acc0 | acc1 and another acc2 | acc3, so every lane sees the same multiply-adds in the same order;
// the halves are split out again before the steps of 8. The activations are stored in the
// weights' type because these paths round them to it anyway (as ggml does), so widening is exact.
//
// Why: decode streams each weight row once from memory while the activation row is read once per
// weight row, and it must stay in L1 for the stream to run at memory speed. As floats, a row of
// 8192 (llama1b's FFN down) fills a 32 KiB L1 by itself and is re-read from L2 for every weight
// row, halving the stream; as halves it takes 16 KiB. The weights are hinted 8 KiB ahead into L2
// (better than 4 KiB into L1, or no hint). Streaming an 8192-wide F16 matrix from memory on a Zen 4
// guest (1 thread, medians of 9): float activations, no hint 10 GB/s; halves 13; halves with the
// hint 21 (2048-wide: 19, 21, 22); llama1b F16 decode in docs/performance-history.md.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"

namespace eredu::cpu::detail {
namespace {

// How 16, 8 or 1 stored halves widen to floats (exactly, both ways).
struct F16Halves {
  static __m512 widen16(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m256 widen8(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float widen1(const std::uint16_t* p) { return half_to_float(*p); }
};
struct BF16Halves {
  static __m512 widen16(const std::uint16_t* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static __m256 widen8(const std::uint16_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float widen1(const std::uint16_t* p) {
    const std::uint32_t bits = static_cast<std::uint32_t>(*p) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
};

constexpr std::size_t kAheadHalves = 4096;  // 8 KiB of weights ahead

template <typename H, int kTokens>
void half_token_group(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                      std::size_t n, float* out, std::size_t out_stride) {
  __m512 lo[kTokens], hi[kTokens];  // lo = acc0 | acc1, hi = acc2 | acc3
  for (int t = 0; t < kTokens; ++t)
    lo[t] = hi[t] = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm_prefetch(reinterpret_cast<const char*>(a + i + kAheadHalves), _MM_HINT_T1);
    const __m512 w0 = H::widen16(a + i), w1 = H::widen16(a + i + 16);
    for (int t = 0; t < kTokens; ++t) {
      const std::uint16_t* xt = x + static_cast<std::size_t>(t) * ldx + i;
      lo[t] = _mm512_fmadd_ps(w0, H::widen16(xt), lo[t]);
      hi[t] = _mm512_fmadd_ps(w1, H::widen16(xt + 16), hi[t]);
    }
  }
  for (int t = 0; t < kTokens; ++t) {
    const std::uint16_t* xt = x + static_cast<std::size_t>(t) * ldx;
    __m256 acc0 = _mm512_castps512_ps256(lo[t]);
    const __m256 acc1 = _mm512_extractf32x8_ps(lo[t], 1);
    const __m256 acc2 = _mm512_castps512_ps256(hi[t]);
    const __m256 acc3 = _mm512_extractf32x8_ps(hi[t], 1);
    std::size_t j = i;
    for (; j + 8 <= n; j += 8)
      acc0 = _mm256_fmadd_ps(H::widen8(a + j), H::widen8(xt + j), acc0);
    float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
    for (; j < n; ++j)
      sum += H::widen1(a + j) * H::widen1(xt + j);
    out[static_cast<std::size_t>(t) * out_stride] = sum;
  }
}

// Groups of four tokens (8 accumulators and 2 weight registers), then the remainder.
template <typename H>
void half_tokens(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                 std::size_t n_tokens, std::size_t n, float* out, std::size_t out_stride) {
  std::size_t t = 0;
  for (; t + 4 <= n_tokens; t += 4)
    half_token_group<H, 4>(a, x + t * ldx, ldx, n, out + t * out_stride, out_stride);
  switch (n_tokens - t) {
    case 3:
      half_token_group<H, 3>(a, x + t * ldx, ldx, n, out + t * out_stride, out_stride);
      break;
    case 2:
      half_token_group<H, 2>(a, x + t * ldx, ldx, n, out + t * out_stride, out_stride);
      break;
    case 1:
      half_token_group<H, 1>(a, x + t * ldx, ldx, n, out + t * out_stride, out_stride);
      break;
    default:
      break;
  }
}

}  // namespace

void dot_f16_f16_tokens_avx512(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                               std::size_t n_tokens, std::size_t n, float* out,
                               std::size_t out_stride) {
  half_tokens<F16Halves>(a, x, ldx, n_tokens, n, out, out_stride);
}

void dot_bf16_bf16_tokens_avx512(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                                 std::size_t n_tokens, std::size_t n, float* out,
                                 std::size_t out_stride) {
  half_tokens<BF16Halves>(a, x, ldx, n_tokens, n, out, out_stride);
}

}  // namespace eredu::cpu::detail
