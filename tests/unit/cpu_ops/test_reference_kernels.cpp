// The scalar reference kernels against hand-computed float64 values: known rotation angles,
// constant vectors, single-position and equal-key attention, hand-built quantized blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

namespace ref = eredu::cpu::reference;
namespace enc = eredu::encoding;
using eredu::DType;
using eredu::cpu::AttentionArgs;
using eredu::cpu::MatrixView;
using eredu::cpu::RopeMode;
using eredu::cpu::RopeParams;

constexpr double kTol = 1e-6;

TEST(ReferenceRope, NormalModeRotatesConsecutivePairsByPosTimesBasePower) {
  // head_dim 4, n_rot 4, base 10000, pos 3: theta_0 = 3, theta_1 = 3 * 10000^(-2/4) = 0.03.
  std::vector<float> x = {1.0F, 0.0F, 0.0F, 1.0F};
  const std::int32_t pos = 3;
  ref::rope(x.data(), 1, 1, 4, &pos, RopeParams{4, 10000.0F, 1.0F, RopeMode::kNormal});
  EXPECT_NEAR(x[0], std::cos(3.0), kTol);
  EXPECT_NEAR(x[1], std::sin(3.0), kTol);
  EXPECT_NEAR(x[2], -std::sin(0.03), kTol);
  EXPECT_NEAR(x[3], std::cos(0.03), kTol);
}

TEST(ReferenceRope, NeoxModePairsElementIWithElementIPlusHalf) {
  // Pairs (0, 2) with theta 3 and (1, 3) with theta 0.03.
  std::vector<float> x = {1.0F, 2.0F, 0.0F, 0.0F};
  const std::int32_t pos = 3;
  ref::rope(x.data(), 1, 1, 4, &pos, RopeParams{4, 10000.0F, 1.0F, RopeMode::kNeox});
  EXPECT_NEAR(x[0], std::cos(3.0), kTol);
  EXPECT_NEAR(x[2], std::sin(3.0), kTol);
  EXPECT_NEAR(x[1], 2.0 * std::cos(0.03), kTol);
  EXPECT_NEAR(x[3], 2.0 * std::sin(0.03), kTol);
}

TEST(ReferenceRope, FreqScaleScalesTheAngleAndDimensionsPastNRotAreUntouched) {
  // pos 4 with freq_scale 0.25 turns like pos 1; n_rot 2 of head_dim 4 leaves x[2], x[3] alone.
  std::vector<float> x = {0.0F, 1.0F, 5.0F, -7.0F};
  const std::int32_t pos = 4;
  ref::rope(x.data(), 1, 1, 4, &pos, RopeParams{2, 10000.0F, 0.25F, RopeMode::kNormal});
  EXPECT_NEAR(x[0], -std::sin(1.0), kTol);
  EXPECT_NEAR(x[1], std::cos(1.0), kTol);
  EXPECT_EQ(x[2], 5.0F);
  EXPECT_EQ(x[3], -7.0F);
}

TEST(ReferenceRope, PositionZeroIsTheIdentityForEveryHeadAndToken) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> before = x;
  const std::int32_t pos[] = {0, 0, 0};
  ref::rope(x.data(), 3, 2, 2, pos, RopeParams{2, 10000.0F, 1.0F, RopeMode::kNormal});
  EXPECT_EQ(x, before);
}

TEST(ReferenceRmsNorm, ConstantVectorBecomesWeightTimesCOverSqrtCSquaredPlusEps) {
  const double c = 0.75;
  const double eps = 1e-5;
  std::vector<float> x(10, static_cast<float>(c));
  std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<float> y(10);
  ref::rms_norm(x.data(), w.data(), 1, 10, static_cast<float>(eps), y.data());
  const double expected = c / std::sqrt(c * c + eps);
  for (int i = 0; i < 10; ++i)
    EXPECT_NEAR(y[i], expected * (i + 1), kTol) << i;
}

TEST(ReferenceRmsNorm, EachRowIsNormalizedByItsOwnRms) {
  // Row [3, 4]: mean square 12.5. Row [1, 1]: mean square 1. No weight.
  std::vector<float> x = {3, 4, 1, 1};
  std::vector<float> y(4);
  ref::rms_norm(x.data(), nullptr, 2, 2, 0.0F, y.data());
  EXPECT_NEAR(y[0], 3.0 / std::sqrt(12.5), kTol);
  EXPECT_NEAR(y[1], 4.0 / std::sqrt(12.5), kTol);
  EXPECT_NEAR(y[2], 1.0, kTol);
  EXPECT_NEAR(y[3], 1.0, kTol);
}

