#pragma once
// Dot traits (see block_dot.hpp) of the K-quants against q8_1 blocks of 32, ggml-CUDA's choice:
// a 256-element super-block meets eight activation blocks, each with its own scale. Q2_K, Q3_K
// and Q6_K scale groups of 16 elements, Q4_K and Q5_K groups of 32. Codes are those of the
// decoders (decode/k_quants.hpp), made signed where the format has an offset (Q3_K: -4 for a
// cleared high bit, Q6_K: -32), so the integer sums are exact; Q2_K / Q4_K / Q5_K keep unsigned
// codes and a min per group. Scales are grouped as the decoders group them (d * float(scale)).

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/backends/cuda/decode/k_quants.hpp"
#include "eredu/backends/cuda/dot/dp4a.hpp"

namespace eredu::cuda::dot {

struct DotQ2_K {
  using Format = decode::Q2_K;
  static constexpr int kGroup = 16;
  static constexpr bool kMin = true;
  // Element i = 128 * half + 32 * k + l: bits 2k of qs[32 * half + l].
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    const int i = 4 * q;
    const std::uint32_t word = decode::load_u32(b + 16 + 32 * (i / 128) + i % 32);
    return static_cast<int>((word >> (2 * ((i % 128) / 32))) & 0x03030303u);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    return (b[16 + 32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
  }
  EREDU_HD static float scale(const std::uint8_t* b, int g) {
    return decode::f16_to_f32(decode::load_u16(b + 80)) * static_cast<float>(b[g] & 0xF);
  }
  EREDU_HD static float min(const std::uint8_t* b, int g) {
    return -(decode::f16_to_f32(decode::load_u16(b + 82)) * static_cast<float>(b[g] >> 4));
  }
};

struct DotQ3_K {
  using Format = decode::Q3_K;
  static constexpr int kGroup = 16;
  static constexpr bool kMin = false;
  // Low 2 bits as Q2_K (qs at 32), high bit at bit 4 * half + k of hmask[l]; code = low | high << 2
  // minus 4 (a cleared high bit subtracts 4).
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    const int i = 4 * q;
    const int half = i / 128;
    const int k = (i % 128) / 32;
    const int l = i % 32;
    const std::uint32_t low = (decode::load_u32(b + 32 + 32 * half + l) >> (2 * k)) & 0x03030303u;
    const std::uint32_t high = (decode::load_u32(b + l) >> (4 * half + k)) & 0x01010101u;
    return sub_bytes(low | (high << 2), 4);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    const int half = i / 128;
    const int k = (i % 128) / 32;
    const int l = i % 32;
    const int low = (b[32 + 32 * half + l] >> (2 * k)) & 3;
    return low - (((b[l] >> (4 * half + k)) & 1) != 0 ? 0 : 4);
  }
  EREDU_HD static float scale(const std::uint8_t* b, int g) {
    const std::uint8_t* scales = b + 96;
    const int low = g < 8 ? (scales[g] & 0xF) : (scales[g - 8] >> 4);
    const int high = (scales[8 + g % 4] >> (2 * (g / 4))) & 3;
    return decode::f16_to_f32(decode::load_u16(b + 108)) *
           static_cast<float>((low | (high << 4)) - 32);
  }
};

struct DotQ4_K {
  using Format = decode::Q4_K;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = true;
  // Sub-block j = i / 32: bytes 32 * (i / 64) + i % 32 of qs (at 16), low nibble for even j.
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    const int i = 4 * q;
    const std::uint32_t word = decode::load_u32(b + 16 + 32 * (i / 64) + i % 32);
    return static_cast<int>((word >> (4 * ((i / 32) % 2))) & 0x0F0F0F0Fu);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    const std::uint8_t byte = b[16 + 32 * (i / 64) + i % 32];
    return (i / 32) % 2 == 0 ? (byte & 0xF) : (byte >> 4);
  }
  EREDU_HD static float scale(const std::uint8_t* b, int g) {
    return decode::f16_to_f32(decode::load_u16(b)) * static_cast<float>(decode::k4_scale(b + 4, g));
  }
  EREDU_HD static float min(const std::uint8_t* b, int g) {
    return -(decode::f16_to_f32(decode::load_u16(b + 2)) *
             static_cast<float>(decode::k4_min(b + 4, g)));
  }
};

struct DotQ5_K {
  using Format = decode::Q5_K;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = true;
  // Low nibbles as Q4_K (qs at 48), the fifth bit at bit i / 32 of qh[i % 32] (qh at 16).
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    const int i = 4 * q;
    const int j = i / 32;
    const std::uint32_t low =
        (decode::load_u32(b + 48 + 32 * (i / 64) + i % 32) >> (4 * (j % 2))) & 0x0F0F0F0Fu;
    const std::uint32_t high = (decode::load_u32(b + 16 + i % 32) >> j) & 0x01010101u;
    return static_cast<int>(low | (high << 4));
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    const int j = i / 32;
    const std::uint8_t byte = b[48 + 32 * (i / 64) + i % 32];
    const int low = j % 2 == 0 ? (byte & 0xF) : (byte >> 4);
    return low | (((b[16 + i % 32] >> j) & 1) << 4);
  }
  EREDU_HD static float scale(const std::uint8_t* b, int g) {
    return decode::f16_to_f32(decode::load_u16(b)) * static_cast<float>(decode::k4_scale(b + 4, g));
  }
  EREDU_HD static float min(const std::uint8_t* b, int g) {
    return -(decode::f16_to_f32(decode::load_u16(b + 2)) *
             static_cast<float>(decode::k4_min(b + 4, g)));
  }
};

struct DotQ6_K {
  using Format = decode::Q6_K;
  static constexpr int kGroup = 16;
  static constexpr bool kMin = false;
  // Element i = 128 * half + 32 * quarter + l: low nibble in ql[64 * half + 32 * (quarter % 2) + l]
  // (high nibble for quarters 2, 3), high 2 bits at bit 2 * quarter of qh[32 * half + l] (qh at
  // 128).
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    const int i = 4 * q;
    const int half = i / 128;
    const int quarter = (i % 128) / 32;
    const int l = i % 32;
    const std::uint32_t low =
        (decode::load_u32(b + 64 * half + 32 * (quarter % 2) + l) >> (quarter < 2 ? 0 : 4)) &
        0x0F0F0F0Fu;
    const std::uint32_t high =
        (decode::load_u32(b + 128 + 32 * half + l) >> (2 * quarter)) & 0x03030303u;
    return sub_bytes(low | (high << 4), 32);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    const int half = i / 128;
    const int quarter = (i % 128) / 32;
    const int l = i % 32;
    const std::uint8_t low_byte = b[64 * half + 32 * (quarter % 2) + l];
    const int low = quarter < 2 ? (low_byte & 0xF) : (low_byte >> 4);
    return (low | (((b[128 + 32 * half + l] >> (2 * quarter)) & 3) << 4)) - 32;
  }
  EREDU_HD static float scale(const std::uint8_t* b, int g) {
    return decode::f16_to_f32(decode::load_u16(b + 208)) *
           static_cast<float>(static_cast<std::int8_t>(b[192 + g]));
  }
};

}  // namespace eredu::cuda::dot
