#pragma once
// Small, independent computations on a logits row that the backend end-to-end tests share: the
// natural-log softmax in double (independent of every backend's softmax), the argmax and the
// largest element-wise difference of two rows.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace eredu::testing {

inline std::vector<double> log_softmax(const std::vector<float>& logits) {
  double max = logits.front();
  for (float v : logits)
    max = std::max(max, static_cast<double>(v));
  double sum = 0.0;
  for (float v : logits)
    sum += std::exp(static_cast<double>(v) - max);
  const double log_sum = std::log(sum) + max;
  std::vector<double> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i)
    out[i] = static_cast<double>(logits[i]) - log_sum;
  return out;
}

inline std::uint32_t argmax(const std::vector<float>& v) {
  return static_cast<std::uint32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The largest |a[i] - b[i]|; huge when the sizes differ.
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = a.size() == b.size() ? 0.0 : 1e30;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

}  // namespace eredu::testing
