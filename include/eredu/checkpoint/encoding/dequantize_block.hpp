#pragma once
// Scalar reference dequantization of one block, and of a row of blocks, for every encoding in
// blocks.hpp. These are the definitions later kernels are tested against.
//
// Order of operations. Each decoder groups its float operations the way ggml's reference C
// decoders (ggml-quants.c, dequantize_row_*) do, so the results are bit-identical to ggml's,
// including the sign of a zero result:
//   Q4_0, Q5_0, Q8_0, IQ4_NL   float(q) * d                    (q already offset: q - 8, q - 16)
//   Q4_1, Q5_1                 float(q) * d + m
//   Q2_K, Q4_K, Q5_K           (d * float(scale)) * float(q) - dmin * float(min)
//   Q3_K, IQ4_XS               (d * float(scale - 32)) * float(q)
//   Q6_K                       (d * float(scale)) * float(q - 32)
// Every product is exact in float32 (F16 scale times a small integer), and the affine formats
// round at most once (in the final add), so fused multiply-add contraction cannot change a result;
// regrouping (e.g. d * float(scale * q)) would only flip the sign of some zeros.
//
// Preconditions of the row functions: `n_elements` is a multiple of the block size and the
// pointers cover n_elements / block_size blocks and n_elements floats. The span API in codec.hpp
// checks these for untrusted input.

#include <cstddef>
#include <cstdint>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::encoding {

namespace detail {
[[nodiscard]] constexpr std::uint32_t load_le32(const std::uint8_t (&bytes)[4]) noexcept {
  return static_cast<std::uint32_t>(bytes[0]) | (static_cast<std::uint32_t>(bytes[1]) << 8) |
         (static_cast<std::uint32_t>(bytes[2]) << 16) |
         (static_cast<std::uint32_t>(bytes[3]) << 24);
}

// Q4_K / Q5_K: the 6-bit scale and 6-bit minimum of sub-block j (0..7) from the 12 packed bytes.
// Sub-blocks 0-3 keep theirs in the low 6 bits of bytes j and j + 4; sub-blocks 4-7 keep the low
// 4 bits in the nibbles of byte j + 4 and the high 2 bits in the top bits of bytes j - 4 and j.
struct ScaleMin {
  std::uint8_t scale;
  std::uint8_t min;
};
[[nodiscard]] constexpr ScaleMin k4_scale_min(int j,
                                              const std::uint8_t (&q)[kKScaleSize]) noexcept {
  if (j < 4) {
    return {static_cast<std::uint8_t>(q[j] & 63), static_cast<std::uint8_t>(q[j + 4] & 63)};
  }
  return {static_cast<std::uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)),
          static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4))};
}

// Q3_K: the 6-bit scale code (0..63, the scale plus 32) of sub-block j (0..15). Low 4 bits: the
// low nibble of byte j for j < 8, else the high nibble of byte j - 8. High 2 bits: bits
// 2 * (j / 4) of byte 8 + j % 4.
[[nodiscard]] constexpr int q3_k_scale_code(int j, const std::uint8_t (&s)[12]) noexcept {
  const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return low | (high << 4);
}
}  // namespace detail

constexpr void dequantize_block(const BlockQ4_0& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK4_0 / 2; ++j) {
    const int x0 = (b.qs[j] & 0x0F) - 8;
    const int x1 = (b.qs[j] >> 4) - 8;
    y[j] = static_cast<float>(x0) * d;
    y[j + kQK4_0 / 2] = static_cast<float>(x1) * d;
  }
}

constexpr void dequantize_block(const BlockQ4_1& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  const float m = fp16_to_fp32(b.m);
  for (int j = 0; j < kQK4_1 / 2; ++j) {
    const int x0 = b.qs[j] & 0x0F;
    const int x1 = b.qs[j] >> 4;
    y[j] = static_cast<float>(x0) * d + m;
    y[j + kQK4_1 / 2] = static_cast<float>(x1) * d + m;
  }
}

