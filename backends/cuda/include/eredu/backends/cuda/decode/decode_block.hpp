#pragma once
// Every block format the CUDA backend decodes, and generic helpers over them. A format type F
// has F::kBlockElements, F::kBlockBytes and F::decode(block, i); these helpers decode a run of
// elements of one block, or whole blocks, the same way on the host and in a kernel.

#include <cstdint>

#include "eredu/backends/cuda/decode/half.hpp"
#include "eredu/backends/cuda/decode/host_device.hpp"
#include "eredu/backends/cuda/decode/iq4.hpp"
#include "eredu/backends/cuda/decode/k_quants.hpp"
#include "eredu/backends/cuda/decode/legacy_quants.hpp"

namespace eredu::cuda::decode {

// Elements [first, first + count) of the block at `block` into out[0 .. count).
template <typename Format>
EREDU_HD inline void decode_elements(const std::uint8_t* block, int first, int count, float* out) {
  for (int k = 0; k < count; ++k)
    out[k] = Format::decode(block, first + k);
}

// Element `index` of a tensor of consecutive blocks starting at `blocks`.
template <typename Format>
EREDU_HD inline float decode_element(const std::uint8_t* blocks, std::uint64_t index) {
  const std::uint64_t block = index / Format::kBlockElements;
  const int within = static_cast<int>(index % Format::kBlockElements);
  return Format::decode(blocks + block * Format::kBlockBytes, within);
}

// `n_blocks` consecutive blocks into n_blocks * kBlockElements floats.
template <typename Format>
EREDU_HD inline void decode_blocks(const std::uint8_t* blocks, std::uint64_t n_blocks, float* out) {
  for (std::uint64_t b = 0; b < n_blocks; ++b) {
    decode_elements<Format>(blocks + b * Format::kBlockBytes, 0, Format::kBlockElements,
                            out + b * Format::kBlockElements);
  }
}

}  // namespace eredu::cuda::decode
