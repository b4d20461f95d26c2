#pragma once
// The non-linear 4-bit formats IQ4_NL (32-element blocks) and IQ4_XS (256-element super-blocks):
// a 4-bit index into a fixed 16-entry codebook, times a scale. Grouping as ggml's reference:
//   IQ4_NL   d * float(codebook[q])
//   IQ4_XS   (d * float(scale - 32)) * float(codebook[q])

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/backends/cuda/decode/legacy_quants.hpp"

namespace eredu::cuda::decode {

// The codebook {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}, one
// signed byte per entry, entries 0-7 in kIq4CodebookLow and 8-15 in kIq4CodebookHigh (entry 0 in
// the lowest byte). Two scalar constants instead of an array: a namespace-scope constexpr array
// indexed at run time is not addressable from device code, and a per-call local array would
// live in local memory; a shift of a 64-bit immediate stays in registers.
inline constexpr std::uint64_t kIq4CodebookLow = 0xF6EADDCFBFAD9881ull;
inline constexpr std::uint64_t kIq4CodebookHigh = 0x7159453526190D01ull;

// Codebook entry q (0..15).
EREDU_HD inline int iq4_codebook(int q) {
  const std::uint64_t word = q < 8 ? kIq4CodebookLow : kIq4CodebookHigh;
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(word >> (8 * (q & 7))));
}

// IQ4_NL: {f16 d; u8 qs[16]}, nibble order as Q4_0.
struct IQ4_NL {
  static constexpr int kBlockElements = 32;
  static constexpr int kBlockBytes = 18;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    return d * static_cast<float>(iq4_codebook(nibble32(block + 2, i)));
  }
};

// IQ4_XS: {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}. Sub-block j = i / 32 has the 6-bit
// scale code (nibble j % 2 of scales_l[j / 2]) | (bits 2j of scales_h) << 4, and its 16 bytes
// qs[16 * j ...] in Q4_0 nibble order.
struct IQ4_XS {
  static constexpr int kBlockElements = 256;
  static constexpr int kBlockBytes = 136;
  EREDU_HD static float decode(const std::uint8_t* block, int i) {
    const float d = f16_to_f32(load_u16(block));
    const int j = i / 32;
    const int scale_low = (block[4 + j / 2] >> (4 * (j % 2))) & 0xF;
    const int scale_high = (load_u16(block + 2) >> (2 * j)) & 3;
    const float dl = d * static_cast<float>((scale_low | (scale_high << 4)) - 32);
    return dl * static_cast<float>(iq4_codebook(nibble32(block + 8 + 16 * j, i % 32)));
  }
};

}  // namespace eredu::cuda::decode