constexpr void dequantize_block(const BlockQ5_0& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  const std::uint32_t qh = detail::load_le32(b.qh);
  for (int j = 0; j < kQK5_0 / 2; ++j) {
    const int high0 = static_cast<int>((qh >> j) & 1u) << 4;
    const int high1 = static_cast<int>((qh >> (j + kQK5_0 / 2)) & 1u) << 4;
    const int x0 = ((b.qs[j] & 0x0F) | high0) - 16;
    const int x1 = ((b.qs[j] >> 4) | high1) - 16;
    y[j] = static_cast<float>(x0) * d;
    y[j + kQK5_0 / 2] = static_cast<float>(x1) * d;
  }
}

constexpr void dequantize_block(const BlockQ5_1& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  const float m = fp16_to_fp32(b.m);
  const std::uint32_t qh = detail::load_le32(b.qh);
  for (int j = 0; j < kQK5_1 / 2; ++j) {
    const int high0 = static_cast<int>((qh >> j) & 1u) << 4;
    const int high1 = static_cast<int>((qh >> (j + kQK5_1 / 2)) & 1u) << 4;
    const int x0 = (b.qs[j] & 0x0F) | high0;
    const int x1 = (b.qs[j] >> 4) | high1;
    y[j] = static_cast<float>(x0) * d + m;
    y[j + kQK5_1 / 2] = static_cast<float>(x1) * d + m;
  }
}

constexpr void dequantize_block(const BlockQ8_0& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK8_0; ++j)
    y[j] = static_cast<float>(b.qs[j]) * d;
}

constexpr void dequantize_block(const BlockQ2_K& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  int sub = 0;  // sub-block of 16, in output order
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* q = b.qs + 32 * half;
    for (int shift = 0; shift < 8; shift += 2) {
      for (int part = 0; part < 2; ++part, ++sub) {  // the two sub-blocks sharing this shift
        const std::uint8_t sc = b.scales[sub];
        const float dl = d * static_cast<float>(sc & 0xF);
        const float ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) {
          const int code = (q[16 * part + l] >> shift) & 3;
          *y++ = dl * static_cast<float>(code) - ml;
        }
      }
    }
  }
}

constexpr void dequantize_block(const BlockQ3_K& b, float* y) noexcept {
  const float d_all = fp16_to_fp32(b.d);
  int sub = 0;
  std::uint8_t mask = 1;  // hmask bit of the current group of 32
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* q = b.qs + 32 * half;
    for (int shift = 0; shift < 8; shift += 2, mask = static_cast<std::uint8_t>(mask << 1)) {
      for (int part = 0; part < 2; ++part, ++sub) {
        const float dl = d_all * static_cast<float>(detail::q3_k_scale_code(sub, b.scales) - 32);
        for (int l = 16 * part; l < 16 * part + 16; ++l) {
          const int low = (q[l] >> shift) & 3;
          const int code = low - ((b.hmask[l] & mask) != 0 ? 0 : 4);
          *y++ = dl * static_cast<float>(code);
        }
      }
    }
  }
}

constexpr void dequantize_block(const BlockQ4_K& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  const std::uint8_t* q = b.qs;
  for (int sub = 0; sub < 8; sub += 2, q += 32) {
    const detail::ScaleMin lo = detail::k4_scale_min(sub, b.scales);
    const detail::ScaleMin hi = detail::k4_scale_min(sub + 1, b.scales);
    const float d1 = d * static_cast<float>(lo.scale);
    const float m1 = dmin * static_cast<float>(lo.min);
    const float d2 = d * static_cast<float>(hi.scale);
    const float m2 = dmin * static_cast<float>(hi.min);
    for (int l = 0; l < 32; ++l)
      *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l)
      *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
  }
}

