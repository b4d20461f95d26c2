// RMS norm: one block per row; the sum of squares is a warp-shuffle then shared-memory reduction.
#include "../backend/stream.hpp"
#include "dispatch.cuh"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;

__global__ void rms_norm_kernel(const float* x, const float* gain, float* y, std::uint32_t cols,
                                float eps) {
  __shared__ float partial[kThreads / 32];
  const std::uint64_t base = static_cast<std::uint64_t>(blockIdx.x) * cols;
  float s = 0.0F;
  for (std::uint32_t i = threadIdx.x; i < cols; i += blockDim.x)
    s += x[base + i] * x[base + i];
  s = warp_sum(s);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    float t = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0F;
    t = warp_sum(t);
    if (threadIdx.x == 0) partial[0] = t;
  }
  __syncthreads();
  const float inv_rms = rsqrtf(partial[0] / static_cast<float>(cols) + eps);
  for (std::uint32_t i = threadIdx.x; i < cols; i += blockDim.x) {
    y[base + i] = x[base + i] * inv_rms * gain[i];
  }
}

}  // namespace

Result<void> rms_norm(const float* x, const float* gain, float* y, std::uint32_t rows,
                      std::uint32_t cols, float eps, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return ok();
  // Narrow rows (per-head norms of 64-128 values) need no more threads than values.
  const unsigned threads = cols >= kThreads ? kThreads : ((cols + 31) / 32) * 32;
  rms_norm_kernel<<<rows, threads, 0, stream>>>(x, gain, y, cols, eps);
  return check_launch("rms_norm");
}

}  // namespace eredu::cuda::kernels
