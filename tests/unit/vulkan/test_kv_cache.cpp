// The device-local KV cache: staged writes, attention reading it in place, checkpoint and
// truncate, bounds; compared with the scalar CPU reference attention over the same rows.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cmath>
#include <random>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"
#include "vulkan_test_context.hpp"

namespace {

using eredu::DType;
using eredu::ErrorCode;
using eredu::testing::expect_no_validation_messages;
using eredu::testing::VulkanTestContext;
using eredu::testing::op_parity::outputs_match;
using eredu::testing::op_parity::random_floats;
using eredu::vulkan::KvCache;

constexpr std::size_t kHeads = 4;
constexpr std::size_t kHeadsKv = 2;
constexpr std::size_t kDim = 8;
constexpr std::size_t kRow = kHeadsKv * kDim;

// Reference attention of the last `n_tokens` positions of a `n_kv`-row host cache.
std::vector<float> reference_attention(DType dtype, const std::vector<float>& k,
                                       const std::vector<float>& v, std::size_t n_kv,
                                       const std::vector<float>& q,
                                       const std::vector<std::int32_t>& positions) {
  std::vector<std::uint16_t> k16(n_kv * kRow);
  std::vector<std::uint16_t> v16(n_kv * kRow);
  for (std::size_t i = 0; i < n_kv * kRow; ++i) {
    k16[i] = eredu::encoding::fp32_to_fp16(k[i]);
    v16[i] = eredu::encoding::fp32_to_fp16(v[i]);
  }
  std::vector<float> out(q.size());
  eredu::cpu::AttentionArgs a;
  a.q = q.data();
  a.k = dtype == DType::kF16 ? static_cast<const void*>(k16.data()) : k.data();
  a.v = dtype == DType::kF16 ? static_cast<const void*>(v16.data()) : v.data();
  a.kv_dtype = dtype;
  a.positions = positions.data();
  a.n_tokens = positions.size();
  a.n_head = kHeads;
  a.n_head_kv = kHeadsKv;
  a.head_dim = kDim;
  a.n_kv = n_kv;
  a.scale = 1.0F / std::sqrt(static_cast<float>(kDim));
  a.out = out.data();
  eredu::cpu::reference::attention(a);
  return out;
}

void check_cache(DType dtype) {
  auto& ctx = VulkanTestContext::get();
  auto created = KvCache::create(ctx.device(), 2, 16, kHeadsKv, kDim, dtype);
  ASSERT_TRUE(created.has_value()) << created.error().what();
  KvCache cache = std::move(created).value();
  std::mt19937 rng(9 + static_cast<unsigned>(dtype));
  std::vector<float> k = random_floats(rng, 16 * kRow);
  std::vector<float> v = random_floats(rng, 16 * kRow);
  // Prefill 5 positions of layer 1, then decode one more.
  ASSERT_TRUE(cache.write(1, 0, k.data(), v.data(), 5).has_value());
  ASSERT_TRUE(cache.write(1, 5, k.data() + 5 * kRow, v.data() + 5 * kRow, 1).has_value());
  EXPECT_EQ(cache.length(), 6U);
  const float scale = 1.0F / std::sqrt(static_cast<float>(kDim));
  const std::vector<std::int32_t> positions = {3, 5};
  const std::vector<float> q = random_floats(rng, positions.size() * kHeads * kDim);
  std::vector<float> out(q.size());
  ASSERT_TRUE(ctx.kernels()
                  .attention(cache, 1, q.data(), positions.data(), positions.size(), kHeads, scale,
                             out.data())
                  .has_value());
  const std::vector<float> expected = reference_attention(dtype, k, v, 6, q, positions);
  EXPECT_TRUE(outputs_match("kv cache attention", out.data(), expected.data(), out.size(), 1e-6));

  // Roll back to a checkpoint and overwrite position 5: attention sees only the new row.
  const std::size_t mark = 5;
  ASSERT_TRUE(cache.truncate(mark).has_value());
  EXPECT_EQ(cache.length(), 5U);
  std::vector<float> k2 = k;
  std::vector<float> v2 = v;
  for (std::size_t i = 5 * kRow; i < 6 * kRow; ++i) {
    k2[i] = -k[i] * 0.5F;
    v2[i] = v[i] + 1.0F;
  }
  ASSERT_TRUE(cache.write(1, 5, k2.data() + 5 * kRow, v2.data() + 5 * kRow, 1).has_value());
  ASSERT_TRUE(ctx.kernels()
                  .attention(cache, 1, q.data(), positions.data(), positions.size(), kHeads, scale,
                             out.data())
                  .has_value());
  const std::vector<float> expected2 = reference_attention(dtype, k2, v2, 6, q, positions);
  EXPECT_TRUE(outputs_match("after truncate", out.data(), expected2.data(), out.size(), 1e-6));
  expect_no_validation_messages();
}

TEST(VulkanKvCache, F32CacheAttentionMatchesReferenceAcrossTruncate) {
  EREDU_REQUIRE_VULKAN();
  check_cache(DType::kF32);
}

TEST(VulkanKvCache, F16CacheAttentionMatchesReferenceAcrossTruncate) {
  EREDU_REQUIRE_VULKAN();
  check_cache(DType::kF16);
}

TEST(VulkanKvCache, WritesBeyondCapacityOrLengthAndBadTruncateAreErrors) {
  EREDU_REQUIRE_VULKAN();
  auto& ctx = VulkanTestContext::get();
  auto created = KvCache::create(ctx.device(), 1, 4, kHeadsKv, kDim, DType::kF16);
  ASSERT_TRUE(created.has_value());
  KvCache cache = std::move(created).value();
  std::vector<float> rows(8 * kRow, 0.25F);
  auto over = cache.write(0, 0, rows.data(), rows.data(), 5);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code(), ErrorCode::kLimitExceeded);
  auto gap = cache.write(0, 2, rows.data(), rows.data(), 1);  // would leave positions 0-1 unset
  ASSERT_FALSE(gap.has_value());
  EXPECT_EQ(gap.error().code(), ErrorCode::kLimitExceeded);
  auto bad_layer = cache.write(1, 0, rows.data(), rows.data(), 1);
  ASSERT_FALSE(bad_layer.has_value());
  EXPECT_EQ(bad_layer.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(cache.truncate(1).has_value());
  auto bq = KvCache::create(ctx.device(), 1, 4, kHeadsKv, kDim, DType::kQ8_0);
  ASSERT_FALSE(bq.has_value());
  EXPECT_EQ(bq.error().code(), ErrorCode::kUnsupported);
  // Attention at a position past the cache length is refused before any dispatch.
  ASSERT_TRUE(cache.write(0, 0, rows.data(), rows.data(), 2).has_value());
  const std::vector<float> q(kHeads * kDim, 1.0F);
  std::vector<float> out(q.size());
  const std::int32_t pos = 2;
  auto r = ctx.kernels().attention(cache, 0, q.data(), &pos, 1, kHeads, 1.0F, out.data());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  expect_no_validation_messages();
}

}  // namespace

#endif
