// Reference rotary embedding, angles in float64.
#include <cmath>

#include "eredu/backends/cpu/reference.hpp"

namespace eredu::cpu::reference {

void rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
          const std::int32_t* positions, const RopeParams& params) {
  const std::size_t n_pairs = params.n_rot / 2;
  for (std::size_t t = 0; t < n_tokens; ++t) {
    for (std::size_t h = 0; h < n_heads; ++h) {
      float* v = x + (t * n_heads + h) * head_dim;
      for (std::size_t i = 0; i < n_pairs; ++i) {
        const double factor =
            params.freq_factors != nullptr ? static_cast<double>(params.freq_factors[i]) : 1.0;
        const double theta =
            static_cast<double>(positions[t]) * static_cast<double>(params.freq_scale) *
            std::pow(static_cast<double>(params.freq_base),
                     -2.0 * static_cast<double>(i) / static_cast<double>(params.n_rot)) /
            factor;
        const double c = std::cos(theta);
        const double s = std::sin(theta);
        // kNormal pairs neighbours; kNeox pairs element i with element i + n_rot / 2.
        const std::size_t a = params.mode == RopeMode::kNormal ? 2 * i : i;
        const std::size_t b = params.mode == RopeMode::kNormal ? 2 * i + 1 : i + n_pairs;
        const double x0 = v[a];
        const double x1 = v[b];
        v[a] = static_cast<float>(x0 * c - x1 * s);
        v[b] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

}  // namespace eredu::cpu::reference
