// Threaded element-wise ops: SwiGLU and residual add, split into cache-sized ranges; softmax.
#include <algorithm>
#include <cmath>

#include "kernel_impl.hpp"

namespace eredu::cpu::detail {

namespace {
// Below this many elements per piece, waking workers costs more than it saves.
constexpr std::size_t kElementGrain = 4096;
}  // namespace

void swiglu(const VecOps& ops, const float* gate, const float* up, std::size_t n, float* out,
            ThreadPool* pool) {
  auto range = [&](std::size_t i0, std::size_t i1) {
    if (ops.silu_mul != nullptr) {
      ops.silu_mul(gate + i0, up + i0, out + i0, i1 - i0);
      return;
    }
    for (std::size_t i = i0; i < i1; ++i) {
      const float g = gate[i];
      out[i] = g / (1.0F + std::exp(-g)) * up[i];
    }
  };
  parallel_for(pool, n, range, kElementGrain);
}

void add(const float* a, const float* b, std::size_t n, float* out, ThreadPool* pool) {
  auto range = [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i)
      out[i] = a[i] + b[i];
  };
  parallel_for(pool, n, range, kElementGrain);
}

void softmax(float* x, std::size_t n) {
  if (n == 0) return;
  const float max_value = *std::max_element(x, x + n);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  const float inv_sum = static_cast<float>(1.0 / sum);
  for (std::size_t i = 0; i < n; ++i)
    x[i] *= inv_sum;
}

}  // namespace eredu::cpu::detail
