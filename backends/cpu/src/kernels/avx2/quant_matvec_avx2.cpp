// AVX2 one-token product of Q4_0 weight rows with one activation row (decode), with the values of
// row_dot_q4_0 (vec_avx2.cpp) bit for bit.
//
// The row dot makes the nibbles signed (code - 8) and multiplies two signed vectors, which
// vpmaddubsw cannot do directly, so it spends two sign instructions per block on it. Here the
// nibbles stay unsigned (0..15, so a pair of products fits int16) and the offset's share,
// 8 x (sum of the four activations of each int32 lane), is subtracted as a start value computed
// once per call for all the call's rows. The int32 sums are the same exact integers, and the scale
// products, the two chains (block b in chain b % 2) and the final sum are the row dot's, so the
// values are too. llama1b Q4_0 decode with EREDU_CPU_ISA=avx2 on a 2-core Zen 5 guest went from
// 24-26 to 27-32 tokens/s on one thread, 42-45 to 44-57 on two (three interleaved rounds).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// How many blocks ahead (~0.5 KiB) the stream hint reaches, as the row dot's.
constexpr std::size_t kAheadBlocks = 32;

// Per activation block: -(8 x sum of the four activations of each int32 lane).
struct alignas(32) MinusOffset {
  std::int32_t lanes[8];
};
static_assert(sizeof(MinusOffset) == 32);

void prepare(const ActQ8Block* x, std::size_t n_blocks, MinusOffset* out) {
  const __m256i eight = _mm256_set1_epi8(8);
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const __m256i sums =
        _mm256_madd_epi16(_mm256_maddubs_epi16(eight, load_act(x[b])), _mm256_set1_epi16(1));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[b].lanes),
                       _mm256_sub_epi32(_mm256_setzero_si256(), sums));
  }
}

inline __m256 step(const enc::BlockQ4_0& w, const ActQ8Block& x, const MinusOffset& minus_off,
                   __m256 acc) {
  _mm_prefetch(reinterpret_cast<const char*>(&w + kAheadBlocks), _MM_HINT_T0);
  const __m256i pairs = _mm256_maddubs_epi16(nibbles_to_bytes(w.qs), load_act(x));
  const __m256i sums =
      _mm256_add_epi32(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)),
                       _mm256_load_si256(reinterpret_cast<const __m256i*>(minus_off.lanes)));
  const __m256 scale = _mm256_set1_ps(half_to_float(w.d) * x.d);
  return _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sums), acc);
}

float row(const enc::BlockQ4_0* w, const ActQ8Block* x, const MinusOffset* minus_off,
          std::size_t n_blocks) {
  // Two named accumulators, as the row dot (an array indexed by b & 1 was kept in memory).
  __m256 even = _mm256_setzero_ps();
  __m256 odd = _mm256_setzero_ps();
  std::size_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    even = step(w[b], x[b], minus_off[b], even);
    odd = step(w[b + 1], x[b + 1], minus_off[b + 1], odd);
  }
  if (b < n_blocks) even = step(w[b], x[b], minus_off[b], even);
  return hsum(_mm256_add_ps(even, odd));
}

void matvec_q4_0(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                 std::size_t n_blocks, float* y, void* scratch) {
  auto* minus_off = static_cast<MinusOffset*>(scratch);
  prepare(x, n_blocks, minus_off);
  const auto* rows = static_cast<const std::byte*>(w);
  for (std::size_t r = 0; r < m; ++r)
    y[r] =
        row(reinterpret_cast<const enc::BlockQ4_0*>(rows + r * w_stride), x, minus_off, n_blocks);
}

}  // namespace

QuantMatvec quant_matvec_avx2(DType dtype) {
  return dtype == DType::kQ4_0 ? matvec_q4_0 : nullptr;
}

}  // namespace eredu::cpu::detail
