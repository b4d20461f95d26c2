#pragma once
// The dequantization kernel: a packed tensor in device memory -> float32 in device memory, for
// every encoding of decode/decode_block.hpp. Private to the backend (it takes a cudaStream_t).
// It is the first consumer of the block decoders on the device; the embedding lookup and the
// matrix kernels will call the same decode functions per element.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cuda {

// Decodes `n_elements` values of `dtype` from `device_blocks` into `device_out` on `stream`
// (asynchronously: completion is the stream's). kInvalidArgument when n_elements is not a whole
// number of blocks, kUnsupported for an encoding without a decoder, the translated CUDA error
// when the launch fails.
[[nodiscard]] Result<void> launch_dequantize(DType dtype, const std::uint8_t* device_blocks,
                                             float* device_out, std::uint64_t n_elements,
                                             cudaStream_t stream);

}  // namespace eredu::cuda
