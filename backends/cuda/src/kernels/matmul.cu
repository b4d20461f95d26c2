// Matrix-matrix products for prefill with float weights (F32, F16, BF16): 64 x 64 output tiles
// (weight rows x tokens), each of 256 threads accumulating 4 x 4 in registers over K slices of 16
// decoded into shared memory. Quantized weights do not come here (matvec.cu takes any batch over
// q8_1 activations, as the CPU backend does).
#include "../backend/stream.hpp"
#include "dispatch.cuh"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr std::uint32_t kTile = 64;
constexpr std::uint32_t kSlice = 16;
constexpr unsigned kThreads = 256;

template <typename Format>
__global__ void matmul_kernel(const std::uint8_t* w, std::uint32_t rows, std::uint32_t cols,
                              std::uint64_t row_bytes, const float* x, std::uint32_t n_tokens,
                              float* y) {
  __shared__ float ws[kSlice][kTile + 1];
  __shared__ float xs[kSlice][kTile + 1];
  const std::uint32_t o0 = blockIdx.x * kTile;
  const std::uint32_t t0 = blockIdx.y * kTile;
  const std::uint32_t tr = threadIdx.x % 16;  // output rows tr, tr + 16, ...
  const std::uint32_t tt = threadIdx.x / 16;  // tokens tt, tt + 16, ...
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      acc[i][j] = 0.0F;
  }
  for (std::uint32_t k0 = 0; k0 < cols; k0 += kSlice) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::uint32_t idx = threadIdx.x + e * kThreads;
      const std::uint32_t rr = idx / kSlice;
      const std::uint32_t kk = idx % kSlice;
      const std::uint32_t k = k0 + kk;
      const std::uint32_t o = o0 + rr;
      const std::uint32_t t = t0 + rr;
      ws[kk][rr] =
          (o < rows && k < cols)
              ? Format::decode(
                    w + o * row_bytes + static_cast<std::uint64_t>(k) * Format::kBlockBytes, 0)
              : 0.0F;
      xs[kk][rr] = (t < n_tokens && k < cols) ? x[static_cast<std::uint64_t>(t) * cols + k] : 0.0F;
    }
    __syncthreads();
#pragma unroll
    for (std::uint32_t kk = 0; kk < kSlice; ++kk) {
      float a[4];
      float b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        a[i] = ws[kk][tr + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        b[j] = xs[kk][tt + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          acc[i][j] += a[i] * b[j];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t o = o0 + tr + 16 * i;
      const std::uint32_t t = t0 + tt + 16 * j;
      if (o < rows && t < n_tokens) y[static_cast<std::uint64_t>(t) * rows + o] = acc[i][j];
    }
  }
}

}  // namespace

Result<void> matmul(const LinearArgs& a, const float* x, float* y, cudaStream_t stream) {
  if (a.rows == 0 || a.n_tokens == 0) return ok();
  if (uses_quantized_activations(a.dtype)) {
    return fail(ErrorCode::kInvalidArgument,
                "cuda matmul: quantized weights go through matvec over q8_1 activations");
  }
  const dim3 grid((a.rows + kTile - 1) / kTile, (a.n_tokens + kTile - 1) / kTile);
  return with_float_format(a.dtype, "linear", [&](auto format) -> Result<void> {
    using Format = decltype(format);
    matmul_kernel<Format>
        <<<grid, kThreads, 0, stream>>>(a.w, a.rows, a.cols, a.row_bytes, x, a.n_tokens, y);
    return check_launch("linear (matmul)");
  });
}

}  // namespace eredu::cuda::kernels
