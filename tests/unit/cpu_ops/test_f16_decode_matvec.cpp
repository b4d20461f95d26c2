// The AVX2 one-token F16 matmul widens each weight row in registers inside the dot product. Its
// contract: exactly the value of widening the row to F32 first and taking the F32 product (the
// same four accumulators in the same order), for row lengths with every kind of tail. The check
// compares against the F32 matmul of the widened weights (a separate code path: F32 rows are read
// in place), on activations already on the F16 grid so the F16 path's activation rounding is the
// identity; and against a float64 dot to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

using eredu::DType;
using eredu::cpu::MatrixView;

TEST(F16DecodeMatvec, OneTokenF16ProductIsBitIdenticalToTheF32ProductOfTheWidenedRows) {
  const auto* k = eredu::cpu::kernels_for(eredu::cpu::Isa::kAvx2);
  if (k == nullptr) GTEST_SKIP() << "this CPU has no AVX2 + FMA + F16C";
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  eredu::cpu::ThreadPool pool(3);
  for (const std::size_t cols : {1u, 7u, 8u, 9u, 31u, 32u, 33u, 100u, 576u, 2051u}) {
    const std::size_t rows = 37;
    std::vector<std::uint16_t> w16(rows * cols);
    std::vector<float> w32(rows * cols);
    for (std::size_t i = 0; i < w16.size(); ++i) {
      w16[i] = eredu::encoding::fp32_to_fp16(normal(rng));
      w32[i] = eredu::encoding::fp16_to_fp32(w16[i]);
    }
    std::vector<float> x(cols);
    for (auto& v : x)
      v = eredu::encoding::fp16_to_fp32(eredu::encoding::fp32_to_fp16(normal(rng)));
    std::vector<float> y16(rows), y32(rows);
    k->matmul(MatrixView{DType::kF16, w16.data(), rows, cols}, x.data(), 1, y16.data(), &pool);
    k->matmul(MatrixView{DType::kF32, w32.data(), rows, cols}, x.data(), 1, y32.data(), &pool);
    for (std::size_t r = 0; r < rows; ++r) {
      std::uint32_t a = 0, b = 0;
      std::memcpy(&a, &y16[r], 4);
      std::memcpy(&b, &y32[r], 4);
      EXPECT_EQ(a, b) << "cols " << cols << " row " << r << ": " << y16[r] << " vs " << y32[r];
      double exact = 0.0, magnitude = 0.0;
      for (std::size_t i = 0; i < cols; ++i) {
        exact += static_cast<double>(w32[r * cols + i]) * x[i];
        magnitude += std::fabs(static_cast<double>(w32[r * cols + i]) * x[i]);
      }
      EXPECT_NEAR(y16[r], exact, 1e-6 * magnitude + 1e-6) << "cols " << cols << " row " << r;
    }
  }
}

TEST(F16DecodeMatvec,
     OneTokenAndShortBatchBf16ProductsAreBitIdenticalToTheF32ProductOfTheWidenedRows) {
  const auto* k = eredu::cpu::kernels_for(eredu::cpu::Isa::kAvx2);
  if (k == nullptr) GTEST_SKIP() << "this CPU has no AVX2 + FMA + F16C";
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  eredu::cpu::ThreadPool pool(3);
  for (const std::size_t cols : {1u, 7u, 8u, 9u, 31u, 32u, 33u, 100u, 576u, 2051u}) {
    for (const std::size_t tokens : {1u, 2u, 5u, 16u}) {
      const std::size_t rows = 37;
      std::vector<std::uint16_t> w16(rows * cols);
      std::vector<float> w32(rows * cols);
      for (std::size_t i = 0; i < w16.size(); ++i) {
        w16[i] = eredu::encoding::fp32_to_bf16(normal(rng));
        w32[i] = eredu::encoding::bf16_to_fp32(w16[i]);
      }
      // Activations on the BF16 grid: the BF16 path's activation rounding is the identity.
      std::vector<float> x(tokens * cols);
      for (auto& v : x)
        v = eredu::encoding::bf16_to_fp32(eredu::encoding::fp32_to_bf16(normal(rng)));
      std::vector<float> y16(rows * tokens), y32(rows * tokens);
      k->matmul(MatrixView{DType::kBF16, w16.data(), rows, cols}, x.data(), tokens, y16.data(),
                &pool);
      k->matmul(MatrixView{DType::kF32, w32.data(), rows, cols}, x.data(), tokens, y32.data(),
                &pool);
      for (std::size_t i = 0; i < y16.size(); ++i) {
        std::uint32_t a = 0, b = 0;
        std::memcpy(&a, &y16[i], 4);
        std::memcpy(&b, &y32[i], 4);
        EXPECT_EQ(a, b) << "cols " << cols << " tokens " << tokens << " element " << i << ": "
                        << y16[i] << " vs " << y32[i];
      }
    }
  }
}

}  // namespace
