#pragma once
// Byte layouts of the ggml block encodings eredu reads (GGUF tensor types), as packed structs.
//
// A block is the unit a quantized tensor is stored in: `block_elements` consecutive values of a
// row (32, or 256 for the K-quants and IQ4_XS) with their scales. Every field is little-endian;
// F16 scales are kept as raw bits (`std::uint16_t`, decode with fp16_to_fp32). The structs have
// alignment 1 and no padding, so their size is the on-disk block size; each size is checked
// against eredu::dtype_info(). Layouts follow ggml-common.h (learned from the public sources; the
// field names are ggml's so that the formats can be compared side by side).

#include <bit>
#include <cstddef>
#include <cstdint>

#include "eredu/core/dtype.hpp"

namespace eredu::encoding {

static_assert(std::endian::native == std::endian::little,
              "the block structs read little-endian fields in place; big-endian hosts are not "
              "supported");

inline constexpr int kQK4_0 = 32;       // elements per Q4_0 block
inline constexpr int kQK4_1 = 32;       // elements per Q4_1 block
inline constexpr int kQK5_0 = 32;       // elements per Q5_0 block
inline constexpr int kQK5_1 = 32;       // elements per Q5_1 block
inline constexpr int kQK8_0 = 32;       // elements per Q8_0 block
inline constexpr int kQK4_NL = 32;      // elements per IQ4_NL block
inline constexpr int kQK_K = 256;       // elements per K-quant / IQ4_XS super-block
inline constexpr int kKScaleSize = 12;  // bytes of packed 6-bit scales in Q4_K / Q5_K

// Q4_0: value = d * (q - 8), q a 4-bit code. Element j (< 16) is the low nibble of qs[j],
// element j + 16 its high nibble.
struct [[gnu::packed]] BlockQ4_0 {
  std::uint16_t d;  // F16 scale
  std::uint8_t qs[kQK4_0 / 2];
};

// Q4_1: value = d * q + m, q a 4-bit code; nibble order as Q4_0.
struct [[gnu::packed]] BlockQ4_1 {
  std::uint16_t d;  // F16 scale
  std::uint16_t m;  // F16 minimum
  std::uint8_t qs[kQK4_1 / 2];
};

// Q5_0: value = d * (q - 16), q a 5-bit code: low 4 bits in qs as Q4_0, the fifth bit of element
// i in bit i of the little-endian 32-bit word qh.
struct [[gnu::packed]] BlockQ5_0 {
  std::uint16_t d;  // F16 scale
  std::uint8_t qh[4];
  std::uint8_t qs[kQK5_0 / 2];
};

// Q5_1: value = d * q + m, bits as Q5_0.
struct [[gnu::packed]] BlockQ5_1 {
  std::uint16_t d;  // F16 scale
  std::uint16_t m;  // F16 minimum
  std::uint8_t qh[4];
  std::uint8_t qs[kQK5_1 / 2];
};

// Q8_0: value = d * q, q a signed byte.
struct [[gnu::packed]] BlockQ8_0 {
  std::uint16_t d;  // F16 scale
  std::int8_t qs[kQK8_0];
};

// Q2_K: 16 sub-blocks of 16. scales[s] holds a 4-bit scale (low nibble) and a 4-bit minimum (high
// nibble); value = (d * scale) * q - dmin * min, q a 2-bit code. Within each half of 128, byte
// qs[32 * half + l] holds, at bit 2k, the element 128 * half + 32 * k + l.
struct [[gnu::packed]] BlockQ2_K {
  std::uint8_t scales[kQK_K / 16];
  std::uint8_t qs[kQK_K / 4];
  std::uint16_t d;     // F16 super-block scale of the scales
  std::uint16_t dmin;  // F16 super-block scale of the minimums
};

// Q3_K: 16 sub-blocks of 16 with signed 6-bit scales (stored + 32, packed in 12 bytes);
// value = (d * (scale - 32)) * q, q in [-4, 3]: 2 low bits in qs as Q2_K, and the high bit in
// hmask (a cleared bit subtracts 4). hmask[l] bit k belongs to element 32 * k + l.
struct [[gnu::packed]] BlockQ3_K {
  std::uint8_t hmask[kQK_K / 8];
  std::uint8_t qs[kQK_K / 4];
  std::uint8_t scales[12];
  std::uint16_t d;  // F16 super-block scale
};

// Q4_K: 8 sub-blocks of 32 with 6-bit scales and 6-bit minimums packed in 12 bytes;
// value = (d * scale) * q - dmin * min, q a 4-bit code. Each 32 bytes of qs hold 64 elements:
// the low nibbles the first 32, the high nibbles the next 32.
struct [[gnu::packed]] BlockQ4_K {
  std::uint16_t d;     // F16 super-block scale of the scales
  std::uint16_t dmin;  // F16 super-block scale of the minimums
  std::uint8_t scales[kKScaleSize];
  std::uint8_t qs[kQK_K / 2];
};

// Q5_K: as Q4_K with a fifth bit per element: qh[l] bit k belongs to element 32 * k + l.
struct [[gnu::packed]] BlockQ5_K {
  std::uint16_t d;     // F16 super-block scale of the scales
  std::uint16_t dmin;  // F16 super-block scale of the minimums
  std::uint8_t scales[kKScaleSize];
  std::uint8_t qh[kQK_K / 8];
  std::uint8_t qs[kQK_K / 2];
};

// Q6_K: 16 sub-blocks of 16 with signed 8-bit scales; value = (d * scale) * (q - 32), q a 6-bit
// code: 4 low bits in ql, 2 high bits in qh (bit layout at its decoder in dequantize_block.hpp).
struct [[gnu::packed]] BlockQ6_K {
  std::uint8_t ql[kQK_K / 2];
  std::uint8_t qh[kQK_K / 4];
  std::int8_t scales[kQK_K / 16];
  std::uint16_t d;  // F16 super-block scale
};

// IQ4_NL: value = d * kIQ4NLValues[q], q a 4-bit index; nibble order as Q4_0.
struct [[gnu::packed]] BlockIQ4_NL {
  std::uint16_t d;  // F16 scale
  std::uint8_t qs[kQK4_NL / 2];
};

// IQ4_XS: 8 sub-blocks of 32 with 6-bit scales (low 4 bits in scales_l, 2 high bits in
// scales_h); value = (d * (scale - 32)) * kIQ4NLValues[q]; each 16 bytes of qs hold one
// sub-block in Q4_0 nibble order.
struct [[gnu::packed]] BlockIQ4_XS {
  std::uint16_t d;  // F16 super-block scale
  std::uint16_t scales_h;
  std::uint8_t scales_l[kQK_K / 64];
  std::uint8_t qs[kQK_K / 2];
};

// Q8_K: not a stored weight encoding but the 8-bit activation blocks the K-quant and IQ4_XS
// integer dot products read (ggml's block_q8_K): value = d * q, and bsums[s] = the sum of the 16
// codes of sub-block s, so that a weight format's per-sub-block minimum (or code offset) costs one
// multiply per sub-block instead of one per element.
struct BlockQ8_K {
  float d;  // scale (F32, unlike the F16 scales of stored blocks)
  std::int8_t qs[kQK_K];
  std::int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 4 + kQK_K + kQK_K / 8);

// The non-linear 4-bit codebook of IQ4_NL and IQ4_XS.
inline constexpr std::int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

// Block struct <-> DType, for generic code.
template <typename Block>
struct BlockTraits;

#define EREDU_ENCODING_BLOCK_TRAITS_(Block, dtype_value)                             \
  template <>                                                                        \
  struct BlockTraits<Block> {                                                        \
    static constexpr DType kDType = dtype_value;                                     \
    static constexpr std::size_t kElements = dtype_info(dtype_value).block_elements; \
  };                                                                                 \
  static_assert(sizeof(Block) == dtype_info(dtype_value).block_bytes,                \
                #Block " does not match the ggml block size");                       \
  static_assert(alignof(Block) == 1, #Block " must be readable at any byte offset")

EREDU_ENCODING_BLOCK_TRAITS_(BlockQ4_0, DType::kQ4_0);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ4_1, DType::kQ4_1);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ5_0, DType::kQ5_0);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ5_1, DType::kQ5_1);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ8_0, DType::kQ8_0);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ2_K, DType::kQ2_K);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ3_K, DType::kQ3_K);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ4_K, DType::kQ4_K);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ5_K, DType::kQ5_K);
EREDU_ENCODING_BLOCK_TRAITS_(BlockQ6_K, DType::kQ6_K);
EREDU_ENCODING_BLOCK_TRAITS_(BlockIQ4_NL, DType::kIQ4_NL);
EREDU_ENCODING_BLOCK_TRAITS_(BlockIQ4_XS, DType::kIQ4_XS);

#undef EREDU_ENCODING_BLOCK_TRAITS_

// Field offsets that the size alone would not catch (a swapped d/scales order).
static_assert(offsetof(BlockQ2_K, d) == 80 && offsetof(BlockQ3_K, d) == 108);
static_assert(offsetof(BlockQ4_K, scales) == 4 && offsetof(BlockQ5_K, qh) == 16);
static_assert(offsetof(BlockQ6_K, scales) == 192 && offsetof(BlockQ6_K, d) == 208);
static_assert(offsetof(BlockIQ4_XS, scales_l) == 4 && offsetof(BlockIQ4_XS, qs) == 8);
static_assert(offsetof(BlockQ5_0, qs) == 6 && offsetof(BlockQ5_1, qs) == 8);

}  // namespace eredu::encoding
