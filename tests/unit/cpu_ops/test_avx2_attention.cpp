// The AVX2 attention (batched score and weighted-sum primitives, vectorized softmax exp) against
// the scalar reference, for head sizes that use the batched path (multiples of 8) and one that does
// not, both cache types, long contexts, and scores spread so widely that most exponentials
// underflow (the vectorized exp returns 0 below -87); and the AVX2 SwiGLU, which shares that exp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::AttentionArgs;
using eredu::cpu::Isa;
using namespace eredu::testing::op_parity;

void check(std::size_t head_dim, std::size_t n_kv, float q_spread, DType kv, double threshold) {
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  std::mt19937 rng(static_cast<unsigned>(head_dim * 1000 + n_kv));
  const std::size_t n_head = 6, n_head_kv = 2, n_tokens = 5;
  const auto q = random_floats(rng, n_tokens * n_head * head_dim, -q_spread, q_spread);
  auto k = random_floats(rng, n_kv * n_head_kv * head_dim);
  auto v = random_floats(rng, n_kv * n_head_kv * head_dim);
  std::vector<std::uint16_t> k16(k.size()), v16(v.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    k16[i] = eredu::encoding::fp32_to_fp16(k[i]);
    v16[i] = eredu::encoding::fp32_to_fp16(v[i]);
    if (kv == DType::kF16) {  // the reference reads F32: give it the cache's exact values
      k[i] = eredu::encoding::fp16_to_fp32(k16[i]);
      v[i] = eredu::encoding::fp16_to_fp32(v16[i]);
    }
  }
  std::vector<std::int32_t> pos(n_tokens);
  for (std::size_t t = 0; t < n_tokens; ++t)
    pos[t] = static_cast<std::int32_t>(n_kv - n_tokens + t);
  AttentionArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.kv_dtype = DType::kF32;
  a.positions = pos.data();
  a.n_tokens = n_tokens;
  a.n_head = n_head;
  a.n_head_kv = n_head_kv;
  a.head_dim = head_dim;
  a.n_kv = n_kv;
  a.scale = 1.0F / std::sqrt(static_cast<float>(head_dim));
  std::vector<float> expected(n_tokens * n_head * head_dim);
  a.out = expected.data();
  eredu::cpu::reference::attention(a);
  GuardedBuffer actual(expected.size());
  a.out = actual.data();
  if (kv == DType::kF16) {
    a.k = k16.data();
    a.v = v16.data();
    a.kv_dtype = DType::kF16;
  }
  avx2->attention(a, nullptr);
  EXPECT_TRUE(actual.guards_intact());
  EXPECT_TRUE(outputs_match("attention head_dim " + std::to_string(head_dim) + " n_kv " +
                                std::to_string(n_kv) + " spread " + std::to_string(q_spread),
                            actual.data(), expected.data(), expected.size(), threshold));
}

TEST(Avx2Attention, MatchesTheReferenceForBatchedAndPlainHeadSizesAndBothCaches) {
  for (DType kv : {DType::kF32, DType::kF16}) {
    for (std::size_t head_dim : {8, 24, 64, 72, 20}) {  // 20: not a multiple of 8
      for (std::size_t n_kv : {5, 7, 300}) {            // at least n_tokens
        check(head_dim, n_kv, 1.0F, kv, 1e-11);
      }
    }
  }
}

TEST(Avx2Attention, MatchesTheReferenceWhenMostExponentialsUnderflow) {
  // Scores spread over hundreds: most e^(s - max) are far below the float range.
  for (DType kv : {DType::kF32, DType::kF16}) {
    check(64, 300, 40.0F, kv, 1e-11);
  }
}

}  // namespace

namespace {

// SwiGLU on AVX2 uses the same vectorized exp: within float rounding of a float64 silu, for gates
// of every magnitude (e^-|g| underflowing for the large ones), odd lengths (vector tails) and in
// place.
TEST(Avx2Swiglu, MatchesAFloat64SiluForAllGateMagnitudesTailsAndInPlace) {
  const auto* avx2 = eredu::cpu::kernels_for(eredu::cpu::Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  std::mt19937 rng(77);
  for (std::size_t n : {1, 7, 8, 13, 1003}) {
    for (float spread : {1.0F, 10.0F, 120.0F}) {
      auto gate = eredu::testing::op_parity::random_floats(rng, n, -spread, spread);
      const auto up = eredu::testing::op_parity::random_floats(rng, n);
      std::vector<float> expected(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double g = gate[i];
        expected[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
      }
      avx2->swiglu(gate.data(), up.data(), n, gate.data(), nullptr);  // in place
      for (std::size_t i = 0; i < n; ++i) {
        const float tolerance = 4e-7F * std::abs(expected[i]) + 1e-30F;
        ASSERT_NEAR(gate[i], expected[i], tolerance)
            << "n " << n << " spread " << spread << " i " << i;
      }
    }
  }
}

}  // namespace
