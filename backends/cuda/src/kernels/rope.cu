// Rotary embedding: one thread per (token, head, pair). The angle is computed in float64 on the
// device (pow, sincos) from the position the kernel is given, as the CPU reference computes it on
// the host, so no table is uploaded per forward pass.
#include "../backend/stream.hpp"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;

__global__ void rope_kernel(const float* x, float* y, const float* factors, RopeArgs a) {
  const std::uint64_t idx = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint32_t half_dim = (a.head_dim + 1) / 2;  // per head: rotated pairs, then the rest
  if (idx >= static_cast<std::uint64_t>(a.n_tokens) * a.heads * half_dim) return;
  const std::uint32_t i = static_cast<std::uint32_t>(idx % half_dim);
  const std::uint64_t th = idx / half_dim;  // token * heads + head
  const std::uint32_t t = static_cast<std::uint32_t>(th / a.heads);
  const std::uint64_t base = th * a.head_dim;
  if (i >= a.n_pairs) {
    // Unrotated tail (partial rotary): copied.
    const std::uint32_t c = 2 * a.n_pairs + 2 * (i - a.n_pairs);
    y[base + c] = x[base + c];
    if (c + 1 < a.head_dim) y[base + c + 1] = x[base + c + 1];
    return;
  }
  const std::uint64_t ia = base + (a.neox ? i : 2 * i);
  const std::uint64_t ib = base + (a.neox ? i + a.n_pairs : 2 * i + 1);
  const std::uint32_t first = a.device_position != nullptr ? *a.device_position : a.first_position;
  const double theta = static_cast<double>(first + t) * static_cast<double>(a.scale) *
                       pow(static_cast<double>(a.base),
                           -2.0 * static_cast<double>(i) / static_cast<double>(2 * a.n_pairs)) /
                       (factors != nullptr ? static_cast<double>(factors[i]) : 1.0);
  double s = 0.0;
  double c = 0.0;
  sincos(theta, &s, &c);
  const float cf = static_cast<float>(c);
  const float sf = static_cast<float>(s);
  const float x0 = x[ia];
  const float x1 = x[ib];
  y[ia] = x0 * cf - x1 * sf;
  y[ib] = x0 * sf + x1 * cf;
}

}  // namespace

Result<void> rope(const float* x, float* y, const float* factors, const RopeArgs& args,
                  cudaStream_t stream) {
  const std::uint64_t n =
      static_cast<std::uint64_t>(args.n_tokens) * args.heads * ((args.head_dim + 1) / 2);
  if (n == 0) return ok();
  const unsigned grid = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  rope_kernel<<<grid, kThreads, 0, stream>>>(x, y, factors, args);
  return check_launch("rotary");
}

}  // namespace eredu::cuda::kernels
