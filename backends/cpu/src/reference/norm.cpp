// Reference RMS norm.
#include <cmath>

#include "eredu/backends/cpu/reference.hpp"

namespace eredu::cpu::reference {

void rms_norm(const float* x, const float* weight, std::size_t n_rows, std::size_t n, float eps,
              float* y) {
  for (std::size_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double sum_sq = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      sum_sq += static_cast<double>(xr[i]) * xr[i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (std::size_t i = 0; i < n; ++i) {
      const double w = weight != nullptr ? weight[i] : 1.0;
      yr[i] = static_cast<float>(static_cast<double>(xr[i]) * inv_rms * w);
    }
  }
}

}  // namespace eredu::cpu::reference
