// AVX2 one-token product of Q4_0 weight rows with one activation row (decode), with the values of
// row_dot_q4_0 (vec_avx2.cpp) bit for bit. IQ4_NL has its own in iq4nl_matvec_avx2.cpp.
//
// The row dot makes the nibbles signed (code - 8) and multiplies two signed vectors, which
// vpmaddubsw cannot do directly, so it spends two sign instructions per block on it. Here the
// nibbles stay unsigned (0..15, so a pair of products fits int16) and the offset's share,
// 8 x (sum of the four activations of each int32 lane), is added as a start value computed once
// per call for all the call's rows. The int32 sums are the same exact integers, and the scale
// products fl(d_w x d_x), the two chains (block b in chain b % 2) and the final sum are the row
// dot's, so the values are too.
//
// What a block costs: the row dot's float step (a half-to-float conversion, a scalar product and a
// broadcast per block) and its nibble unpacking (two shifts, an insert and a mask) took most of
// ~15 vector operations for an 18-byte block, and its rows, one at a time, were hinted ~0.5 KiB
// ahead into L1. Here
//   - eight blocks' weight scales are converted and multiplied by the activation scales in one
//     256-bit step per row, and each block broadcasts its product from memory; the eight halves
//     are gathered in two general registers (pack_four_halves), not by vpinsrw, which spent ~1.5
//     vector operations of each block and row (Zen 3, AVX2 only: Matvec/Q4_0 576x1536 and
//     2048x8192 ~10% faster, five interleaved rounds; llvm-mca 122 -> 100 cycles per 32
//     block-rows);
//   - a block's 16 bytes are loaded into both 128-bit lanes and one variable shift moves the high
//     lane's nibbles down;
//   - four rows go side by side, each with its own two chains, block by block: a block's
//     activation codes and offset share are loaded once into registers for the four rows, and
//     eight chains of fused multiply-adds overlap; the group's bytes are hinted into L2 as one
//     stream, a group of rows and kGroupStreamAheadBytes ahead, as the AVX-512 products do (four
//     row streams with no hint were what once made four-row AVX2 decode slower than one row at a
//     time).
// On one Zen 5 thread (EREDU_CPU_ISA=avx2) the product went 19.6 -> 25 GB/s from L2 and
// 17.1 -> 24 from memory (16384 x 8192). Per block, what is left is the loads and the definition's
// int32 lanes without VNNI (vpmaddubsw, vpmaddwd, the offset add, the conversion and the fused
// multiply-add). Reading each block's activations and scale product through memory operands, row
// by row, held it at 21 GB/s: the vector load ports, not the arithmetic, were full. llama1b Q4_0
// decode on two threads went 62-65 -> 75-80 tokens/s (interleaved rounds).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kRowGroup = 4;
constexpr std::size_t kScaleBlocks = 8;  // blocks whose scale products are made in one step

// Per activation block: -(8 x sum of the four activations of each int32 lane).
struct alignas(32) MinusOffset {
  std::int32_t lanes[8];
};
static_assert(sizeof(MinusOffset) == 32);
static_assert(quant_matvec_scratch_bytes(1) >= sizeof(MinusOffset) + sizeof(float));

void prepare(const ActQ8Block* x, std::size_t n_blocks, MinusOffset* out, float* xd) {
  const __m256i eight = _mm256_set1_epi8(8);
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const __m256i sums =
        _mm256_madd_epi16(_mm256_maddubs_epi16(eight, load_act(x[b])), _mm256_set1_epi16(1));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[b].lanes),
                       _mm256_sub_epi32(_mm256_setzero_si256(), sums));
    xd[b] = x[b].d;
  }
}

// fl(d_w x d_x) of eight consecutive blocks of one row, in block order.
inline __m256 scale_products(const enc::BlockQ4_0* w, const float* xd) {
  static_assert(kScaleBlocks == 8);
  const std::uint64_t lo = pack_four_halves(w[0].d, w[1].d, w[2].d, w[3].d);
  const std::uint64_t hi = pack_four_halves(w[4].d, w[5].d, w[6].d, w[7].d);
  const __m128i h = _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<long long>(lo)),
                                     static_cast<long long>(hi), 1);
  return _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_loadu_ps(xd));
}

