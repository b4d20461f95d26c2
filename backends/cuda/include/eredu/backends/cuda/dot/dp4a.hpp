#pragma once
// dp4a(a, b, c): c plus the dot product of the four signed bytes of a with the four signed bytes
// of b, the integer core of every quantized block dot. On a device it is the __dp4a instruction
// (sm_61 and newer); elsewhere, the CPU unit tests included, an exact emulation, so the integer
// sums a kernel computes are the ones the tests check. The four products are at most 2^14 each
// and the result wraps like int32 arithmetic on the device (a block dot stays far below 2^31).

#include <cstdint>

#include "eredu/backends/cuda/decode/host_device.hpp"

namespace eredu::cuda::dot {

EREDU_HD inline int dp4a(int a, int b, int c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
  return __dp4a(a, b, c);
#else
  const auto ua = static_cast<std::uint32_t>(a);
  const auto ub = static_cast<std::uint32_t>(b);
  // Accumulate in uint32 so that the sum wraps (defined) exactly as the instruction's does.
  std::uint32_t sum = static_cast<std::uint32_t>(c);
  for (int k = 0; k < 4; ++k) {
    const int x = static_cast<std::int8_t>(static_cast<std::uint8_t>(ua >> (8 * k)));
    const int y = static_cast<std::int8_t>(static_cast<std::uint8_t>(ub >> (8 * k)));
    sum += static_cast<std::uint32_t>(x * y);
  }
  return static_cast<int>(sum);
#endif
}

// Subtracts `bias` from each of the four bytes of `v` (as signed results): byte q becomes the
// int8 q - bias. Valid when every byte q satisfies q <= 127 + bias and q - bias >= -128, which
// holds for the 2..6-bit codes it is used on (bias 4, 8, 16, 32): adding 0x80 - bias cannot carry
// into the next byte, and flipping bit 7 turns the offset-binary byte into two's complement. This
// is __vsubss4(v, bias * 0x01010101) for such inputs, in plain integer arithmetic.
EREDU_HD inline int sub_bytes(std::uint32_t v, int bias) {
  const std::uint32_t offset = static_cast<std::uint32_t>(0x80 - bias) * 0x01010101u;
  return static_cast<int>((v + offset) ^ 0x80808080u);
}

}  // namespace eredu::cuda::dot
