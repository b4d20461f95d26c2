#pragma once
// Dot traits (see block_dot.hpp) of IQ4_NL and IQ4_XS: the code of an element is its signed
// codebook value (-127 .. 113), so the integer sums are exact and there is no min.

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/backends/cuda/decode/iq4.hpp"
#include "eredu/backends/cuda/dot/legacy_dot.hpp"

namespace eredu::cuda::dot {

// The codebook values of elements 4q .. 4q + 3 (q < 8) of a 16-byte nibble array, one per byte.
EREDU_HD inline int codebook4(const std::uint8_t* qs, int q) {
  const std::uint32_t nibbles = nibbles4(qs, q);
  std::uint32_t out = 0;
  for (int k = 0; k < 4; ++k) {
    const int value = decode::iq4_codebook(static_cast<int>((nibbles >> (8 * k)) & 0xFu));
    out |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(value)) << (8 * k);
  }
  return static_cast<int>(out);
}

struct DotIQ4_NL {
  using Format = decode::IQ4_NL;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = false;
  EREDU_HD static int codes4(const std::uint8_t* b, int q) { return codebook4(b + 2, q); }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    return decode::iq4_codebook(decode::nibble32(b + 2, i));
  }
  EREDU_HD static float scale(const std::uint8_t* b, int) {
    return decode::f16_to_f32(decode::load_u16(b));
  }
};

struct DotIQ4_XS {
  using Format = decode::IQ4_XS;
  static constexpr int kGroup = 32;
  static constexpr bool kMin = false;
  // Sub-block j has its 16 nibble bytes at 8 + 16 j, in Q4_0 order.
  EREDU_HD static int codes4(const std::uint8_t* b, int q) {
    return codebook4(b + 8 + 16 * (q / 8), q % 8);
  }
  EREDU_HD static int code(const std::uint8_t* b, int i) {
    return decode::iq4_codebook(decode::nibble32(b + 8 + 16 * (i / 32), i % 32));
  }
  EREDU_HD static float scale(const std::uint8_t* b, int g) {
    const int low = (b[4 + g / 2] >> (4 * (g % 2))) & 0xF;
    const int high = (decode::load_u16(b + 2) >> (2 * g)) & 3;
    return decode::f16_to_f32(decode::load_u16(b)) * static_cast<float>((low | (high << 4)) - 32);
  }
};

}  // namespace eredu::cuda::dot
