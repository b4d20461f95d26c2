// RMS norm: one block per row; the sum of squares is a warp-shuffle then shared-memory reduction.
// A decode step normalizes one row of 2048-4096 values, a whole launch on one SM, so the block is
// wide (up to 1024 threads) and each thread loads its values and gains at once, keeps them in
// registers for the scaling pass and waits for memory once instead of once per loop step.
#include "../backend/stream.hpp"
#include "dispatch.cuh"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr unsigned kMaxThreads = 1024;
constexpr int kCached = 4;  // values per thread held in registers (rows up to 4096 wholly)

__global__ void rms_norm_kernel(const float* __restrict__ x, const float* __restrict__ gain,
                                float* __restrict__ y, std::uint32_t cols, float eps) {
  __shared__ float partial[kMaxThreads / 32];
  const std::uint64_t base = static_cast<std::uint64_t>(blockIdx.x) * cols;
  const std::uint32_t stride = blockDim.x;
  float v[kCached];
  float g[kCached];
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const std::uint32_t i = threadIdx.x + k * stride;
    v[k] = i < cols ? x[base + i] : 0.0F;
    g[k] = i < cols ? gain[i] : 0.0F;
  }
  float s = 0.0F;
#pragma unroll
  for (int k = 0; k < kCached; ++k)
    s += v[k] * v[k];
  for (std::uint32_t i = threadIdx.x + kCached * stride; i < cols; i += stride)
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
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const std::uint32_t i = threadIdx.x + k * stride;
    if (i < cols) y[base + i] = v[k] * inv_rms * g[k];
  }
  for (std::uint32_t i = threadIdx.x + kCached * stride; i < cols; i += stride)
    y[base + i] = x[base + i] * inv_rms * gain[i];
}

}  // namespace

Result<void> rms_norm(const float* x, const float* gain, float* y, std::uint32_t rows,
                      std::uint32_t cols, float eps, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return ok();
  // kCached values per thread, in whole warps (per-head norms of 64-128 values: one warp).
  const std::uint32_t wanted = (cols + kCached - 1) / kCached;
  const unsigned threads = wanted >= kMaxThreads ? kMaxThreads : ((wanted + 31) / 32) * 32;
  rms_norm_kernel<<<rows, threads, 0, stream>>>(x, gain, y, cols, eps);
  return check_launch("rms_norm");
}

}  // namespace eredu::cuda::kernels
