#pragma once
// Parity of the optional operators the decoder families use (add_bias, head_rms_norm,
// rotary_scaled), written once and instantiated per backend: each runs through the backend's
// NeuralBackend operator (the path the model runs) and is compared with a float64 computation
// written here from the definitions in core/concepts/optional_operators.hpp.
//
// The backend is reached through the op-parity suite's adapter (neural_op_table.hpp: backend(),
// upload, download, materialization_context, after_op); vectors become weights through the
// backend's own materialize(). Plug a backend in with
//   struct MyOptional {
//     static std::string unavailable();                       // non-empty: skip with it
//     static std::shared_ptr<const MyAdapter> adapter();
//   };
//   EREDU_OPTIONAL_OPERATOR_PARITY(MyBackendName, MyOptional);

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/core/concepts/optional_operators.hpp"
#include "eredu/core/neural_specs.hpp"
#include "neural_op_table.hpp"

namespace eredu::testing::optional_parity {

inline std::vector<float> random_values(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

template <typename A>
typename A::backend_type::tensor upload(const A& a, std::size_t rows, std::size_t cols,
                                        const std::vector<float>& v) {
  auto t = a.upload(std::span<const float>(v), rows, cols);
  EXPECT_TRUE(t.has_value()) << t.error().what();
  return std::move(t).value();
}

template <typename A>
typename A::backend_type::weight vector_weight(const A& a, const std::string& name,
                                               const std::vector<float>& v) {
  auto w = neural_ops_detail::make_weight(a, name, DType::kF32, {v.size()},
                                          neural_ops_detail::float_bytes(v));
  EXPECT_TRUE(w.has_value()) << w.error().what();
  return std::move(w).value();
}

template <typename A>
std::vector<float> download(const A& a, const typename A::backend_type::tensor& t) {
  auto out = a.download(t);
  EXPECT_TRUE(out.has_value()) << out.error().what();
  a.after_op();
  return out.has_value() ? *out : std::vector<float>{};
}

inline double worst_difference(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = a.size() == b.size() ? 0.0 : 1e30;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

template <typename A>
void check_add_bias(const A& a, std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  const auto x = random_values(rng, rows * cols, -2.0f, 2.0f);
  const auto bias = random_values(rng, cols, -1.0f, 1.0f);
  auto y = a.backend().add_bias(upload(a, rows, cols, x), vector_weight(a, "bias", bias));
  ASSERT_TRUE(y.has_value()) << y.error().what();
  std::vector<double> expected(rows * cols);
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t j = 0; j < cols; ++j)
      expected[t * cols + j] = static_cast<double>(x[t * cols + j]) + bias[j];
  EXPECT_LE(worst_difference(download(a, *y), expected), 1e-6)
      << "add_bias " << rows << "x" << cols;
}

template <typename A>
void check_head_rms_norm(const A& a, std::size_t rows, std::size_t heads, std::size_t head_dim,
                         unsigned seed) {
  std::mt19937 rng(seed);
  const std::size_t cols = heads * head_dim;
  const auto x = random_values(rng, rows * cols, -3.0f, 3.0f);
  const auto gain = random_values(rng, head_dim, 0.5f, 1.5f);
  const float eps = 1e-6f;
  auto y = a.backend().head_rms_norm(upload(a, rows, cols, x), vector_weight(a, "gain", gain),
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
  EXPECT_LE(worst_difference(download(a, *y), expected), 1e-5)
      << "head_rms_norm " << rows << "x" << heads << "x" << head_dim;
}

template <typename A>
void check_rotary_scaled(const A& a, RotaryLayout layout, std::size_t rows, std::uint32_t heads,
                         std::uint32_t head_dim, std::uint32_t rotated, std::uint32_t first,
                         unsigned seed) {
  std::mt19937 rng(seed);
  const std::size_t cols = static_cast<std::size_t>(heads) * head_dim;
  const auto x = random_values(rng, rows * cols, -1.0f, 1.0f);
  const auto factors = random_values(rng, rotated / 2, 1.0f, 8.0f);
  const RotarySpec spec{heads, head_dim, rotated, 500000.0f, 1.0f, layout};
  auto y = a.backend().rotary_scaled(upload(a, rows, cols, x), spec, first,
                                     vector_weight(a, "rope_freqs", factors));
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
        const std::size_t j0 = base + (layout == RotaryLayout::kInterleaved ? 2 * i : i);
        const std::size_t j1 =
            base + (layout == RotaryLayout::kInterleaved ? 2 * i + 1 : i + pairs);
        const double x0 = x[j0];
        const double x1 = x[j1];
        expected[j0] = x0 * std::cos(theta) - x1 * std::sin(theta);
        expected[j1] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
  }
  // The CPU's dispatched kernel follows ggml's float recurrence for the angles (positions up to
  // ~40 here): a few float ulps of the angle, not a different rotation.
  EXPECT_LE(worst_difference(download(a, *y), expected), 2e-5)
      << "rotary_scaled " << rows << " tokens from " << first;
}

template <typename A>
void check_rejects_mismatched_vectors(const A& a) {
  const auto x = upload(a, 2, 8, std::vector<float>(16, 1.0f));
  EXPECT_FALSE(a.backend().add_bias(x, vector_weight(a, "short", std::vector<float>(7, 0.0f))));
  EXPECT_FALSE(a.backend().head_rms_norm(x, vector_weight(a, "g3", std::vector<float>(3, 1.0f)),
                                         RmsNormSpec{1e-6f}));
  const RotarySpec spec{2, 4, 4, 10000.0f, 1.0f, RotaryLayout::kHalfSplit};
  EXPECT_FALSE(
      a.backend().rotary_scaled(x, spec, 0, vector_weight(a, "f3", std::vector<float>(3, 1.0f))));
  a.after_op();
}

// linear_shared_input against one linear per weight (bit for bit: the contract is linear's values)
// and against a float64 product of the reference decoding of each weight, judged over the
// magnitude of each output's terms as the matmul sweep judges block-quantized products. One token
// (where the CPU shares the activation and the pool job) and three (one linear each).
template <typename A>
void check_linear_shared_input(const A& a, std::size_t tokens, unsigned seed) {
  using B = typename A::backend_type;
  if constexpr (!provides<B, OptionalOperator::kSharedInputLinear>) {
    GTEST_SKIP() << "this backend takes one linear per weight (it declares no "
                    "shared_input_linear)";
  } else {
    std::mt19937 rng(seed);
    const std::size_t cols = 512;  // whole K-quant super-blocks
    struct Case {
      DType dtype;
      std::size_t rows;
    };
    // Odd row counts, one weight of one row and several encodings in one group (a Q4_K_M layer
    // mixes Q4_K and Q6_K).
    const Case cases[] = {{DType::kQ4_0, 67}, {DType::kQ4_K, 40}, {DType::kQ6_K, 9},
                          {DType::kQ8_0, 1},  {DType::kF16, 33},  {DType::kQ5_1, 12}};
    std::vector<std::vector<std::byte>> bytes;
    std::vector<typename B::weight> weights;
    for (const Case& c : cases) {
      bytes.push_back(op_parity::random_packed_matrix(rng, c.dtype, c.rows, cols));
      auto w = neural_ops_detail::make_weight(a, "w" + std::to_string(weights.size()), c.dtype,
                                              {c.rows, cols}, bytes.back());
      ASSERT_TRUE(w.has_value()) << w.error().what();
      weights.push_back(std::move(w).value());
    }
    std::vector<const typename B::weight*> group;
    for (const auto& w : weights)
      group.push_back(&w);
    const auto x = random_values(rng, tokens * cols, -1.0f, 1.0f);
    const auto xt = upload(a, tokens, cols, x);
    auto ys = a.backend().linear_shared_input(xt, group);
    ASSERT_TRUE(ys.has_value()) << ys.error().what();
    ASSERT_EQ(ys->size(), group.size());
    for (std::size_t i = 0; i < group.size(); ++i) {
      const std::string what = "weight " + std::to_string(i) + " (" +
                               std::string(to_string(cases[i].dtype)) + "), " +
                               std::to_string(tokens) + " tokens";
      const std::vector<float> got = download(a, (*ys)[i]);
      auto alone = a.backend().linear(xt, *group[i]);
      ASSERT_TRUE(alone.has_value()) << alone.error().what();
      const std::vector<float> want = download(a, *alone);
      ASSERT_EQ(got.size(), tokens * cases[i].rows) << what;
      EXPECT_TRUE(op_parity::outputs_match(what + " against linear", got.data(), want.data(),
                                           got.size(), 0.0));
      const auto exact = op_parity::float64_product(
          op_parity::MatrixView{cases[i].dtype, bytes[i].data(), cases[i].rows, cols}, x.data(),
          tokens);
      EXPECT_TRUE(op_parity::outputs_match_terms(what + " against float64", got.data(),
                                                 exact.values.data(), exact.magnitude, 1e-5));
    }
  }
}

template <typename A>
void check_linear_shared_input_rejects_a_mismatched_weight(const A& a) {
  using B = typename A::backend_type;
  if constexpr (!provides<B, OptionalOperator::kSharedInputLinear>) {
    GTEST_SKIP() << "this backend takes one linear per weight (it declares no "
                    "shared_input_linear)";
  } else {
    std::mt19937 rng(9);
    auto good = neural_ops_detail::make_weight(
        a, "attn_q", DType::kF32, {4, 64},
        neural_ops_detail::float_bytes(random_values(rng, 4 * 64, -1.0f, 1.0f)));
    auto bad = neural_ops_detail::make_weight(
        a, "attn_k_narrow", DType::kF32, {4, 32},
        neural_ops_detail::float_bytes(random_values(rng, 4 * 32, -1.0f, 1.0f)));
    ASSERT_TRUE(good.has_value() && bad.has_value());
    const typename B::weight* group[] = {&*good, &*bad};
    auto ys =
        a.backend().linear_shared_input(upload(a, 1, 64, std::vector<float>(64, 1.0f)), group);
    ASSERT_FALSE(ys.has_value());
    EXPECT_NE(std::string(ys.error().what()).find("attn_k_narrow"), std::string::npos)
        << ys.error().what();
    a.after_op();
  }
}

}  // namespace eredu::testing::optional_parity

#define EREDU_OPTIONAL_OPERATOR_PARITY(Name, Factory)                                              \
  class Name##OptionalOperatorParity : public ::testing::Test {                                    \
   protected:                                                                                      \
    void SetUp() override {                                                                        \
      if (const std::string why = Factory::unavailable(); !why.empty()) GTEST_SKIP() << why;       \
      adapter_ = Factory::adapter();                                                               \
    }                                                                                              \
    decltype(Factory::adapter()) adapter_;                                                         \
  };                                                                                               \
  TEST_F(Name##OptionalOperatorParity, AddBiasAddsTheVectorToEveryRow) {                           \
    ::eredu::testing::optional_parity::check_add_bias(*adapter_, 1, 64, 1);                        \
    ::eredu::testing::optional_parity::check_add_bias(*adapter_, 7, 33, 2);                        \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, HeadRmsNormNormalizesEveryHeadSliceOnItsOwn) {              \
    ::eredu::testing::optional_parity::check_head_rms_norm(*adapter_, 1, 8, 8, 3);                 \
    ::eredu::testing::optional_parity::check_head_rms_norm(*adapter_, 5, 3, 128, 4);               \
    ::eredu::testing::optional_parity::check_head_rms_norm(*adapter_, 3, 4, 17, 5);                \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, RotaryScaledDividesEachPairAngleByItsFactor) {              \
    using ::eredu::RotaryLayout;                                                                   \
    ::eredu::testing::optional_parity::check_rotary_scaled(*adapter_, RotaryLayout::kInterleaved,  \
                                                           3, 2, 8, 8, 5, 6);                      \
    ::eredu::testing::optional_parity::check_rotary_scaled(*adapter_, RotaryLayout::kHalfSplit, 4, \
                                                           3, 16, 12, 31, 7);                      \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, MismatchedVectorsAreRejectedNotReadOutOfBounds) {           \
    ::eredu::testing::optional_parity::check_rejects_mismatched_vectors(*adapter_);                \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, SharedInputLinearGivesEachWeightItsLinearValues) {          \
    ::eredu::testing::optional_parity::check_linear_shared_input(*adapter_, 1, 10);                \
    ::eredu::testing::optional_parity::check_linear_shared_input(*adapter_, 3, 11);                \
  }                                                                                                \
  TEST_F(Name##OptionalOperatorParity, SharedInputLinearNamesAWeightOfAnotherWidth) {              \
    ::eredu::testing::optional_parity::check_linear_shared_input_rejects_a_mismatched_weight(      \
        *adapter_);                                                                                \
  }
