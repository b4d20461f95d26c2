#pragma once
// F16 and BF16 -> F32, exact, and F32 -> F16 rounded to nearest even, on the host and on the
// device, and the two element-wise "block" formats built on them. F16 subnormals are decoded, never
// flushed to zero: every super-block scale of the quant-zoo Q6_K and IQ4_XS files is an F16
// subnormal, so a flushing conversion (some hardware modes) would decode those tensors to zeros. No
// device intrinsic is involved, so the host path and the device path compute the same bits by the
// same integer steps.

#include <cstdint>

#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::cuda::decode {

// F16 bits -> F32: the sign is kept (also on zero), Inf stays Inf, a NaN keeps its payload.
EREDU_HD inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) {
    return float_from_bits(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
  }
  // Zero or subnormal: mantissa * 2^-24. Both factors are exact in F32 and so is their product
  // (at most 10 significant bits), so no normalisation loop or count-leading-zeros is needed.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2^-24
  return float_from_bits(sign | float_bits(magnitude));
}

// BF16 bits -> F32: BF16 is the upper half of an F32.
EREDU_HD inline float bf16_to_f32(std::uint16_t b) {
  return float_from_bits(static_cast<std::uint32_t>(b) << 16);
}

// F32 -> F16 bits: the core's eredu::encoding::fp32_to_fp16 itself (round to nearest even,
// subnormals produced, overflow to Inf, NaN quieted), so activation scales rounded on the GPU equal
// the CPU backend's. It is constexpr with integer steps only; nvcc calls it from device code under
// --expt-relaxed-constexpr (backends/cuda/CMakeLists.txt), and host and device agree bit for bit.
EREDU_HD inline std::uint16_t f32_to_f16(float f) {
  return ::eredu::encoding::fp32_to_fp16(f);
}

// F16 / BF16 tensors as one-element blocks, so that generic code treats every encoding alike.
struct F16 {
  static constexpr int kBlockElements = 1;
  static constexpr int kBlockBytes = 2;
  EREDU_HD static float decode(const std::uint8_t* block, int /*i*/) {
    return f16_to_f32(load_u16(block));
  }
};

struct BF16 {
  static constexpr int kBlockElements = 1;
  static constexpr int kBlockBytes = 2;
  EREDU_HD static float decode(const std::uint8_t* block, int /*i*/) {
    return bf16_to_f32(load_u16(block));
  }
};

// Plain F32 (small checkpoints store their matrices so), a one-element block like the others.
struct F32 {
  static constexpr int kBlockElements = 1;
  static constexpr int kBlockBytes = 4;
  EREDU_HD static float decode(const std::uint8_t* block, int /*i*/) {
    return float_from_bits(load_u32(block));
  }
};

}  // namespace eredu::cuda::decode
