// The AVX2 matmul's llama.cpp-tracking numerics, pinned down exactly: the integer path for
// 32-blocks is exact when the activations are already on an 8-bit grid (so its only approximation
// is the activation quantization itself), and F16 / BF16 weights see activations rounded to their
// precision, as ggml's vec_dot_type does. The generic table keeps F32 activations.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::MatrixView;
using namespace eredu::testing::op_parity;

// Activations k * 2^-6 with integer k in [-127, 127]; each block of 32 holds +-127 (so the block
// scale is exactly 2^-6) and sums to zero (so the Q8_1-style block sum is exact in F16).
std::vector<float> grid_activations(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> k_dist(-127, 127);
  std::vector<float> x(n);
  for (std::size_t b = 0; b < n / 32; ++b) {
    for (std::size_t i = 0; i < 16; ++i) {
      const int k = i == 0 ? 127 : k_dist(rng);
      x[32 * b + i] = static_cast<float>(k) / 64.0F;
      x[32 * b + 16 + i] = static_cast<float>(-k) / 64.0F;
    }
  }
  return x;
}

TEST(Avx2MatmulNumerics, IntegerPathIsExactOnActivationsAlreadyOnTheEightBitGrid) {
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  for (DType dtype : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1}) {
    std::mt19937 rng(3 + static_cast<unsigned>(dtype));
    const std::size_t rows = 23, cols = 160, tokens = 3;
    const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView w{dtype, bytes.data(), rows, cols};
    const auto x = grid_activations(rng, tokens * cols);
    std::vector<float> expected(rows * tokens), actual(rows * tokens);
    eredu::cpu::reference::matmul(w, x.data(), tokens, expected.data());
    avx2->matmul(w, x.data(), tokens, actual.data(), nullptr);
    EXPECT_TRUE(outputs_match(std::string(eredu::to_string(dtype)), actual.data(), expected.data(),
                              actual.size(), 1e-11));
  }
}

TEST(Avx2MatmulNumerics, IntegerPathErrorIsTheActivationQuantizationError) {
  // Off the grid the result differs from the float reference, by about what 8-bit activations
  // cost: clearly above float rounding, well below the parity threshold.
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  std::mt19937 rng(21);
  const std::size_t rows = 64, cols = 256, tokens = 4;
  const auto bytes = random_packed_matrix(rng, DType::kQ8_0, rows, cols);
  const MatrixView w{DType::kQ8_0, bytes.data(), rows, cols};
  const auto x = random_floats(rng, tokens * cols);
  std::vector<float> expected(rows * tokens), actual(rows * tokens);
  eredu::cpu::reference::matmul(w, x.data(), tokens, expected.data());
  avx2->matmul(w, x.data(), tokens, actual.data(), nullptr);
  EXPECT_TRUE(outputs_match("Q8_0 off-grid", actual.data(), expected.data(), actual.size(), 1e-4));
  EXPECT_FALSE(outputs_match("Q8_0 off-grid", actual.data(), expected.data(), actual.size(), 1e-9));
}

TEST(Avx2MatmulNumerics, HalfWeightsSeeActivationsRoundedToTheirPrecision) {
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  const auto* generic = eredu::cpu::kernels_for(Isa::kGeneric);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    std::mt19937 rng(8 + static_cast<unsigned>(dtype));
    const std::size_t rows = 17, cols = 96, tokens = 5;
    const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView w{dtype, bytes.data(), rows, cols};
    const auto x = random_floats(rng, tokens * cols);
    std::vector<float> x_rounded(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x_rounded[i] = dtype == DType::kF16
                         ? eredu::encoding::fp16_to_fp32(eredu::encoding::fp32_to_fp16(x[i]))
                         : eredu::encoding::bf16_to_fp32(eredu::encoding::fp32_to_bf16(x[i]));
    }
    std::vector<float> on_rounded(rows * tokens), on_exact(rows * tokens);
    eredu::cpu::reference::matmul(w, x_rounded.data(), tokens, on_rounded.data());
    eredu::cpu::reference::matmul(w, x.data(), tokens, on_exact.data());
    std::vector<float> avx2_out(rows * tokens), generic_out(rows * tokens);
    avx2->matmul(w, x.data(), tokens, avx2_out.data(), nullptr);
    generic->matmul(w, x.data(), tokens, generic_out.data(), nullptr);
    const std::string name(eredu::to_string(dtype));
    EXPECT_TRUE(outputs_match(name + " avx2 vs rounded-activation reference", avx2_out.data(),
                              on_rounded.data(), avx2_out.size(), 1e-12));
    EXPECT_TRUE(outputs_match(name + " generic vs F32-activation reference", generic_out.data(),
                              on_exact.data(), generic_out.size(), 1e-12));
  }
}

}  // namespace
