// Reference element-wise ops: SwiGLU, residual add, softmax.
#include <algorithm>
#include <cmath>

#include "eredu/backends/cpu/reference.hpp"

namespace eredu::cpu::reference {

void swiglu(const float* gate, const float* up, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * static_cast<double>(up[i]));
  }
}

void add(const float* a, const float* b, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = a[i] + b[i];
}

void softmax(float* x, std::size_t n) {
  if (n == 0) return;
  const double max_value = *std::max_element(x, x + n);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    sum += std::exp(static_cast<double>(x[i]) - max_value);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(std::exp(static_cast<double>(x[i]) - max_value) / sum);
  }
}

}  // namespace eredu::cpu::reference