AttentionArgs attention_args(const std::vector<float>& q, const void* k, const void* v, DType kv,
                             const std::vector<std::int32_t>& pos, std::size_t n_head,
                             std::size_t n_head_kv, std::size_t head_dim, std::size_t n_kv,
                             float* out) {
  AttentionArgs a;
  a.q = q.data();
  a.k = k;
  a.v = v;
  a.kv_dtype = kv;
  a.positions = pos.data();
  a.n_tokens = pos.size();
  a.n_head = n_head;
  a.n_head_kv = n_head_kv;
  a.head_dim = head_dim;
  a.n_kv = n_kv;
  a.scale = 1.0F / std::sqrt(static_cast<float>(head_dim));
  a.out = out;
  return a;
}

TEST(ReferenceAttention, OneVisiblePositionReturnsItsValueWhateverTheQuery) {
  const std::vector<float> q = {3.0F, -2.0F, 0.5F};
  const std::vector<float> k = {0.1F, 0.7F, -4.0F};
  const std::vector<float> v = {1.5F, -2.5F, 8.0F};
  std::vector<float> out(3);
  ref::attention(attention_args(q, k.data(), v.data(), DType::kF32, {0}, 1, 1, 3, 1, out.data()));
  for (int d = 0; d < 3; ++d)
    EXPECT_NEAR(out[d], v[d], kTol);
}

TEST(ReferenceAttention, EqualKeysAverageTheVisibleValuesCausally) {
  // Three cache positions with the same key; query at position 1 sees positions 0 and 1 only.
  const std::vector<float> q = {1.0F, 2.0F, 0.3F, 0.3F};  // two tokens, head_dim 2
  const std::vector<float> k = {0.5F, 0.5F, 0.5F, 0.5F, 0.5F, 0.5F};
  const std::vector<float> v = {1.0F, 10.0F, 3.0F, 20.0F, 100.0F, 1000.0F};
  std::vector<float> out(4);
  ref::attention(
      attention_args(q, k.data(), v.data(), DType::kF32, {1, 2}, 1, 1, 2, 3, out.data()));
  EXPECT_NEAR(out[0], 2.0, kTol);
  EXPECT_NEAR(out[1], 15.0, kTol);
  EXPECT_NEAR(out[2], (1.0 + 3.0 + 100.0) / 3.0, 1e-4);
  EXPECT_NEAR(out[3], (10.0 + 20.0 + 1000.0) / 3.0, 1e-3);
}

TEST(ReferenceAttention, KnownScoresGiveSoftmaxWeights) {
  // head_dim 1, scale 1: scores 0 and ln 3 -> weights 1/4 and 3/4.
  const std::vector<float> q = {1.0F};
  const std::vector<float> k = {0.0F, static_cast<float>(std::log(3.0))};
  const std::vector<float> v = {4.0F, 8.0F};
  std::vector<float> out(1);
  ref::attention(attention_args(q, k.data(), v.data(), DType::kF32, {1}, 1, 1, 1, 2, out.data()));
  EXPECT_NEAR(out[0], 0.25 * 4.0 + 0.75 * 8.0, 1e-5);
}

TEST(ReferenceAttention, GroupedQueryHeadsReadTheirGroupsKvHead) {
  // 4 query heads over 2 KV heads: heads 0, 1 -> KV head 0; heads 2, 3 -> KV head 1.
  const std::vector<float> q(4 * 2, 1.0F);
  const std::vector<float> k = {1.0F, 1.0F, -1.0F, -1.0F};
  const std::vector<float> v = {5.0F, 6.0F, 7.0F, 8.0F};
  std::vector<float> out(8);
  ref::attention(attention_args(q, k.data(), v.data(), DType::kF32, {0}, 4, 2, 2, 1, out.data()));
  const std::vector<float> expected = {5, 6, 5, 6, 7, 8, 7, 8};
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(out[i], expected[i], kTol) << i;
}

TEST(ReferenceAttention, F16CacheGivesTheSameResultForRepresentableValues) {
  const std::vector<float> q = {0.5F, -1.0F, 0.25F, 2.0F};
  const std::vector<float> k = {1.0F, 0.5F, -0.25F, 2.0F, 0.125F, -1.5F};
  const std::vector<float> v = {3.0F, -1.0F, 0.5F, 0.75F, -2.0F, 4.0F};
  std::vector<std::uint16_t> k16(k.size()), v16(v.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    k16[i] = enc::fp32_to_fp16(k[i]);
    v16[i] = enc::fp32_to_fp16(v[i]);
  }
  std::vector<float> out32(4), out16(4);
  ref::attention(
      attention_args(q, k.data(), v.data(), DType::kF32, {1, 2}, 1, 1, 2, 3, out32.data()));
  ref::attention(
      attention_args(q, k16.data(), v16.data(), DType::kF16, {1, 2}, 1, 1, 2, 3, out16.data()));
  EXPECT_EQ(out32, out16);
}

TEST(ReferenceMatmul, F32ProductOfTwoTokensMatchesHandComputation) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};  // [3, 2]
  const std::vector<float> x = {1, -1, 0.5F, 2};    // two tokens
  std::vector<float> y(6);
  ref::matmul(MatrixView{DType::kF32, w.data(), 3, 2}, x.data(), 2, y.data());
  const std::vector<float> expected = {-1, -1, -1, 4.5F, 9.5F, 14.5F};
  EXPECT_EQ(y, expected);
}

