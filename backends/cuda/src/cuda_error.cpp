#include "cuda_error.hpp"

#include <string>

namespace eredu::cuda {
namespace {

// Errors after which the device's context is unusable until the process recreates it: the next
// call fails with the same error, so the message says so instead of suggesting a retry.
bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

// "<operation> failed: <name> (<description>)[; what it means]"; the caller adds the prefix
// ("cuda: ", or "no CUDA device: " which names the backend already).
std::string describe(std::string_view operation, cudaError_t error) {
  const char* text = cudaGetErrorString(error);
  std::string message = std::string(operation) + " failed: " + std::string(cuda_error_name(error)) +
                        " (" + (text != nullptr ? text : "no description") + ")";
  if (error == cudaErrorInsufficientDriver) {
    message += "; the NVIDIA driver is missing or older than the CUDA runtime this was built with";
  } else if (error == cudaErrorNoKernelImageForDevice) {
    message += "; rebuild with CMAKE_CUDA_ARCHITECTURES including this device's compute capability";
  } else if (is_sticky(error)) {
    message += "; the device context is unusable from now on (restart the process)";
  }
  return message;
}

}  // namespace

std::string_view cuda_error_name(cudaError_t error) noexcept {
  const char* name = cudaGetErrorName(error);
  return name != nullptr ? std::string_view(name) : std::string_view("cudaError(unknown)");
}

Error cuda_error(std::string_view operation, cudaError_t error) {
  // The error is reported here, so it must not stay pending in the runtime: the next kernel's
  // launch check (cudaGetLastError) would return it and blame the wrong call. A sticky error (a
  // fault on the device) stays whatever this does.
  (void)cudaGetLastError();
  switch (error) {
    case cudaErrorMemoryAllocation:
      return Error(ErrorCode::kCapacityExhausted, "cuda: " + describe(operation, error));
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return Error(ErrorCode::kCapabilityMissing, "no CUDA device: " + describe(operation, error));
    default:
      return Error(ErrorCode::kBackend, "cuda: " + describe(operation, error));
  }
}

Error cuda_allocation_error(std::string_view operation, cudaError_t error,
                            std::uint64_t requested_bytes,
                            std::optional<std::uint64_t> free_bytes) {
  Error base = cuda_error(operation, error);
  if (error != cudaErrorMemoryAllocation) return base;
  std::string message = base.message() + ": requested " + std::to_string(requested_bytes) +
                        " bytes, " +
                        (free_bytes ? std::to_string(*free_bytes) + " bytes free on the device"
                                    : std::string("free device memory unknown"));
  return Error(ErrorCode::kCapacityExhausted, std::move(message));
}

}  // namespace eredu::cuda
