// AVX2 one-token product (decode) of IQ4_NL weight rows with one activation row of 8-bit blocks of
// 32, with the values of the row dot (row_dot_iq4_nl_avx2, and so reference::dot_iq4_nl_q8_0) bit
// for bit: per block the exact int32 sum of the codebook values times the activation codes, then
// acc = fma(fl(d_w x d_x), float(isum), acc), one chain per row, the blocks in order.
//
// IQ4_NL is what llama.cpp's quantizer writes for IQ4_XS tensors whose rows are no multiple of 256
// (Qwen2.5-0.5B's 896 columns, SmolLM's 576). The row dot (the prompt tile run on one row) spent
// per 18-byte block a nibble unpacking, two sign instructions, a horizontal sum of eight int32
// lanes and a scalar float step whose scale conversion and fused multiply-add wait for the
// previous block's: 10 GB/s on one Zen 5 thread with EREDU_CPU_ISA=avx2. Here
//   - the activation codes' absolute values are made once per call, so a row's block moves the
//     activation's sign onto its codebook values with one vpsignb (|x| x sign(x) v = x v, and
//     |x|, |v| <= 127 keep vpmaddubsw's pair sums below 2^15, so the int32 sums are exact);
//   - a block's 16 bytes are loaded into both 128-bit lanes and one variable shift moves the high
//     lane's nibbles down;
//   - four rows go side by side: one horizontal-add tree gives their four block totals in four
//     lanes, whose scale products, conversion and fused multiply-add (the four rows' chains, in
//     block order) are one 128-bit step each;
//   - the group's bytes are hinted into L2 as one stream, a group of rows and
//     kGroupStreamAheadBytes ahead.
// Rows past the last group of four take the row dot.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../vec_ops.hpp"
#include "block_codes_avx2.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kRows = 4;

// Per activation block: the absolute values of its 32 codes.
struct alignas(32) AbsCodes {
  std::uint8_t v[32];
};
static_assert(quant_matvec_scratch_bytes(1) >= sizeof(AbsCodes));

void prepare(const ActQ8Block* x, std::size_t n_blocks, AbsCodes* out) {
  for (std::size_t b = 0; b < n_blocks; ++b)
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[b].v), _mm256_abs_epi8(load_act(x[b])));
}

// One row's block: the eight int32 lanes whose total is the block's exact sum.
inline __m256i block_lanes(const enc::BlockIQ4_NL& w, const ActQ8Block& x, const AbsCodes& abs_x,
                           __m256i codebook) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs)));
  // Low lane: the low nibbles (elements 0..15); high lane shifted down: the high ones (16..31).
  const __m256i nibbles = _mm256_and_si256(
      _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0x0F));
  const __m256i values = _mm256_sign_epi8(_mm256_shuffle_epi8(codebook, nibbles), load_act(x));
  const __m256i pairs =
      _mm256_maddubs_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(abs_x.v)), values);
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

void rows4(const std::byte* w, std::size_t w_stride, const ActQ8Block* x, const AbsCodes* abs_x,
           std::size_t n_blocks, __m256i codebook, float* y) {
  const enc::BlockIQ4_NL* r[kRows];
#pragma GCC unroll 4
  for (std::size_t i = 0; i < kRows; ++i)
    r[i] = reinterpret_cast<const enc::BlockIQ4_NL*>(w + i * w_stride);
  const char* next =
      reinterpret_cast<const char*>(w) + std::max(kRows * w_stride, kGroupStreamAheadBytes);
  constexpr std::size_t kStep = kRows * sizeof(enc::BlockIQ4_NL);  // bytes the group reads a block
  __m128 acc = _mm_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    _mm_prefetch(next + b * kStep, _MM_HINT_T1);
    _mm_prefetch(next + b * kStep + 64, _MM_HINT_T1);
    const __m256i l0 = block_lanes(r[0][b], x[b], abs_x[b], codebook);
    const __m256i l1 = block_lanes(r[1][b], x[b], abs_x[b], codebook);
    const __m256i l2 = block_lanes(r[2][b], x[b], abs_x[b], codebook);
    const __m256i l3 = block_lanes(r[3][b], x[b], abs_x[b], codebook);
    const __m128i isum = hsum4(l0, l1, l2, l3);
    const __m128 wd = _mm_cvtph_ps(_mm_cvtsi64_si128(
        static_cast<long long>(pack_four_halves(r[0][b].d, r[1][b].d, r[2][b].d, r[3][b].d))));
    acc = _mm_fmadd_ps(_mm_mul_ps(wd, _mm_set1_ps(x[b].d)), _mm_cvtepi32_ps(isum), acc);
  }
  _mm_storeu_ps(y, acc);
}

void matvec_iq4_nl(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                   std::size_t n_blocks, float* y, void* scratch) {
  auto* abs_x = static_cast<AbsCodes*>(scratch);
  prepare(x, n_blocks, abs_x);
  const __m256i codebook = iq4nl_table();
  const auto* rows = static_cast<const std::byte*>(w);
  std::size_t r = 0;
  for (; r + kRows <= m; r += kRows)
    rows4(rows + r * w_stride, w_stride, x, abs_x, n_blocks, codebook, y + r);
  for (; r < m; ++r)
    y[r] = row_dot_iq4_nl_avx2(rows + r * w_stride, x, n_blocks);
}

}  // namespace

QuantMatvec quant_matvec_iq4_nl_avx2() {
  return matvec_iq4_nl;
}

}  // namespace eredu::cpu::detail
