// AVX-512 one-token product (decode) of IQ4_NL weight rows with one activation row of 8-bit blocks
// of 32, with the values of the row dot (row_dot_iq4_nl_avx2, and so reference::dot_iq4_nl_q8_0)
// bit for bit: per block the exact int32 sum of the codebook values times the activation codes,
// then acc = fma(fl(d_w x d_x), float(isum), acc), one chain per row, the blocks in order.
//
// IQ4_NL is what llama.cpp's quantizer writes for IQ4_XS tensors whose rows are no multiple of 256
// (Qwen2.5-0.5B's 896 columns, SmolLM's 576), so such an IQ4_XS file is mostly IQ4_NL. The AVX-512
// table ran the AVX2 row dot for it, 10 GB/s on one Zen 5 thread: per 18-byte block a sign trick
// for the signed codes, a widening to int32, a horizontal sum and a float step whose fused
// multiply-add waits for the previous block's. Here
//   - the codebook shifted by +128 is looked up (unsigned, 1 .. 241) and vpdpbusd sums four
//     products into int32 without saturating; the shift's share, -128 x the block's activation
//     sum, is computed once per call for all rows and added to each total;
//   - four rows go side by side, two per register (a row's low and high nibbles in two 128-bit
//     lanes, against the activation block in both), so one reduction tree gives the four rows'
//     block totals in four lanes and the rows' chains of fused multiply-adds are the lanes of one
//     128-bit vector;
//   - the group's bytes are hinted as one stream, a group of rows and kGroupStreamAheadBytes
//     ahead, as the other AVX-512 decode products.
// Rows past the last group of four take the row dot.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "int_sums_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kRows = 4;

inline __m128i load128(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

// Per activation block, for the call: -128 x the sum of its 32 codes.
void prepare(const ActQ8Block* x, std::size_t n_blocks, std::int32_t* minus_shift) {
  const __m256i ones = _mm256_set1_epi8(1);
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const __m256i sums =
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones,
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs)));
    minus_shift[b] = -128 * hsum_i32(sums);
  }
}

// Rows r, r + 1 of block b as unsigned codes: 128-bit lanes [r low nibbles (elements 0-15), r high
// nibbles (16-31), r + 1 low, r + 1 high], looked up in the shifted codebook.
inline __m512i row_pair_codes(const enc::BlockIQ4_NL& a, const enc::BlockIQ4_NL& b,
                              __m512i codebook) {
  // Two broadcast loads (the second masked to the upper two lanes) rather than a load and three
  // lane inserts, which all wait on one shuffle port: one thread 23.2 -> 24.8 GB/s on Zen 5,
  // 12.1 -> 13.4 on Zen 4.
  const __m512i v =
      _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load128(a.qs)), 0xFF00, load128(b.qs));
  const __m512i nibbles =
      _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFF00FF00U, v, 4), _mm512_set1_epi8(0x0F));
  return _mm512_shuffle_epi8(codebook, nibbles);
}

void rows4(const std::byte* w, std::size_t w_stride, const ActQ8Block* x,
           const std::int32_t* minus_shift, std::size_t n_blocks, __m512i codebook, float* y) {
  const enc::BlockIQ4_NL* r[kRows];
  for (std::size_t i = 0; i < kRows; ++i)
    r[i] = reinterpret_cast<const enc::BlockIQ4_NL*>(w + i * w_stride);
  const char* next =
      reinterpret_cast<const char*>(w) + std::max(kRows * w_stride, kGroupStreamAheadBytes);
  constexpr std::size_t kStep = kRows * sizeof(enc::BlockIQ4_NL);  // bytes the group reads a block
  __m128 acc = _mm_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    _mm_prefetch(next + b * kStep, _MM_HINT_T1);
    _mm_prefetch(next + b * kStep + 64, _MM_HINT_T1);
    const __m512i xv =
        _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs)));
    const __m512i r01 =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), row_pair_codes(r[0][b], r[1][b], codebook), xv);
    const __m512i r23 =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), row_pair_codes(r[2][b], r[3][b], codebook), xv);
    const __m128i isum = _mm_add_epi32(totals(r01, r23), _mm_set1_epi32(minus_shift[b]));
    const __m128 wd = _mm_cvtph_ps(
        _mm_setr_epi16(static_cast<short>(r[0][b].d), static_cast<short>(r[1][b].d),
                       static_cast<short>(r[2][b].d), static_cast<short>(r[3][b].d), 0, 0, 0, 0));
    acc = _mm_fmadd_ps(_mm_mul_ps(wd, _mm_set1_ps(x[b].d)), _mm_cvtepi32_ps(isum), acc);
  }
  _mm_storeu_ps(y, acc);
}

void matvec_iq4_nl(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                   std::size_t n_blocks, float* y, void* scratch) {
  auto* minus_shift = static_cast<std::int32_t*>(scratch);
  prepare(x, n_blocks, minus_shift);
  alignas(16) std::uint8_t shifted[16];
  for (int i = 0; i < 16; ++i)
    shifted[i] = static_cast<std::uint8_t>(enc::kIQ4NLValues[i] + 128);
  const __m512i codebook = _mm512_broadcast_i32x4(load128(shifted));
  const auto* rows = static_cast<const std::byte*>(w);
  std::size_t r = 0;
  for (; r + kRows <= m; r += kRows)
    rows4(rows + r * w_stride, w_stride, x, minus_shift, n_blocks, codebook, y + r);
  for (; r < m; ++r)
    y[r] = row_dot_iq4_nl_avx2(rows + r * w_stride, x, n_blocks);
}

}  // namespace

QuantMatvec quant_matvec_iq4_nl_avx512() {
  return matvec_iq4_nl;
}

}  // namespace eredu::cpu::detail
