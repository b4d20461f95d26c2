#pragma once
// Dot traits (see block_dot.hpp) of the 32-element formats Q8_0, Q4_0, Q4_1, Q5_0, Q5_1. The
// offset formats Q4_0 / Q5_0 subtract their offset (8 / 16) from the codes before the dp4a, so
// their sums are exact signed integers and need no activation sum; the affine Q4_1 / Q5_1 keep
// unsigned codes and add min * s.

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/backends/cuda/decode/legacy_quants.hpp"
#include "eredu/backends/cuda/dot/dp4a.hpp"

namespace eredu::cuda::dot {

// The nibbles of elements 4q .. 4q + 3 (q < 8) of a 16-byte Q4_0-order nibble array, one per byte.
EREDU_HD inline std::uint32_t nibbles4(const std::uint8_t* qs, int q) {
  const std::uint32_t word = decode::load_u32(qs + 4 * (q % 4));
  return (q < 4 ? word : word >> 4) & 0x0F0F0F0Fu;
}

// Bit 4 of each byte: bits 4q .. 4q + 3 of the 32-bit high-bit word qh (element i's fifth bit is
// bit i of qh).
EREDU_HD inline std::uint32_t high_bits4(std::uint32_t qh, int q) {
  const std::uint32_t h = (qh >> (4 * q)) & 0xFu;
  return ((h & 1u) << 4) | ((h & 2u) << 11) | ((h & 4u) << 18) | ((h & 8u) << 25);
}

struct DotQ8_0 {
  using Format = decode::Q8_0;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = false;
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    return static_cast<int>(decode::load_u32(b + 2 + 4 * q));
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    return static_cast<std::int8_t>(b[2 + i]);
  }
  EREDU_HD static float scale(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b));
  }
};

struct DotQ4_0 {
  using Format = decode::Q4_0;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = false;
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    return sub_bytes(nibbles4(b + 2, q), 8);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) { return decode::nibble32(b + 2, i) - 8; }
  EREDU_HD static float scale(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b));
  }
};

struct DotQ4_1 {
  using Format = decode::Q4_1;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = true;
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    return static_cast<int>(nibbles4(b + 4, q));
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) { return decode::nibble32(b + 4, i); }
  EREDU_HD static float scale(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b));
  }
  EREDU_HD static float min(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b + 2));
  }
};

struct DotQ5_0 {
  using Format = decode::Q5_0;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = false;
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    return sub_bytes(nibbles4(b + 6, q) | high_bits4(decode::load_u32(b + 2), q), 16);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    return (decode::nibble32(b + 6, i) |
            (static_cast<int>((decode::load_u32(b + 2) >> i) & 1u) << 4)) -
           16;
  }
  EREDU_HD static float scale(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b));
  }
};

struct DotQ5_1 {
  using Format = decode::Q5_1;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = true;
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    return static_cast<int>(nibbles4(b + 8, q) | high_bits4(decode::load_u32(b + 4), q));
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    return decode::nibble32(b + 8, i) |
           (static_cast<int>((decode::load_u32(b + 4) >> i) & 1u) << 4);
  }
  EREDU_HD static float scale(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b));
  }
  EREDU_HD static float min(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b + 2));
  }
};

}  // namespace eredu::cuda::dot
