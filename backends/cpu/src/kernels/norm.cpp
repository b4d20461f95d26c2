// Threaded RMS norm, one row per scheduling unit.
#include <cmath>

#include "kernel_impl.hpp"

namespace eredu::cpu::detail {

void rms_norm(const float* x, const float* weight, std::size_t n_rows, std::size_t n, float eps,
              float* y, ThreadPool* pool) {
  auto rows = [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      // As ggml: the sum of squares in double, the scale in float, then x * scale * weight.
      double sum_sq = 0.0;
      for (std::size_t i = 0; i < n; ++i)
        sum_sq += static_cast<double>(xr[i] * xr[i]);
      const float mean = static_cast<float>(sum_sq / static_cast<double>(n));
      const float scale = 1.0F / std::sqrt(mean + eps);
      if (weight != nullptr) {
        for (std::size_t i = 0; i < n; ++i)
          yr[i] = (xr[i] * scale) * weight[i];
      } else {
        for (std::size_t i = 0; i < n; ++i)
          yr[i] = xr[i] * scale;
      }
    }
  };
  parallel_for(pool, n_rows, rows, grain_for(4 * n));
}

}  // namespace eredu::cpu::detail