// One block's step of one row: the exact int32 sums, converted, times the scale product, added into
// the block's chain. `act` and `minus_off` are the block's activation codes and offset share.
inline __m256 step(const enc::BlockQ4_0& w, __m256i act, __m256i minus_off, __m256 scale,
                   __m256 acc) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs)));
  // Low lane: the low nibbles (elements 0..15); high lane shifted down: the high ones (16..31).
  const __m256i codes = _mm256_and_si256(
      _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0x0F));
  const __m256i pairs = _mm256_maddubs_epi16(codes, act);
  const __m256i sums = _mm256_add_epi32(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)), minus_off);
  return _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sums), acc);
}

template <std::size_t kRows>
void rows(const std::byte* w, std::size_t w_stride, const ActQ8Block* x,
          const MinusOffset* minus_off, const float* xd, std::size_t n_blocks, float* y) {
  const enc::BlockQ4_0* wr[kRows];
  // Two named accumulators per row, as the row dot (block b in chain b % 2).
  __m256 even[kRows];
  __m256 odd[kRows];
#pragma GCC unroll 4
  for (std::size_t i = 0; i < kRows; ++i) {
    wr[i] = reinterpret_cast<const enc::BlockQ4_0*>(w + i * w_stride);
    even[i] = _mm256_setzero_ps();
    odd[i] = _mm256_setzero_ps();
  }
  // Stream hints (read no value): the group's bytes as one stream, at least a group of rows and
  // kGroupStreamAheadBytes ahead, a step's worth of lines per step.
  constexpr std::size_t kStepBytes = kRows * kScaleBlocks * sizeof(enc::BlockQ4_0);
  const char* next =
      reinterpret_cast<const char*>(w) + std::max(kRows * w_stride, kGroupStreamAheadBytes);
  std::size_t b = 0;
  for (; b + kScaleBlocks <= n_blocks; b += kScaleBlocks) {
#pragma GCC unroll 16
    for (std::size_t line = 0; line < kStepBytes; line += 64)
      _mm_prefetch(next + b / kScaleBlocks * kStepBytes + line, _MM_HINT_T1);
    alignas(32) float products[kRows][kScaleBlocks];
#pragma GCC unroll 4
    for (std::size_t i = 0; i < kRows; ++i)
      _mm256_store_ps(products[i], scale_products(wr[i] + b, xd + b));
#pragma GCC unroll 8
    for (std::size_t k = 0; k < kScaleBlocks; ++k) {
      const __m256i act = load_act(x[b + k]);
      const __m256i off =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(minus_off[b + k].lanes));
#pragma GCC unroll 4
      for (std::size_t i = 0; i < kRows; ++i) {
        const __m256 scale = _mm256_broadcast_ss(&products[i][k]);
        if (k % 2 == 0) {
          even[i] = step(wr[i][b + k], act, off, scale, even[i]);
        } else {
          odd[i] = step(wr[i][b + k], act, off, scale, odd[i]);
        }
      }
    }
  }
  // The last blocks (fewer than eight), with the row dot's scalar scale product.
  for (; b < n_blocks; ++b) {
    const __m256i act = load_act(x[b]);
    const __m256i off = _mm256_load_si256(reinterpret_cast<const __m256i*>(minus_off[b].lanes));
#pragma GCC unroll 4
    for (std::size_t i = 0; i < kRows; ++i) {
      const __m256 scale = _mm256_set1_ps(half_to_float(wr[i][b].d) * xd[b]);
      if (b % 2 == 0) {
        even[i] = step(wr[i][b], act, off, scale, even[i]);
      } else {
        odd[i] = step(wr[i][b], act, off, scale, odd[i]);
      }
    }
  }
#pragma GCC unroll 4
  for (std::size_t i = 0; i < kRows; ++i)
    y[i] = hsum(_mm256_add_ps(even[i], odd[i]));
}

void matvec_q4_0(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                 std::size_t n_blocks, float* y, void* scratch) {
  auto* minus_off = static_cast<MinusOffset*>(scratch);
  auto* xd = reinterpret_cast<float*>(minus_off + n_blocks);
  prepare(x, n_blocks, minus_off, xd);
  const auto* base = static_cast<const std::byte*>(w);
  std::size_t r = 0;
  for (; r + kRowGroup <= m; r += kRowGroup)
    rows<kRowGroup>(base + r * w_stride, w_stride, x, minus_off, xd, n_blocks, y + r);
  for (; r < m; ++r)
    rows<1>(base + r * w_stride, w_stride, x, minus_off, xd, n_blocks, y + r);
}

}  // namespace

QuantMatvec quant_matvec_avx2(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return matvec_q4_0;
    case DType::kIQ4_NL:
      return quant_matvec_iq4_nl_avx2();
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
