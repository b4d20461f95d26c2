// One templated kernel instantiated per encoding: each thread decodes elements index,
// index + stride, ... through Format::decode, the same function the CPU unit tests check
// bit for bit against the quant-zoo references.
#include <string>

#include "cuda_error.hpp"
#include "dequantize.hpp"
#include "eredu/backends/cuda/decode/decode_block.hpp"

namespace eredu::cuda {
namespace {

constexpr unsigned kThreadsPerBlock = 256;
// Enough blocks to fill any current GPU several times over; larger tensors loop (grid stride).
constexpr std::uint64_t kMaxGridBlocks = 65535;

template <typename Format>
__global__ void dequantize_kernel(const std::uint8_t* blocks, float* out, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = decode::decode_element<Format>(blocks, i);
  }
}

template <typename Format>
Result<void> launch(const std::uint8_t* blocks, float* out, std::uint64_t n, cudaStream_t stream) {
  if (n % Format::kBlockElements != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "cuda: dequantize: " + std::to_string(n) + " elements is not a whole number of " +
                    std::to_string(Format::kBlockElements) + "-element blocks");
  }
  if (n == 0) return ok();
  std::uint64_t grid = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (grid > kMaxGridBlocks) grid = kMaxGridBlocks;
  dequantize_kernel<Format>
      <<<static_cast<unsigned>(grid), kThreadsPerBlock, 0, stream>>>(blocks, out, n);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return fail(cuda_error("dequantize kernel launch", error));
  return ok();
}

}  // namespace

Result<void> launch_dequantize(DType dtype, const std::uint8_t* device_blocks, float* device_out,
                               std::uint64_t n_elements, cudaStream_t stream) {
  switch (dtype) {
    case DType::kF16:
      return launch<decode::F16>(device_blocks, device_out, n_elements, stream);
    case DType::kBF16:
      return launch<decode::BF16>(device_blocks, device_out, n_elements, stream);
    case DType::kQ8_0:
      return launch<decode::Q8_0>(device_blocks, device_out, n_elements, stream);
    case DType::kQ4_0:
      return launch<decode::Q4_0>(device_blocks, device_out, n_elements, stream);
    case DType::kQ4_1:
      return launch<decode::Q4_1>(device_blocks, device_out, n_elements, stream);
    case DType::kQ5_0:
      return launch<decode::Q5_0>(device_blocks, device_out, n_elements, stream);
    case DType::kQ5_1:
      return launch<decode::Q5_1>(device_blocks, device_out, n_elements, stream);
    case DType::kQ2_K:
      return launch<decode::Q2_K>(device_blocks, device_out, n_elements, stream);
    case DType::kQ3_K:
      return launch<decode::Q3_K>(device_blocks, device_out, n_elements, stream);
    case DType::kQ4_K:
      return launch<decode::Q4_K>(device_blocks, device_out, n_elements, stream);
    case DType::kQ5_K:
      return launch<decode::Q5_K>(device_blocks, device_out, n_elements, stream);
    case DType::kQ6_K:
      return launch<decode::Q6_K>(device_blocks, device_out, n_elements, stream);
    case DType::kIQ4_NL:
      return launch<decode::IQ4_NL>(device_blocks, device_out, n_elements, stream);
    case DType::kIQ4_XS:
      return launch<decode::IQ4_XS>(device_blocks, device_out, n_elements, stream);
    default:
      return fail(ErrorCode::kUnsupported,
                  "cuda: dequantize: no device decoder for " + std::string(to_string(dtype)));
  }
}

}  // namespace eredu::cuda
