// One thread per activation block (quantization) or per weight row (dots), each calling the
// shared EREDU_HD building blocks exactly as the CPU tests do; see row_dot.hpp for why.
#include <string>

#include "cuda_error.hpp"
#include "eredu/backends/cuda/dot/all_dots.hpp"
#include "row_dot.hpp"

namespace eredu::cuda {
namespace {

constexpr unsigned kThreadsPerBlock = 128;

__global__ void quantize_q8_1_kernel(const float* x, dot::BlockQ8_1* y, std::uint64_t n_blocks) {
  const std::uint64_t b = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b < n_blocks) dot::quantize_block_q8_1(x + dot::kQK8_1 * b, y[b]);
}

template <typename T>
__global__ void row_dots_kernel(const std::uint8_t* w, std::uint64_t rows, std::int64_t n_blocks,
                                const dot::BlockQ8_1* act, float* y) {
  const std::uint64_t r = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  y[r] = dot::row_dot<T>(w + r * static_cast<std::uint64_t>(n_blocks) * T::Format::kBlockBytes, act,
                         n_blocks);
}

unsigned grid_for(std::uint64_t threads) {
  return static_cast<unsigned>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

template <typename T>
Result<void> launch(const std::uint8_t* w, std::uint64_t rows, std::uint64_t cols,
                    const dot::BlockQ8_1* act, float* y, cudaStream_t stream) {
  if (cols % T::Format::kBlockElements != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "cuda: row dots: " + std::to_string(cols) + " columns is not a whole number of " +
                    std::to_string(T::Format::kBlockElements) + "-element blocks");
  }
  if (rows == 0 || cols == 0) return ok();
  const auto n_blocks = static_cast<std::int64_t>(cols / T::Format::kBlockElements);
  row_dots_kernel<T><<<grid_for(rows), kThreadsPerBlock, 0, stream>>>(w, rows, n_blocks, act, y);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return fail(cuda_error("row dots kernel launch", error));
  return ok();
}

}  // namespace

Result<void> launch_quantize_q8_1(const float* device_x, dot::BlockQ8_1* device_y, std::uint64_t n,
                                  cudaStream_t stream) {
  if (n % dot::kQK8_1 != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "cuda: quantize q8_1: " + std::to_string(n) + " is not a multiple of 32");
  }
  if (n == 0) return ok();
  const std::uint64_t n_blocks = n / dot::kQK8_1;
  quantize_q8_1_kernel<<<grid_for(n_blocks), kThreadsPerBlock, 0, stream>>>(device_x, device_y,
                                                                            n_blocks);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return fail(cuda_error("quantize q8_1 kernel launch", error));
  return ok();
}

Result<void> launch_row_dots(DType dtype, const std::uint8_t* device_w, std::uint64_t rows,
                             std::uint64_t cols, const dot::BlockQ8_1* device_act, float* device_y,
                             cudaStream_t stream) {
  switch (dtype) {
    case DType::kQ8_0:
      return launch<dot::DotQ8_0>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ4_0:
      return launch<dot::DotQ4_0>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ4_1:
      return launch<dot::DotQ4_1>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ5_0:
      return launch<dot::DotQ5_0>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ5_1:
      return launch<dot::DotQ5_1>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ2_K:
      return launch<dot::DotQ2_K>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ3_K:
      return launch<dot::DotQ3_K>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ4_K:
      return launch<dot::DotQ4_K>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ5_K:
      return launch<dot::DotQ5_K>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kQ6_K:
      return launch<dot::DotQ6_K>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kIQ4_NL:
      return launch<dot::DotIQ4_NL>(device_w, rows, cols, device_act, device_y, stream);
    case DType::kIQ4_XS:
      return launch<dot::DotIQ4_XS>(device_w, rows, cols, device_act, device_y, stream);
    default:
      return fail(ErrorCode::kUnsupported,
                  "cuda: row dots: no integer block dot for " + std::string(to_string(dtype)));
  }
}

}  // namespace eredu::cuda
