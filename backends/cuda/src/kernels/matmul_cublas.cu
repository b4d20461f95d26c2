// Prefill products of F16 weights on the tensor cores through cuBLAS: the F32 activations are
// rounded to F16 (a grid-stride kernel), then one cublasGemmEx with F32 accumulation writes the
// F32 outputs. The weights are read as stored (row-major [rows][cols] F16 is column-major
// [cols][rows], hence op(A) = transpose).
#include <cuda_fp16.h>

#include <climits>
#include <string>

#include "../backend/stream.hpp"
#include "../cublas_error.hpp"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

__global__ void to_f16_kernel(const float* x, __half* y, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    y[i] = __float2half_rn(x[i]);
  }
}

}  // namespace

Result<void> matmul_f16_cublas(cublasHandle_t handle, const LinearArgs& a, const float* x,
                               void* x16, float* y, cudaStream_t stream) {
  if (a.dtype != DType::kF16) {
    return fail(ErrorCode::kInvalidArgument, "cuda matmul_f16_cublas: weights are not F16");
  }
  if (a.rows == 0 || a.n_tokens == 0) return ok();
  if (a.rows > INT_MAX || a.cols > INT_MAX || a.n_tokens > INT_MAX) {
    return fail(ErrorCode::kLimitExceeded, "cuda matmul_f16_cublas: dimensions exceed int");
  }
  const std::uint64_t n = static_cast<std::uint64_t>(a.n_tokens) * a.cols;
  constexpr unsigned kThreads = 256;
  const std::uint64_t blocks = (n + kThreads - 1) / kThreads;
  to_f16_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kThreads, 0, stream>>>(
      x, static_cast<__half*>(x16), n);
  EREDU_TRY_VOID(check_launch("linear (to F16)"));
  const float alpha = 1.0F;
  const float beta = 0.0F;
  const int m = static_cast<int>(a.rows);
  const int cols = static_cast<int>(a.cols);
  const int tokens = static_cast<int>(a.n_tokens);
  const cublasStatus_t s = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, tokens, cols, &alpha,
                                        a.w, CUDA_R_16F, cols, x16, CUDA_R_16F, cols, &beta, y,
                                        CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) return fail(cublas_error("cublasGemmEx (linear)", s));
  return ok();
}

}  // namespace eredu::cuda::kernels
