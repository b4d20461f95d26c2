#pragma once
// cublasStatus_t -> eredu::Error (private to the backend, like cuda_error.hpp): allocation
// failures are kCapacityExhausted, a missing or unusable library/architecture kCapabilityMissing,
// anything else kBackend; the message names the operation and the status.

#include <cublas_v2.h>

#include <string_view>

#include "eredu/core/error.hpp"

namespace eredu::cuda {

[[nodiscard]] Error cublas_error(std::string_view operation, cublasStatus_t status);

}  // namespace eredu::cuda
