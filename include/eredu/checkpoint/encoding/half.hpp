#pragma once
// Software IEEE-754 binary16 (F16) and bfloat16 (BF16) <-> binary32 conversions, bit-exact and
// constexpr. They are the scalar reference that every backend's conversion is checked against:
//
// * Widening (F16 -> F32, BF16 -> F32) is exact. F16 subnormals are decoded, never flushed; the
//   sign of zero is kept; Inf stays Inf and a NaN keeps its sign and payload bits (a signaling NaN
//   is not quieted), exactly as numpy's float16 -> float32 (the quant-zoo reference) does.
// * Narrowing (F32 -> F16, F32 -> BF16) rounds to nearest, ties to even, produces subnormals and
//   overflows to Inf, like x86 F16C `vcvtps2ph` with rounding mode 0 (what ggml's
//   GGML_FP32_TO_FP16 compiles to there). A NaN stays a NaN of the same sign with the quiet bit
//   set and the top payload bits kept.
//
// Namespace: eredu::encoding (the encodings are shared by the checkpoint layer and every backend).

#include <bit>
#include <cstdint>

namespace eredu::encoding {

// F16 bits -> F32, exact.
[[nodiscard]] constexpr float fp16_to_fp32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits = 0;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // Inf, or NaN with its payload
  } else if (exponent != 0) {
    bits = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal: value = mantissa * 2^-24. Its leading one, at bit p, becomes the implicit bit.
    const int p = 31 - std::countl_zero(mantissa);
    const std::uint32_t biased = static_cast<std::uint32_t>(p - 24 + 127);
    bits = sign | (biased << 23) | ((mantissa << (23 - p)) & 0x7FFFFFu);
  }
  return std::bit_cast<float>(bits);
}

// F32 -> F16 bits, round to nearest even.
[[nodiscard]] constexpr std::uint16_t fp32_to_fp16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN: quiet it, keep the top 9 payload bits
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x1FFu));
  }
  if (magnitude >= 0x477FF000u) {  // >= 65520 (halfway between 65504 and 2^16): Inf
    return static_cast<std::uint16_t>(sign | 0x7C00u);
  }
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 113) {
    // Below 2^-14: a subnormal F16 (or zero), in units of 2^-24.
    if (magnitude <= 0x33000000u) return sign;  // <= 2^-25 rounds to (even) zero
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // 14..24
    std::uint32_t result = significand >> shift;
    const std::uint32_t remainder = significand & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (remainder > half || (remainder == half && (result & 1u) != 0)) ++result;
    return static_cast<std::uint16_t>(sign | result);  // a carry into 0x400 is the right encoding
  }
  // Normal: rebias the exponent and round away the low 13 mantissa bits; a carry may bump the
  // exponent (up to Inf only for inputs handled above, so never here).
  std::uint32_t result = ((exponent - 112) << 10) | ((magnitude >> 13) & 0x3FFu);
  const std::uint32_t remainder = magnitude & 0x1FFFu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u) != 0)) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

// BF16 bits -> F32, exact (BF16 is the top half of an F32).
[[nodiscard]] constexpr float bf16_to_fp32(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// F32 -> BF16 bits, round to nearest even; subnormals are kept (not flushed); NaN is quieted.
[[nodiscard]] constexpr std::uint16_t fp32_to_bf16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  }
  const std::uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

}  // namespace eredu::encoding
