// Embedding lookup: one thread per (token, column), decoding the packed table row in place with
// the same decoders the CPU tests check bit for bit.
#include "../backend/stream.hpp"
#include "dispatch.cuh"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;

template <typename Format>
__global__ void embed_kernel(const std::uint8_t* table, std::uint64_t row_bytes, std::uint32_t cols,
                             const std::uint32_t* ids, std::uint32_t n_tokens, float* out) {
  const std::uint64_t idx = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<std::uint64_t>(n_tokens) * cols) return;
  const std::uint64_t t = idx / cols;
  const std::uint32_t c = static_cast<std::uint32_t>(idx % cols);
  out[idx] = decode::decode_element<Format>(table + ids[t] * row_bytes, c);
}

}  // namespace

Result<void> embed(DType dtype, const std::uint8_t* table, std::uint64_t row_bytes,
                   std::uint32_t cols, const std::uint32_t* ids, std::uint32_t n_tokens, float* out,
                   cudaStream_t stream) {
  const std::uint64_t n = static_cast<std::uint64_t>(n_tokens) * cols;
  if (n == 0) return ok();
  const unsigned grid = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  return with_decode_format(dtype, "embedding", [&](auto format) -> Result<void> {
    using Format = decltype(format);
    embed_kernel<Format><<<grid, kThreads, 0, stream>>>(table, row_bytes, cols, ids, n_tokens, out);
    return check_launch("embedding");
  });
}

}  // namespace eredu::cuda::kernels
