// AVX-512 one-token products of Q4_1, Q5_0 and Q5_1 weight rows (decode), with the AVX2 table's
// row dots' values bit for bit (avx2/vec_avx2.cpp row_dot_q4_1 / _q5_0 / _q5_1).
// The weights a load binds are read from their row groups instead (block32_row_groups_avx512.cpp,
// the same values); this product reads their last rows % 16 and weights without groups.
//
// Why: llama.cpp's quantizer writes Q5_0 for Q4_K tensors and Q5_1 for Q5_K tensors whose rows are
// no multiple of 256, so most of a Q4_K_M or Q5_K_M SmolLM or Qwen2-0.5B is Q5_0 or Q5_1; on this
// table those still ran the AVX2 row dots (53% of smol135m Q4_K_M's decode samples).
//
// The values: each AVX2 row dot keeps one chain per row, in block order: the block's eight exact
// lane sums (lane l: elements 4l .. 4l + 3) converted and added by one fused multiply-add scaled
// by fl(d_w * d_x); Q4_1 / Q5_1 also add each block's fl(m_w) * s_x into a scalar by one fused
// multiply-add (the compiler contracts `mins += m * s` there; written here as the FMA it is);
// then hsum(chain) (+ mins). Pairing blocks (as the Q4_0 product does) would change that order,
// so a register holds two rows instead: row r in the low 256 bits, row r + 1 in the high, the same
// activation block in both halves, and each half runs its row's AVX2 steps exactly. The codes are
// unsigned bytes for vpdpbusd (nibble, | high bit << 4 for the 5-bit encodings); Q5_0's offset of
// 16 comes off through its share, -16 x (sum of four activations), laid out once per block as the
// start value. Rows go four at a time (two registers) and are hinted into L2 as one stream, as
// the Q4_0 product's are.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

inline __m128i load128(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline std::uint32_t load32(const void* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// One activation block as the products read it (64-byte aligned).
struct alignas(64) BlockActivations {
  std::int8_t codes[32];
  std::int32_t minus_off[8];  // -(offset x sum of the four activations of each lane)
};
static_assert(sizeof(BlockActivations) == 64);

// Per encoding: the two rows' codes as unsigned bytes (row 0's 32 in the low half, in element
// order), the offset they carry, and whether a block has a minimum.
template <typename B, bool kFiveBits, int kCodeOffset, bool kMinimum>
struct RowPairs {
  using Block = B;
  static constexpr int kOffset = kCodeOffset;
  static constexpr bool kHasMin = kMinimum;
  static __m512i codes(const Block& w0, const Block& w1) {
    // Each row's 16 packed bytes twice, then the low nibbles (elements 0..15) and the high ones.
    const __m512i packed =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(load128(w0.qs))),
                           _mm256_broadcastsi128_si256(load128(w1.qs)), 1);
    const __m512i nibbles =
        _mm512_and_si512(_mm512_srlv_epi64(packed, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)),
                         _mm512_set1_epi8(0x0F));
    if constexpr (!kFiveBits) {
      return nibbles;
    } else {
      // Bit i of qh is element i's fifth bit: one mask bit per byte of the two rows.
      const __mmask64 high = _cvtu64_mask64(load32(w0.qh) | std::uint64_t{load32(w1.qh)} << 32);
      return _mm512_mask_add_epi8(nibbles, high, nibbles, _mm512_set1_epi8(16));
    }
  }
};
using Q4_1RowPairs = RowPairs<enc::BlockQ4_1, false, 0, true>;
using Q5_0RowPairs = RowPairs<enc::BlockQ5_0, true, 16, false>;
using Q5_1RowPairs = RowPairs<enc::BlockQ5_1, true, 0, true>;

template <typename F>
void prepare(const ActQ8Block* x, std::size_t n_blocks, BlockActivations* out, float* xd,
             float* xs) {
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const __m256i codes = load256(x[b].qs);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[b].codes), codes);
    const __m256i share =
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(F::kOffset), codes);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[b].minus_off),
                       _mm256_sub_epi32(_mm256_setzero_si256(), share));
    xd[b] = x[b].d;
    xs[b] = x[b].s;
  }
}

