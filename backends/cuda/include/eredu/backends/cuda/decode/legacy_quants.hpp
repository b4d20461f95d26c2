#pragma once
// The 32-element block formats (ggml's "legacy" quants): Q8_0, Q4_0, Q4_1, Q5_0, Q5_1.
// Each format is a type with its block size, its block bytes and `decode(block, i)`, the float
// value of element i (0 <= i < 32) of the block starting at `block`. Byte offsets follow
// ggml-common.h (and eredu::encoding's Block structs, which the unit tests compare them with).
//
// Every value is computed with ggml's grouping (float(q) * d, then + m for the affine ones), so
// the result is bit-identical to ggml's reference decoder including the sign of a zero. The
// products are exact in F32 and the affine formats round once at most, so nvcc's default fused
// multiply-add contraction cannot change a result.

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"

namespace eredu::cuda::decode {

// The 4-bit code of element i in ggml's 32-element nibble order: element j < 16 is the low
// nibble of qs[j], element j + 16 the high nibble of qs[j].
EREDU_HD inline int nibble32(const std::uint8_t* qs, int i) {
  return i < 16 ? (qs[i] & 0x0F) : (qs[i - 16] >> 4);
}

// Q8_0: {f16 d; int8 qs[32]}, value = q * d.
struct Q8_0 {
  static constexpr int kBlockElements = 32;
  static constexpr int kBlockBytes = 34;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    return static_cast<float>(static_cast<std::int8_t>(block[2 + i])) * d;
  }
};

// Q4_0: {f16 d; u8 qs[16]}, value = (q - 8) * d.
struct Q4_0 {
  static constexpr int kBlockElements = 32;
  static constexpr int kBlockBytes = 18;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    return static_cast<float>(nibble32(block + 2, i) - 8) * d;
  }
};

// Q4_1: {f16 d; f16 m; u8 qs[16]}, value = q * d + m.
struct Q4_1 {
  static constexpr int kBlockElements = 32;
  static constexpr int kBlockBytes = 20;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    const float m = f16_to_f32(load_u16(block + 2));
    return static_cast<float>(nibble32(block + 4, i)) * d + m;
  }
};

// Q5_0: {f16 d; u8 qh[4]; u8 qs[16]}, value = (q - 16) * d; the fifth bit of element i is bit i
// of the little-endian word qh.
struct Q5_0 {
  static constexpr int kBlockElements = 32;
  static constexpr int kBlockBytes = 22;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    const int high = static_cast<int>((load_u32(block + 2) >> i) & 1u) << 4;
    return static_cast<float>((nibble32(block + 6, i) | high) - 16) * d;
  }
};

// Q5_1: {f16 d; f16 m; u8 qh[4]; u8 qs[16]}, value = q * d + m, bits as Q5_0.
struct Q5_1 {
  static constexpr int kBlockElements = 32;
  static constexpr int kBlockBytes = 24;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    const float m = f16_to_f32(load_u16(block + 2));
    const int high = static_cast<int>((load_u32(block + 4) >> i) & 1u) << 4;
    return static_cast<float>(nibble32(block + 8, i) | high) * d + m;
  }
};

}  // namespace eredu::cuda::decode
