// Element-wise F32 operators: residual add, SwiGLU (silu(gate) * up) and bias add. One thread per
// element; these are bandwidth-trivial next to the matrix products.
#include "../backend/stream.hpp"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;

__global__ void add_kernel(const float* a, const float* b, float* y, std::uint64_t n) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i];
}

__global__ void swiglu_kernel(const float* gate, const float* up, float* y, std::uint64_t n) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  y[i] = g / (1.0F + expf(-g)) * up[i];
}

__global__ void bias_add_kernel(const float* x, const float* bias, float* y, std::uint64_t n,
                                std::uint32_t cols) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + bias[i % cols];
}

unsigned grid_for(std::uint64_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

}  // namespace

Result<void> add(const float* a, const float* b, float* y, std::uint64_t n, cudaStream_t stream) {
  if (n == 0) return ok();
  add_kernel<<<grid_for(n), kThreads, 0, stream>>>(a, b, y, n);
  return check_launch("add");
}

Result<void> swiglu(const float* gate, const float* up, float* y, std::uint64_t n,
                    cudaStream_t stream) {
  if (n == 0) return ok();
  swiglu_kernel<<<grid_for(n), kThreads, 0, stream>>>(gate, up, y, n);
  return check_launch("swiglu");
}

Result<void> bias_add(const float* x, const float* bias, float* y, std::uint64_t n,
                      std::uint32_t cols, cudaStream_t stream) {
  if (n == 0 || cols == 0) return ok();
  bias_add_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, bias, y, n, cols);
  return check_launch("add_bias");
}

}  // namespace eredu::cuda::kernels