// One block of two rows: their chains in `acc` (row 0 low, row 1 high) and, with a minimum, their
// minimum sums in lanes 1 and 3 of `mins`.
template <typename F>
inline void step(const typename F::Block& w0, const typename F::Block& w1,
                 const BlockActivations& xa, float xd, float xs, __m512& acc, __m128& mins) {
  const __m512i start =
      F::kOffset != 0 ? _mm512_broadcast_i64x4(load256(xa.minus_off)) : _mm512_setzero_si512();
  const __m512i sums =
      _mm512_dpbusd_epi32(start, F::codes(w0, w1), _mm512_broadcast_i64x4(load256(xa.codes)));
  __m512 scales;
  if constexpr (F::kHasMin) {
    // d and m side by side: lanes [d0, m0, d1, m1].
    const __m128 dm =
        _mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(load32(&w0)), load32(&w1), 1));
    const __m128 products = _mm_mul_ps(dm, _mm_set1_ps(xd));  // lanes 0, 2: fl(d_w * d_x)
    mins = _mm_fmadd_ps(dm, _mm_set1_ps(xs), mins);           // lanes 1, 3: fma(m_w, s_x, mins)
    scales = _mm512_permutexvar_ps(_mm512_set_epi32(2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0),
                                   _mm512_castps128_ps512(products));
  } else {
    const __m128 d = _mm_cvtph_ps(_mm_insert_epi16(_mm_cvtsi32_si128(w0.d), w1.d, 1));
    const __m128 products = _mm_mul_ps(d, _mm_set1_ps(xd));
    scales = _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                                   _mm512_castps128_ps512(products));
  }
  acc = _mm512_fmadd_ps(scales, _mm512_cvtepi32_ps(sums), acc);
}

// kPairs pairs of rows (the last may repeat its first row when `n_rows` is odd), blocks in order,
// the rows' bytes hinted into L2 as one stream at least kGroupStreamAheadBytes ahead.
template <typename F, std::size_t kPairs>
void row_pairs(const std::byte* w, std::size_t w_stride, std::size_t n_rows,
               const BlockActivations* xa, const float* xd, const float* xs, std::size_t n_blocks,
               float* y) {
  using Block = typename F::Block;
  const Block* wr[2 * kPairs];
  __m512 acc[kPairs];
  __m128 mins[kPairs];
  for (std::size_t i = 0; i < 2 * kPairs; ++i)
    wr[i] = reinterpret_cast<const Block*>(w + std::min(i, n_rows - 1) * w_stride);
  for (std::size_t p = 0; p < kPairs; ++p) {
    acc[p] = _mm512_setzero_ps();
    mins[p] = _mm_setzero_ps();
  }
  const char* next =
      reinterpret_cast<const char*>(w) + std::max(2 * kPairs * w_stride, kGroupStreamAheadBytes);
  std::size_t hinted = 0;  // bytes of the stream hinted so far
  for (std::size_t b = 0; b < n_blocks; ++b) {
    for (; hinted < (b + 1) * 2 * kPairs * sizeof(Block); hinted += 64)
      _mm_prefetch(next + hinted, _MM_HINT_T1);
    for (std::size_t p = 0; p < kPairs; ++p)
      step<F>(wr[2 * p][b], wr[2 * p + 1][b], xa[b], xd[b], xs[b], acc[p], mins[p]);
  }
  for (std::size_t p = 0; p < kPairs; ++p) {
    alignas(16) float m[4];
    _mm_store_ps(m, mins[p]);
    const float low = hsum(_mm512_castps512_ps256(acc[p]));
    y[2 * p] = F::kHasMin ? low + m[1] : low;
    if (2 * p + 1 < n_rows) {
      const float high = hsum(_mm512_extractf32x8_ps(acc[p], 1));
      y[2 * p + 1] = F::kHasMin ? high + m[3] : high;
    }
  }
}

template <typename F>
void matvec(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
            std::size_t n_blocks, float* y, void* scratch) {
  constexpr std::size_t kRowGroup = 4;
  // 64 + 8 bytes per block, within quant_matvec_scratch_bytes.
  auto* xa = static_cast<BlockActivations*>(scratch);
  auto* xd = reinterpret_cast<float*>(xa + n_blocks);
  float* xs = xd + n_blocks;
  prepare<F>(x, n_blocks, xa, xd, xs);
  const auto* base = static_cast<const std::byte*>(w);
  std::size_t r = 0;
  for (; r + kRowGroup <= m; r += kRowGroup)
    row_pairs<F, 2>(base + r * w_stride, w_stride, kRowGroup, xa, xd, xs, n_blocks, y + r);
  for (; r < m; r += 2) {
    row_pairs<F, 1>(base + r * w_stride, w_stride, std::min<std::size_t>(2, m - r), xa, xd, xs,
                    n_blocks, y + r);
  }
}

}  // namespace

QuantMatvec quant_matvec_row_pairs_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ4_1:
      return matvec<Q4_1RowPairs>;
    case DType::kQ5_0:
      return matvec<Q5_0RowPairs>;
    case DType::kQ5_1:
      return matvec<Q5_1RowPairs>;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
