// The op-parity harness catches what it is meant to catch: out-of-bounds writes on either side,
// elements never written, NaN on either side, mismatched infinities, NMSE over the threshold, and
// any bit difference when bit-identity is required.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "op_parity.hpp"

namespace {

using namespace eredu::testing::op_parity;

TEST(OpParityHarness, GuardsCatchWritesJustBeforeAndJustAfterThePayload) {
  GuardedBuffer after(8);
  EXPECT_TRUE(after.guards_intact());
  after.data()[8] = 0.0F;
  EXPECT_FALSE(after.guards_intact());
  GuardedBuffer before(8);
  before.data()[-1] = 1.0F;
  EXPECT_FALSE(before.guards_intact());
}

TEST(OpParityHarness, ElementsNeverWrittenAreReported) {
  GuardedBuffer actual(4);
  const std::vector<float> expected = {1, 2, 3, 4};
  for (int i = 0; i < 3; ++i)
    actual.data()[i] = expected[i];
  const auto result = outputs_match("op", actual.data(), expected.data(), 4, 1.0);
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("never written"), std::string::npos);
}

// Quantized products are judged by the error over their terms' magnitudes: an output whose terms
// cancel may be off by 7% of itself (rounding of the activations), while a group of terms scaled
// wrongly is caught, and so are unwritten and non-finite outputs.
TEST(OpParityHarness, TermsMetricForgivesCancellationButNotAWrongTerm) {
  const std::vector<float> expected = {-0.25F, 4.0F};
  const std::vector<double> magnitude = {20.0, 25.0};
  const std::vector<float> rounded = {-0.268F, 4.01F};  // 0.018 and 0.01 off: activation rounding
  EXPECT_TRUE(outputs_match_terms("op", rounded.data(), expected.data(), magnitude, 1e-5));
  EXPECT_FALSE(outputs_match("op", rounded.data(), expected.data(), 1, 5e-4))
      << "plain NMSE of the cancelling output alone fails its rounding";
  // One 16-element group of 256 scaled wrongly: about a sixteenth of the terms' magnitude off.
  const std::vector<float> wrong_group = {-0.25F + 1.25F, 4.0F};
  EXPECT_FALSE(outputs_match_terms("op", wrong_group.data(), expected.data(), magnitude, 1e-5));
  GuardedBuffer unwritten(2);
  unwritten.data()[0] = 1.0F;
  const auto result = outputs_match_terms("op", unwritten.data(), expected.data(), magnitude, 1.0);
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("never written"), std::string::npos);
  const std::vector<float> with_nan = {std::numeric_limits<float>::quiet_NaN(), 4.0F};
  EXPECT_FALSE(outputs_match_terms("op", with_nan.data(), expected.data(), magnitude, 1.0));
}

TEST(OpParityHarness, NanOnEitherSideFailsAndInfinitiesMustMatch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> good = {1, 2};
  const std::vector<float> with_nan = {1, nan};
  EXPECT_FALSE(outputs_match("op", with_nan.data(), good.data(), 2, 1.0));
  EXPECT_FALSE(outputs_match("op", good.data(), with_nan.data(), 2, 1.0));
  const std::vector<float> pos_inf = {1, inf};
  const std::vector<float> neg_inf = {1, -inf};
  EXPECT_TRUE(outputs_match("op", pos_inf.data(), pos_inf.data(), 2, 0.0));
  EXPECT_FALSE(outputs_match("op", pos_inf.data(), neg_inf.data(), 2, 1.0));
}

TEST(OpParityHarness, NmseIsComparedWithTheThreshold) {
  // NMSE of a 1% error everywhere is 1e-4.
  const std::vector<float> expected = {1, -2, 3, -4};
  std::vector<float> actual = expected;
  for (float& f : actual)
    f *= 1.01F;
  EXPECT_TRUE(outputs_match("op", actual.data(), expected.data(), 4, 2e-4));
  EXPECT_FALSE(outputs_match("op", actual.data(), expected.data(), 4, 5e-5));
}

TEST(OpParityHarness, ZeroThresholdRequiresBitIdentityIncludingZeroSigns) {
  const std::vector<float> a = {1.0F, 0.0F};
  const std::vector<float> b = {1.0F, -0.0F};
  EXPECT_TRUE(outputs_match("op", a.data(), a.data(), 2, 0.0));
  EXPECT_FALSE(outputs_match("op", a.data(), b.data(), 2, 0.0));
  const std::vector<float> c = {std::nextafter(1.0F, 2.0F), 0.0F};
  EXPECT_FALSE(outputs_match("op", c.data(), a.data(), 2, 0.0));
}

TEST(OpParityHarness, RandomPackedMatricesHaveFiniteScalesAndDecodeFinite) {
  std::mt19937 rng(1);
  for (eredu::DType dtype : matmul_dtypes()) {
    const std::size_t cols = std::max<std::size_t>(32, eredu::dtype_info(dtype).block_elements);
    const auto bytes = random_packed_matrix(rng, dtype, 4, cols);
    std::vector<float> row(cols);
    for (std::size_t r = 0; r < 4; ++r) {
      eredu::cpu::reference::get_row(MatrixView{dtype, bytes.data(), 4, cols}, r, row.data());
      for (float f : row)
        ASSERT_TRUE(std::isfinite(f)) << eredu::to_string(dtype);
    }
  }
}

}  // namespace
