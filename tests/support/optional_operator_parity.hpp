#pragma once
// Parity of the optional operators the decoder families use (add_bias, head_rms_norm,
// rotary_scaled), written once and instantiated per backend: each runs through the backend's
// NeuralBackend operator (the path the model runs) and is compared with a float64 computation
// written here from the definitions in core/concepts/optional_operators.hpp.
//
//   struct MyAdapter {
//     using backend = B;
//     static std::string unavailable();                           // non-empty: skip
//     static const B& get();                                       // the backend under test
//     static B::tensor upload(std::size_t rows, std::size_t cols, const std::vector<float>&);
//     static B::weight vector_weight(const std::string& name, const std::vector<float>&);
//     static std::vector<float> download(const B::tensor&);
//   };
//   EREDU_OPTIONAL_OPERATOR_PARITY(MyBackendName, MyAdapter);

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "eredu/core/neural_specs.hpp"

namespace eredu::testing::optional_parity {

inline std::vector<float> random_values(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

inline double worst_difference(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = a.size() == b.size() ? 0.0 : 1e30;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

template <typename A>
void check_add_bias(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  const auto x = random_values(rng, rows * cols, -2.0f, 2.0f);
  const auto bias = random_values(rng, cols, -1.0f, 1.0f);
  auto y = A::get().add_bias(A::upload(rows, cols, x), A::vector_weight("bias", bias));
  ASSERT_TRUE(y.has_value()) << y.error().what();
  std::vector<double> expected(rows * cols);
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t j = 0; j < cols; ++j)
      expected[t * cols + j] = static_cast<double>(x[t * cols + j]) + bias[j];
  EXPECT_LE(worst_difference(A::download(*y), expected), 1e-6)
      << "add_bias " << rows << "x" << cols;
}

template <typename A>
void check_head_rms_norm(std::size_t rows, std::size_t heads, std::size_t head_dim, unsigned seed) {
  std::mt19937 rng(seed);
  const std::size_t cols = heads * head_dim;
  const auto x = random_values(rng, rows * cols, -3.0f, 3.0f);
  const auto gain = random_values(rng, head_dim, 0.5f, 1.5f);
  const float eps = 1e-6f;
  auto y = A::get().head_rms_norm(A::upload(rows, cols, x), A::vector_weight("gain", gain),
                                  RmsNormSpec{eps});
  ASSERT_TRUE(y.has_value()) << y.error().what();
  std::vector<double> expected(rows * cols);
  for (std::size_t s = 0; s < rows * heads; ++s) {
    double sum = 0.0;
    for (std::size_t i = 0; i < head_dim; ++i)
      sum += static_cast<double>(x[s * head_dim + i]) * x[s * head_dim + i];
    const double inv = 1.0 / std::sqrt(sum / static_cast<double>(head_dim) + eps);
    for (std::size_t i = 0; i < head_dim; ++i)
      expected[s * head_dim + i] = x[s * head_dim + i] * inv * gain[i];
  }
  EXPECT_LE(worst_difference(A::download(*y), expected), 1e-5)
      << "head_rms_norm " << rows << "x" << heads << "x" << head_dim;
}

template <typename A>
void check_rotary_scaled(RotaryLayout layout, std::size_t rows, std::uint32_t heads,
                         std::uint32_t head_dim, std::uint32_t rotated, std::uint32_t first,
                         unsigned seed) {
  std::mt19937 rng(seed);
  const std::size_t cols = static_cast<std::size_t>(heads) * head_dim;
  const auto x = random_values(rng, rows * cols, -1.0f, 1.0f);
  const auto factors = random_values(rng, rotated / 2, 1.0f, 8.0f);
  const RotarySpec spec{heads, head_dim, rotated, 500000.0f, 1.0f, layout};
  auto y = A::get().rotary_scaled(A::upload(rows, cols, x), spec, first,
                                  A::vector_weight("rope_freqs", factors));
  ASSERT_TRUE(y.has_value()) << y.error().what();
  std::vector<double> expected(x.begin(), x.end());
  const std::size_t pairs = rotated / 2;
  for (std::size_t t = 0; t < rows; ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t base = (t * heads + h) * head_dim;
      for (std::size_t i = 0; i < pairs; ++i) {
        const double theta = static_cast<double>(first + t) *
                             std::pow(500000.0, -2.0 * static_cast<double>(i) / rotated) /
                             factors[i];
        const std::size_t a = base + (layout == RotaryLayout::kInterleaved ? 2 * i : i);
        const std::size_t b = base + (layout == RotaryLayout::kInterleaved ? 2 * i + 1 : i + pairs);
        const double x0 = x[a];
        const double x1 = x[b];
        expected[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        expected[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
  }
  // The CPU's dispatched kernel follows ggml's float recurrence for the angles (positions up to
  // ~40 here): a few float ulps of the angle, not a different rotation.
  EXPECT_LE(worst_difference(A::download(*y), expected), 2e-5)
      << "rotary_scaled " << rows << " tokens from " << first;
}

template <typename A>
void check_rejects_mismatched_vectors() {
  const auto x = A::upload(2, 8, std::vector<float>(16, 1.0f));
  EXPECT_FALSE(A::get().add_bias(x, A::vector_weight("short", std::vector<float>(7, 0.0f))));
  EXPECT_FALSE(A::get().head_rms_norm(x, A::vector_weight("g3", std::vector<float>(3, 1.0f)),
                                      RmsNormSpec{1e-6f}));
  const RotarySpec spec{2, 4, 4, 10000.0f, 1.0f, RotaryLayout::kHalfSplit};
  EXPECT_FALSE(
      A::get().rotary_scaled(x, spec, 0, A::vector_weight("f3", std::vector<float>(3, 1.0f))));
}

}  // namespace eredu::testing::optional_parity

#define EREDU_OPTIONAL_OPERATOR_PARITY(Name, Adapter)                                              \
  class Name##OptionalOperatorParity : public ::testing::Test {                                    \
   protected:                                                                                      \
    void SetUp() override {                                                                        \
      if (const std::string why = Adapter::unavailable(); !why.empty()) GTEST_SKIP() << why;       \
    }                                                                                              \
  };                                                                                               \
  TEST_F(Name##OptionalOperatorParity, AddBiasAddsTheVectorToEveryRow) {                           \
    ::eredu::testing::optional_parity::check_add_bias<Adapter>(1, 64, 1);                          \
    ::eredu::testing::optional_parity::check_add_bias<Adapter>(7, 33, 2);                          \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, HeadRmsNormNormalizesEveryHeadSliceOnItsOwn) {              \
    ::eredu::testing::optional_parity::check_head_rms_norm<Adapter>(1, 8, 8, 3);                   \
    ::eredu::testing::optional_parity::check_head_rms_norm<Adapter>(5, 3, 128, 4);                 \
    ::eredu::testing::optional_parity::check_head_rms_norm<Adapter>(3, 4, 17, 5);                  \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, RotaryScaledDividesEachPairAngleByItsFactor) {              \
    using ::eredu::RotaryLayout;                                                                   \
    ::eredu::testing::optional_parity::check_rotary_scaled<Adapter>(RotaryLayout::kInterleaved, 3, \
                                                                    2, 8, 8, 5, 6);                \
    ::eredu::testing::optional_parity::check_rotary_scaled<Adapter>(RotaryLayout::kHalfSplit, 4,   \
                                                                    3, 16, 12, 31, 7);             \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, MismatchedVectorsAreRejectedNotReadOutOfBounds) {           \
    ::eredu::testing::optional_parity::check_rejects_mismatched_vectors<Adapter>();                \
  }
