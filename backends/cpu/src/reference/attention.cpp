// Reference causal grouped-query attention, float64 throughout.
#include <algorithm>
#include <cmath>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::cpu::reference {

namespace {
double kv_element(const void* base, DType dtype, std::size_t index) {
  if (dtype == DType::kF16) {
    return encoding::fp16_to_fp32(static_cast<const std::uint16_t*>(base)[index]);
  }
  return static_cast<const float*>(base)[index];
}
}  // namespace

void attention(const AttentionArgs& a) {
  const std::size_t group = a.n_head / a.n_head_kv;
  const std::size_t kv_pos_stride = a.n_head_kv * a.head_dim;
  std::vector<double> scores(a.n_kv);
  std::vector<double> acc(a.head_dim);
  for (std::size_t t = 0; t < a.n_tokens; ++t) {
    const std::size_t n_visible = static_cast<std::size_t>(a.positions[t]) + 1;
    for (std::size_t h = 0; h < a.n_head; ++h) {
      const float* q = a.q + (t * a.n_head + h) * a.head_dim;
      const std::size_t kv_head = h / group;
      double max_score = -INFINITY;
      for (std::size_t j = 0; j < n_visible; ++j) {
        const std::size_t k_off = j * kv_pos_stride + kv_head * a.head_dim;
        double dot = 0.0;
        for (std::size_t d = 0; d < a.head_dim; ++d) {
          dot += static_cast<double>(q[d]) * kv_element(a.k, a.kv_dtype, k_off + d);
        }
        scores[j] = dot * static_cast<double>(a.scale);
        max_score = std::max(max_score, scores[j]);
      }
      double sum = 0.0;
      for (std::size_t j = 0; j < n_visible; ++j) {
        scores[j] = std::exp(scores[j] - max_score);
        sum += scores[j];
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::size_t j = 0; j < n_visible; ++j) {
        const std::size_t v_off = j * kv_pos_stride + kv_head * a.head_dim;
        for (std::size_t d = 0; d < a.head_dim; ++d) {
          acc[d] += scores[j] * kv_element(a.v, a.kv_dtype, v_off + d);
        }
      }
      float* out = a.out + (t * a.n_head + h) * a.head_dim;
      for (std::size_t d = 0; d < a.head_dim; ++d)
        out[d] = static_cast<float>(acc[d] / sum);
    }
  }
}

}  // namespace eredu::cpu::reference
