// Threaded rotary embedding. Angles follow ggml's float recurrence (theta starts at the position
// and is multiplied by base^(-2/n_rot) per pair) so that rotated values track llama.cpp.
//
// The angles depend on the position and the pair only, so each token's cosines and sines are
// computed once (per-thread table) and applied to all its heads; one scheduling unit is a token.
#include <cmath>
#include <vector>

#include "kernel_impl.hpp"

namespace eredu::cpu::detail {

namespace {
float* scratch_angles(std::size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}
}  // namespace

void rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
          const std::int32_t* positions, const RopeParams& params, ThreadPool* pool) {
  const std::size_t n_pairs = params.n_rot / 2;
  const float theta_scale = std::pow(params.freq_base, -2.0F / static_cast<float>(params.n_rot));
  auto tokens = [&](std::size_t t0, std::size_t t1) {
    float* cos_sin = scratch_angles(2 * n_pairs);
    for (std::size_t t = t0; t < t1; ++t) {
      float theta = static_cast<float>(positions[t]);
      for (std::size_t i = 0; i < n_pairs; ++i, theta *= theta_scale) {
        // ggml divides the position angle by the pair's factor before scaling it.
        const float ff = params.freq_factors != nullptr ? params.freq_factors[i] : 1.0F;
        const float angle = params.freq_scale * (theta / ff);
        cos_sin[2 * i] = std::cos(angle);
        cos_sin[2 * i + 1] = std::sin(angle);
      }
      for (std::size_t h = 0; h < n_heads; ++h) {
        float* vec = x + (t * n_heads + h) * head_dim;
        for (std::size_t i = 0; i < n_pairs; ++i) {
          const float c = cos_sin[2 * i];
          const float s = cos_sin[2 * i + 1];
          const std::size_t a = params.mode == RopeMode::kNormal ? 2 * i : i;
          const std::size_t b = params.mode == RopeMode::kNormal ? 2 * i + 1 : i + n_pairs;
          const float x0 = vec[a];
          const float x1 = vec[b];
          vec[a] = x0 * c - x1 * s;
          vec[b] = x0 * s + x1 * c;
        }
      }
    }
  };
  // A token costs n_pairs sines and cosines (~40 operations each) plus 6 operations per element.
  parallel_for(pool, n_tokens, tokens, grain_for(40 * n_pairs + 6 * n_heads * head_dim));
}

}  // namespace eredu::cpu::detail
