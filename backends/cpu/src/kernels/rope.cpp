// Threaded rotary embedding. Angles follow ggml's float recurrence (theta starts at the position
// and is multiplied by base^(-2/n_rot) per pair) so that rotated values track llama.cpp.
#include <cmath>

#include "kernel_impl.hpp"

namespace eredu::cpu::detail {

void rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
          const std::int32_t* positions, const RopeParams& params, ThreadPool* pool) {
  const std::size_t n_pairs = params.n_rot / 2;
  const float theta_scale = std::pow(params.freq_base, -2.0F / static_cast<float>(params.n_rot));
  auto vectors = [&](std::size_t v0, std::size_t v1) {
    for (std::size_t v = v0; v < v1; ++v) {
      const std::size_t t = v / n_heads;
      float* vec = x + v * head_dim;
      float theta = static_cast<float>(positions[t]);
      for (std::size_t i = 0; i < n_pairs; ++i, theta *= theta_scale) {
        const float angle = params.freq_scale * theta;
        const float c = std::cos(angle);
        const float s = std::sin(angle);
        const std::size_t a = params.mode == RopeMode::kNormal ? 2 * i : i;
        const std::size_t b = params.mode == RopeMode::kNormal ? 2 * i + 1 : i + n_pairs;
        const float x0 = vec[a];
        const float x1 = vec[b];
        vec[a] = x0 * c - x1 * s;
        vec[b] = x0 * s + x1 * c;
      }
    }
  };
  // A rotated pair costs a sine and a cosine: count ~20 operations per element.
  parallel_for(pool, n_tokens * n_heads, vectors, grain_for(20 * head_dim));
}

}  // namespace eredu::cpu::detail
