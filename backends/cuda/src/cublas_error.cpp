// cublasStatus_t -> eredu::Error (see cublas_error.hpp).
#include "cublas_error.hpp"

#include <string>

namespace eredu::cuda {

Error cublas_error(std::string_view operation, cublasStatus_t status) {
  const char* name = cublasGetStatusName(status);
  const char* text = cublasGetStatusString(status);
  const std::string message = std::string(operation) +
                              " failed: " + (name != nullptr ? name : "unknown cuBLAS status") +
                              " (" + (text != nullptr ? text : "") + ")";
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return Error(ErrorCode::kCapacityExhausted, "cuda: " + message);
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return Error(ErrorCode::kCapabilityMissing, "cuda: " + message);
    default:
      return Error(ErrorCode::kBackend, "cuda: " + message);
  }
}

}  // namespace eredu::cuda
