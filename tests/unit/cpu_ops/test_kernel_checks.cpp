// Kernel argument checks: each malformed shape or parameter is a typed error naming the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "eredu/backends/cpu/kernel_checks.hpp"

namespace {

using eredu::DType;
using eredu::ErrorCode;
using eredu::cpu::AttentionArgs;
using eredu::cpu::MatrixView;
using eredu::cpu::RopeParams;

TEST(KernelChecks, MatrixWithinItsBytesIsAccepted) {
  std::vector<std::byte> bytes(3 * 2 * 18);  // 3 rows of two Q4_0 blocks
  EXPECT_TRUE(
      eredu::cpu::check_matrix(MatrixView{DType::kQ4_0, bytes.data(), 3, 64}, bytes.size()));
}

TEST(KernelChecks, MatrixErrorsNameTheProblem) {
  std::vector<std::byte> bytes(1024);
  const auto partial_block =
      eredu::cpu::check_matrix(MatrixView{DType::kQ4_K, bytes.data(), 1, 100}, bytes.size());
  ASSERT_FALSE(partial_block);
  EXPECT_EQ(partial_block.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(partial_block.error().message().find("block size 256"), std::string::npos);

  const auto too_short =
      eredu::cpu::check_matrix(MatrixView{DType::kF32, bytes.data(), 9, 32}, bytes.size());
  ASSERT_FALSE(too_short);
  EXPECT_NE(too_short.error().message().find("needs 1152 bytes, 1024 available"),
            std::string::npos);

  const auto unsupported =
      eredu::cpu::check_matrix(MatrixView{DType::kQ8_K, bytes.data(), 1, 256}, bytes.size());
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.error().code(), ErrorCode::kUnsupported);

  const auto overflow = eredu::cpu::check_matrix(
      MatrixView{DType::kF32, bytes.data(), std::numeric_limits<std::size_t>::max() / 2, 32},
      bytes.size());
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.error().code(), ErrorCode::kOverflow);

  EXPECT_FALSE(eredu::cpu::check_matrix(MatrixView{DType::kF32, nullptr, 2, 32}, 1024));
}

TEST(KernelChecks, RopeParametersMustBeEvenWithinHeadAndPositive) {
  EXPECT_TRUE(eredu::cpu::check_rope(RopeParams{64, 10000.0F, 1.0F}, 64));
  EXPECT_FALSE(eredu::cpu::check_rope(RopeParams{7, 10000.0F, 1.0F}, 64));
  EXPECT_FALSE(eredu::cpu::check_rope(RopeParams{0, 10000.0F, 1.0F}, 64));
  EXPECT_FALSE(eredu::cpu::check_rope(RopeParams{128, 10000.0F, 1.0F}, 64));
  EXPECT_FALSE(eredu::cpu::check_rope(RopeParams{64, 0.0F, 1.0F}, 64));
  EXPECT_FALSE(eredu::cpu::check_rope(RopeParams{64, NAN, 1.0F}, 64));
  EXPECT_FALSE(eredu::cpu::check_rope(RopeParams{64, 10000.0F, -1.0F}, 64));
}

TEST(KernelChecks, AttentionRejectsBadGroupingCacheTypeAndPositions) {
  std::vector<float> buf(64);
  std::vector<std::int32_t> pos = {0, 3};
  AttentionArgs a;
  a.q = a.out = buf.data();
  a.k = a.v = buf.data();
  a.positions = pos.data();
  a.n_tokens = 2;
  a.n_head = 4;
  a.n_head_kv = 2;
  a.head_dim = 2;
  a.n_kv = 4;
  EXPECT_TRUE(eredu::cpu::check_attention(a));

  AttentionArgs bad_group = a;
  bad_group.n_head_kv = 3;
  EXPECT_FALSE(eredu::cpu::check_attention(bad_group));

  AttentionArgs bad_type = a;
  bad_type.kv_dtype = DType::kQ8_0;
  const auto type_error = eredu::cpu::check_attention(bad_type);
  ASSERT_FALSE(type_error);
  EXPECT_EQ(type_error.error().code(), ErrorCode::kUnsupported);

  AttentionArgs past_cache = a;
  past_cache.n_kv = 3;
  const auto pos_error = eredu::cpu::check_attention(past_cache);
  ASSERT_FALSE(pos_error);
  EXPECT_NE(pos_error.error().message().find("query token 1 is at position 3"), std::string::npos);

  std::vector<std::int32_t> negative = {-1};
  AttentionArgs neg = a;
  neg.positions = negative.data();
  neg.n_tokens = 1;
  EXPECT_FALSE(eredu::cpu::check_attention(neg));
}

}  // namespace
