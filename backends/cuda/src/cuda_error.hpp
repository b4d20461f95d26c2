#pragma once
// The one place where cudaError_t becomes eredu::Error (private to the backend: CUDA types never
// appear in public headers). The code says what a caller can do about it:
//   cudaErrorMemoryAllocation                    -> kCapacityExhausted (requested and free bytes)
//   cudaErrorNoDevice, cudaErrorInsufficientDriver -> kCapabilityMissing ("no CUDA device: ...")
//   anything else                                -> kBackend
// and the message names the operation and the CUDA error's name and description.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "eredu/core/error.hpp"

namespace eredu::cuda {

// "cudaErrorNoDevice" etc.; never null, also for values the runtime does not know.
[[nodiscard]] std::string_view cuda_error_name(cudaError_t error) noexcept;

// The Error for `operation` (e.g. "cudaGetDeviceCount", "dequantize kernel launch") having
// returned `error` (not cudaSuccess). Clears the runtime's pending error (cudaGetLastError), so
// that a translated failure is not reported again by the next call that checks.
[[nodiscard]] Error cuda_error(std::string_view operation, cudaError_t error);

// The same for an allocation of `requested_bytes`; an out-of-memory error also names the device's
// free bytes when they are known.
[[nodiscard]] Error cuda_allocation_error(std::string_view operation, cudaError_t error,
                                          std::uint64_t requested_bytes,
                                          std::optional<std::uint64_t> free_bytes);

}  // namespace eredu::cuda
