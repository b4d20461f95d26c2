// The q8_1 activation quantizer (dot/act_q8_1.hpp) against the CPU backend's: the codes and the
// F16 scale must equal reference::quantize_row_q8_0 (the CPU backend's public reference, whose
// formula its AVX2 quantize_act_q8 also uses) bit for bit on random rows of many magnitudes, and
// the F16 scaled sum must equal the CPU backend's s = round_to_half(d * sum(q)) (quantize_act_q8
// is internal to backends/cpu, so the test re-derives that one line). Exact ties show the
// rounding is half-to-even, as the CPU backend's, not ggml's roundf.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/backends/cuda/dot/act_q8_1.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

namespace dot = eredu::cuda::dot;
namespace enc = eredu::encoding;

// Quantizes x with both and compares every block; `what` names the row in failures.
void expect_same_as_cpu(const std::vector<float>& x, const char* what) {
  const std::size_t n_blocks = x.size() / 32;
  std::vector<dot::BlockQ8_1> got(n_blocks);
  dot::quantize_row_q8_1(x.data(), got.data(), static_cast<std::int64_t>(x.size()));
  std::vector<enc::BlockQ8_0> want(n_blocks);
  eredu::cpu::reference::quantize_row_q8_0(x.data(), want.data(), x.size());
  for (std::size_t b = 0; b < n_blocks; ++b) {
    ASSERT_EQ(got[b].d, want[b].d) << what << " block " << b;
    int sum = 0;
    for (int i = 0; i < 32; ++i) {
      ASSERT_EQ(got[b].qs[i], want[b].qs[i]) << what << " block " << b << " element " << i;
      sum += want[b].qs[i];
    }
    // The CPU backend's s: d before its F16 rounding, times the code sum, rounded to F16.
    float max_abs = 0.0F;
    for (int i = 0; i < 32; ++i)
      max_abs = std::fmax(max_abs, std::fabs(x[32 * b + i]));
    const float d = max_abs / 127.0F;
    ASSERT_EQ(got[b].s, enc::fp32_to_fp16(d * static_cast<float>(sum))) << what << " block " << b;
  }
}

TEST(CudaActQ8_1, MatchesTheCpuBackendQuantizerOnRandomRows) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  const float magnitudes[] = {1e-6F, 1e-3F, 0.37F, 1.0F, 29.0F, 3000.0F, 6.0e4F};
  for (float magnitude : magnitudes) {
    for (int row = 0; row < 40; ++row) {
      std::vector<float> x(4096);
      for (float& v : x)
        v = magnitude * (row % 2 == 0 ? normal(rng) : uniform(rng));
      // Outliers (as in real activations) and an all-zero block.
      x[rng() % x.size()] *= 50.0F;
      for (int i = 0; i < 32; ++i)
        x[64 + i] = 0.0F;
      expect_same_as_cpu(x, "random");
    }
  }
}

TEST(CudaActQ8_1, RoundsTiesToEvenLikeTheCpuBackend) {
  // max|x| = 127 makes 127 / max|x| exactly 1, so x * id is x and halves are exact ties.
  std::vector<float> x(32, 0.0F);
  x[0] = 127.0F;
  x[1] = 2.5F;
  x[2] = 3.5F;
  x[3] = -2.5F;
  x[4] = 0.5F;
  x[5] = -126.5F;
  dot::BlockQ8_1 block{};
  dot::quantize_block_q8_1(x.data(), block);
  EXPECT_EQ(block.qs[1], 2);  // roundf would give 3
  EXPECT_EQ(block.qs[2], 4);
  EXPECT_EQ(block.qs[3], -2);
  EXPECT_EQ(block.qs[4], 0);
  EXPECT_EQ(block.qs[5], -126);
  EXPECT_EQ(block.d, enc::fp32_to_fp16(1.0F));
  EXPECT_EQ(block.s, enc::fp32_to_fp16(127.0F + 2 + 4 - 2 + 0 - 126));
  expect_same_as_cpu(x, "ties");
}

TEST(CudaActQ8_1, AllZeroBlockHasZeroScaleAndCodes) {
  std::vector<float> x(32, 0.0F);
  dot::BlockQ8_1 block{};
  block.qs[0] = 9;
  dot::quantize_block_q8_1(x.data(), block);
  EXPECT_EQ(block.d, 0);
  EXPECT_EQ(block.s, 0);
  for (std::int8_t q : block.qs)
    EXPECT_EQ(q, 0);
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