constexpr void dequantize_block(const BlockQ5_K& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  const float dmin = fp16_to_fp32(b.dmin);
  const std::uint8_t* ql = b.qs;
  for (int sub = 0; sub < 8; sub += 2, ql += 32) {
    const detail::ScaleMin lo = detail::k4_scale_min(sub, b.scales);
    const detail::ScaleMin hi = detail::k4_scale_min(sub + 1, b.scales);
    const float d1 = d * static_cast<float>(lo.scale);
    const float m1 = dmin * static_cast<float>(lo.min);
    const float d2 = d * static_cast<float>(hi.scale);
    const float m2 = dmin * static_cast<float>(hi.min);
    const int bit_lo = sub;  // qh bit of sub-block `sub`; sub + 1 uses the next bit
    for (int l = 0; l < 32; ++l) {
      const int code = (ql[l] & 0xF) | (((b.qh[l] >> bit_lo) & 1) << 4);
      *y++ = d1 * static_cast<float>(code) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const int code = (ql[l] >> 4) | (((b.qh[l] >> (bit_lo + 1)) & 1) << 4);
      *y++ = d2 * static_cast<float>(code) - m2;
    }
  }
}

// Q6_K: per half of 128 elements, ql[64 * half + l] holds elements l (low nibble) and l + 64
// (high nibble), ql[64 * half + 32 + l] elements l + 32 and l + 96; qh[32 * half + l] holds the
// two high bits of elements l, l + 32, l + 64, l + 96 at bits 0, 2, 4, 6. Sub-block s (of 16
// elements) uses scales[s].
constexpr void dequantize_block(const BlockQ6_K& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* ql = b.ql + 64 * half;
    const std::uint8_t* qh = b.qh + 32 * half;
    const std::int8_t* sc = b.scales + 8 * half;
    float* out = y + 128 * half;
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      out[l] = (d * static_cast<float>(sc[is])) * static_cast<float>(q1);
      out[l + 32] = (d * static_cast<float>(sc[is + 2])) * static_cast<float>(q2);
      out[l + 64] = (d * static_cast<float>(sc[is + 4])) * static_cast<float>(q3);
      out[l + 96] = (d * static_cast<float>(sc[is + 6])) * static_cast<float>(q4);
    }
  }
}

constexpr void dequantize_block(const BlockIQ4_NL& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK4_NL / 2; ++j) {
    y[j] = d * static_cast<float>(kIQ4NLValues[b.qs[j] & 0xF]);
    y[j + kQK4_NL / 2] = d * static_cast<float>(kIQ4NLValues[b.qs[j] >> 4]);
  }
}

constexpr void dequantize_block(const BlockIQ4_XS& b, float* y) noexcept {
  const float d = fp16_to_fp32(b.d);
  for (int ib = 0; ib < kQK_K / 32; ++ib) {
    const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
    const int high = (b.scales_h >> (2 * ib)) & 3;
    const float dl = d * static_cast<float>((low | (high << 4)) - 32);
    const std::uint8_t* qs = b.qs + 16 * ib;
    for (int j = 0; j < 16; ++j) {
      y[32 * ib + j] = dl * static_cast<float>(kIQ4NLValues[qs[j] & 0xF]);
      y[32 * ib + j + 16] = dl * static_cast<float>(kIQ4NLValues[qs[j] >> 4]);
    }
  }
}

// Decodes n_elements / block_size consecutive blocks into y.
template <typename Block>
constexpr void dequantize_row(const Block* x, float* y, std::size_t n_elements) noexcept {
  constexpr std::size_t kBlock = BlockTraits<Block>::kElements;
  for (std::size_t i = 0; i < n_elements / kBlock; ++i)
    dequantize_block(x[i], y + i * kBlock);
}

// ggml-style names for the row decoders.
inline void dequantize_row_q4_0(const BlockQ4_0* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q4_1(const BlockQ4_1* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q5_0(const BlockQ5_0* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q5_1(const BlockQ5_1* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q8_0(const BlockQ8_0* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q2_K(const BlockQ2_K* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q3_K(const BlockQ3_K* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q4_K(const BlockQ4_K* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q5_K(const BlockQ5_K* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_q6_K(const BlockQ6_K* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_iq4_xs(const BlockIQ4_XS* x, float* y, std::size_t n) {
  dequantize_row(x, y, n);
}
inline void dequantize_row_f16(const std::uint16_t* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    y[i] = fp16_to_fp32(x[i]);
}
inline void dequantize_row_bf16(const std::uint16_t* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    y[i] = bf16_to_fp32(x[i]);
}

}  // namespace eredu::encoding