TEST(ReferenceMatmul, Q8_0BlockDotIsScaleTimesIntegerDot) {
  // d = 0.5, q_i = i - 16: with x = ones the dot is 0.5 * sum(i - 16) = -8; with x = e_5 it is
  // 0.5 * (5 - 16) = -5.5.
  enc::BlockQ8_0 block{};
  block.d = enc::fp32_to_fp16(0.5F);
  for (int i = 0; i < 32; ++i)
    block.qs[i] = static_cast<std::int8_t>(i - 16);
  std::vector<float> x(64, 0.0F);
  for (int i = 0; i < 32; ++i)
    x[i] = 1.0F;
  x[32 + 5] = 1.0F;
  std::vector<float> y(2);
  ref::matmul(MatrixView{DType::kQ8_0, &block, 1, 32}, x.data(), 2, y.data());
  EXPECT_EQ(y[0], -8.0F);
  EXPECT_EQ(y[1], -5.5F);
}

TEST(ReferenceMatmul, Q4_0NibblesAreOffsetByEightAndScaled) {
  // d = 2, every byte 0x9A: elements 0..15 = 2 * (10 - 8) = 4, elements 16..31 = 2 * (9 - 8) = 2.
  enc::BlockQ4_0 block{};
  block.d = enc::fp32_to_fp16(2.0F);
  std::memset(block.qs, 0x9A, sizeof block.qs);
  std::vector<float> x(32, 1.0F);
  float y = 0.0F;
  ref::matmul(MatrixView{DType::kQ4_0, &block, 1, 32}, x.data(), 1, &y);
  EXPECT_EQ(y, 16 * 4.0F + 16 * 2.0F);
  std::vector<float> row(32);
  ref::get_row(MatrixView{DType::kQ4_0, &block, 1, 32}, 0, row.data());
  EXPECT_EQ(row[0], 4.0F);
  EXPECT_EQ(row[31], 2.0F);
}

TEST(ReferenceGetRow, LooksUpTheRequestedRowOfAPackedTable) {
  enc::BlockQ8_0 rows[3]{};
  for (int r = 0; r < 3; ++r) {
    rows[r].d = enc::fp32_to_fp16(0.25F);
    for (int i = 0; i < 32; ++i)
      rows[r].qs[i] = static_cast<std::int8_t>(r * 10 + i);
  }
  std::vector<float> out(32);
  ref::get_row(MatrixView{DType::kQ8_0, rows, 3, 32}, 2, out.data());
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out[i], 0.25F * static_cast<float>(20 + i)) << i;
}

TEST(ReferenceElementwise, SwigluIsSiluOfGateTimesUp) {
  const std::vector<float> gate = {0.0F, 1.0F, -2.0F};
  const std::vector<float> up = {5.0F, 2.0F, 3.0F};
  std::vector<float> out(3);
  ref::swiglu(gate.data(), up.data(), 3, out.data());
  EXPECT_EQ(out[0], 0.0F);
  EXPECT_NEAR(out[1], 2.0 / (1.0 + std::exp(-1.0)), kTol);
  EXPECT_NEAR(out[2], 3.0 * -2.0 / (1.0 + std::exp(2.0)), kTol);
}

TEST(ReferenceElementwise, SoftmaxOfLogsIsTheNormalizedInputs) {
  std::vector<float> x = {0.0F, static_cast<float>(std::log(2.0)),
                          static_cast<float>(std::log(3.0))};
  ref::softmax(x.data(), 3);
  EXPECT_NEAR(x[0], 1.0 / 6.0, kTol);
  EXPECT_NEAR(x[1], 2.0 / 6.0, kTol);
  EXPECT_NEAR(x[2], 3.0 / 6.0, kTol);
}

TEST(ReferenceElementwise, AddMayWriteInPlace) {
  std::vector<float> a = {1, 2, 3};
  const std::vector<float> b = {10, 20, 30};
  ref::add(a.data(), b.data(), 3, a.data());
  EXPECT_EQ(a, (std::vector<float>{11, 22, 33}));
}

TEST(Argmax, ReturnsTheFirstIndexOfTheLargestValue) {
  const std::vector<float> x = {1.0F, 7.0F, -3.0F, 7.0F};
  EXPECT_EQ(eredu::cpu::argmax(x.data(), x.size()), 1U);
}

TEST(ReferenceDtypes, UnsupportedEncodingsAreReportedNotDecoded) {
  EXPECT_TRUE(ref::supports_dtype(DType::kQ6_K));
  EXPECT_TRUE(ref::supports_dtype(DType::kIQ4_XS));
  EXPECT_FALSE(ref::supports_dtype(DType::kQ8_K));
  EXPECT_FALSE(ref::supports_dtype(DType::kF64));
  EXPECT_FALSE(eredu::cpu::kernels().supports_matmul(DType::kQ8_1));
}

}  // namespace
