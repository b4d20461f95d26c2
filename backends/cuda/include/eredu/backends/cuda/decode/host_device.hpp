#pragma once
// What every block decoder needs to be callable from a CUDA kernel and from plain host C++ alike:
// EREDU_HD marks a function __host__ __device__ under nvcc and is empty for a host compiler, so
// the same decoders run in kernels and in CPU unit tests. Blocks are read as raw little-endian
// bytes (never through packed structs): a packed struct's unaligned 16-bit fields would make
// nvcc emit byte loads anyway, and explicit offsets keep the layout visible next to the arithmetic.

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define EREDU_HD __host__ __device__
#else
#define EREDU_HD
#endif

namespace eredu::cuda::decode {

// The float whose IEEE-754 binary32 encoding is `bits`. The device path uses the intrinsic; the
// host path uses memcpy (std::bit_cast is not callable from device code without
// --expt-relaxed-constexpr).
EREDU_HD inline float float_from_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// The binary32 encoding of `f` (the inverse of float_from_bits).
EREDU_HD inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

// A little-endian 16-bit field at `p`. On the host any alignment (bytes); on the device `p` must
// be 2-byte aligned, and it is wherever a kernel reads a block: every block size is even (F16 2,
// Q4_0 18, Q3_K 110, Q6_K 210, ...), every field a decoder reads as 16 or 32 bits sits at an even
// offset, and device buffers are 256-byte aligned. One 16-bit load instead of two byte loads:
// the matrix-vector kernels are bound by load instructions as much as by bandwidth.
EREDU_HD inline std::uint16_t load_u16(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::uint16_t*>(p);
#else
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
#endif
}

// A little-endian 32-bit field at `p`: any alignment on the host, 2-byte aligned on the device
// (two 16-bit loads; see load_u16).
EREDU_HD inline std::uint32_t load_u32(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  const auto* h = reinterpret_cast<const std::uint16_t*>(p);
  return static_cast<std::uint32_t>(h[0]) | (static_cast<std::uint32_t>(h[1]) << 16);
#else
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
#endif
}

}  // namespace eredu::cuda::decode
