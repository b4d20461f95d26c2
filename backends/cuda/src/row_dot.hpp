#pragma once
// The dot building blocks (include/eredu/backends/cuda/dot/) on the device, in the simplest
// kernels that use them: q8_1 quantization of an activation row (one thread per 32-block) and a
// matrix-vector product with one thread per weight row. They exist so that the device path of the
// building blocks (__dp4a, __float2int_rn, the aligned activation loads) is tested on a GPU
// against the host path the CPU tests check; the warp-per-row matvec of CudaBackend will replace
// them for speed, not for results. Private to the backend (they take a cudaStream_t).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "eredu/backends/cuda/dot/act_q8_1.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cuda {

// Quantizes `n` floats at `device_x` into n / 32 q8_1 blocks at `device_y` on `stream`.
// kInvalidArgument when n is not a multiple of 32.
[[nodiscard]] Result<void> launch_quantize_q8_1(const float* device_x, dot::BlockQ8_1* device_y,
                                                std::uint64_t n, cudaStream_t stream);

// device_y[r] = dot::row_dot of weight row r (rows of `cols` elements of `dtype`, packed back to
// back from `device_w`) with the quantized activation `device_act` (cols / 32 blocks), for
// r < rows, on `stream`. kInvalidArgument when cols is not a whole number of blocks, kUnsupported
// for an encoding without dot traits (F16, BF16 and others).
[[nodiscard]] Result<void> launch_row_dots(DType dtype, const std::uint8_t* device_w,
                                           std::uint64_t rows, std::uint64_t cols,
                                           const dot::BlockQ8_1* device_act, float* device_y,
                                           cudaStream_t stream);

}  // namespace eredu::cuda
