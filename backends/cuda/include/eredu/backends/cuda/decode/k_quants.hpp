#pragma once
// The 256-element super-block formats (ggml's K-quants): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
// `decode(block, i)` is the float value of element i (0 <= i < 256). A kernel that decodes a
// whole sub-block calls it for consecutive i and lets the compiler hoist the shared scale loads;
// every element is independent, so threads of a warp can each take one.
//
// Grouping follows ggml's reference decoders, which makes the results bit-identical to them,
// the sign of zero included (regrouping, e.g. d * float(scale * q), flips the sign of some zeros):
//   Q2_K, Q4_K, Q5_K   (d * float(scale)) * float(q) - dmin * float(min)
//   Q3_K               (d * float(scale - 32)) * float(q)
//   Q6_K               (d * float(scale)) * float(q - 32)
// Byte offsets follow ggml-common.h; the unit tests compare them with eredu::encoding's structs.

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"

namespace eredu::cuda::decode {

// Q4_K / Q5_K: the 6-bit scale (min = false) or minimum (min = true) of sub-block j (0..7) from
// the 12 packed bytes. Sub-blocks 0-3 keep theirs in the low 6 bits of bytes j and j + 4;
// sub-blocks 4-7 the low 4 bits in the nibbles of byte j + 4, the high 2 bits in the top bits of
// bytes j - 4 and j.
EREDU_HD inline int k4_scale(const std::uint8_t* scales, int j) {
  if (j < 4) return scales[j] & 63;
  return (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
}
EREDU_HD inline int k4_min(const std::uint8_t* scales, int j) {
  if (j < 4) return scales[j + 4] & 63;
  return (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
}

// Q2_K: {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}. scales[i / 16]: low nibble the scale, high
// nibble the minimum. Element i = 128 * half + 32 * k + l has its 2-bit code at bits 2k of
// qs[32 * half + l].
struct Q2_K {
  static constexpr int kBlockElements = 256;
  static constexpr int kBlockBytes = 84;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block + 80));
    const float dmin = f16_to_f32(load_u16(block + 82));
    const std::uint8_t sc = block[i / 16];
    const int shift = 2 * ((i % 128) / 32);
    const int code = (block[16 + 32 * (i / 128) + i % 32] >> shift) & 3;
    return (d * static_cast<float>(sc & 0xF)) * static_cast<float>(code) -
           dmin * static_cast<float>(sc >> 4);
  }
};

// Q3_K: {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}. Element i = 128 * half + 32 * k + l:
// the low 2 bits as Q2_K, the high bit is bit 4 * half + k of hmask[l] (a cleared bit subtracts
// 4). The 6-bit scale code of sub-block s = i / 16: low 4 bits in the low nibble of scales[s]
// (s < 8) or the high nibble of scales[s - 8]; high 2 bits at bit 2 * (s / 4) of scales[8 + s % 4].
struct Q3_K {
  static constexpr int kBlockElements = 256;
  static constexpr int kBlockBytes = 110;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const std::uint8_t* hmask = block;
    const std::uint8_t* qs = block + 32;
    const std::uint8_t* scales = block + 96;
    const float d = f16_to_f32(load_u16(block + 108));
    const int half = i / 128;
    const int k = (i % 128) / 32;
    const int l = i % 32;
    const int s = i / 16;
    const int scale_low = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
    const int scale_high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    const int scale = (scale_low | (scale_high << 4)) - 32;
    const int low = (qs[32 * half + l] >> (2 * k)) & 3;
    const int code = low - (((hmask[l] >> (4 * half + k)) & 1) != 0 ? 0 : 4);
    return (d * static_cast<float>(scale)) * static_cast<float>(code);
  }
};

// Q4_K: {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}. Element i of sub-block j = i / 32: qs
// byte 32 * (i / 64) + i % 32, low nibble for even j, high nibble for odd j.
struct Q4_K {
  static constexpr int kBlockElements = 256;
  static constexpr int kBlockBytes = 144;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    const float dmin = f16_to_f32(load_u16(block + 2));
    const std::uint8_t* scales = block + 4;
    const int j = i / 32;
    const std::uint8_t byte = block[16 + 32 * (i / 64) + i % 32];
    const int code = (j % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    return (d * static_cast<float>(k4_scale(scales, j))) * static_cast<float>(code) -
           dmin * static_cast<float>(k4_min(scales, j));
  }
};

// Q5_K: {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: as Q4_K, with the fifth bit
// of element i at bit i / 32 of qh[i % 32].
struct Q5_K {
  static constexpr int kBlockElements = 256;
  static constexpr int kBlockBytes = 176;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    const float dmin = f16_to_f32(load_u16(block + 2));
    const std::uint8_t* scales = block + 4;
    const int j = i / 32;
    const std::uint8_t byte = block[48 + 32 * (i / 64) + i % 32];
    const int low = (j % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    const int code = low | (((block[16 + i % 32] >> j) & 1) << 4);
    return (d * static_cast<float>(k4_scale(scales, j))) * static_cast<float>(code) -
           dmin * static_cast<float>(k4_min(scales, j));
  }
};

// Q6_K: {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}. Element i = 128 * half + 32 * quarter + l:
// low 4 bits in ql[64 * half + 32 * (quarter % 2) + l] (low nibble for quarters 0 and 1, high
// nibble for 2 and 3), high 2 bits at bit 2 * quarter of qh[32 * half + l]; scale scales[i / 16].
struct Q6_K {
  static constexpr int kBlockElements = 256;
  static constexpr int kBlockBytes = 210;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block + 208));
    const int half = i / 128;
    const int quarter = (i % 128) / 32;
    const int l = i % 32;
    const std::uint8_t low_byte = block[64 * half + 32 * (quarter % 2) + l];
    const int low = quarter < 2 ? (low_byte & 0xF) : (low_byte >> 4);
    const int high = (block[128 + 32 * half + l] >> (2 * quarter)) & 3;
    const int scale = static_cast<std::int8_t>(block[192 + i / 16]);
    return (d * static_cast<float>(scale)) * static_cast<float>((low | (high << 4)) - 32);
  }
};

}  // namespace eredu::cuda::decode
