// The device-local KV cache: staged writes, the attention operator storing rows through its
// shader and reading the cache in place, checkpoint and truncate, bounds; compared with the scalar
// CPU reference attention over the same rows.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/backends/vulkan/vulkan_backend.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"
#include "vulkan_test_context.hpp"

namespace {

using eredu::DType;
using eredu::ErrorCode;
using eredu::testing::expect_no_validation_messages;
using eredu::testing::upload_tensor;
using eredu::testing::VulkanTestContext;
using eredu::testing::op_parity::outputs_match;
using eredu::testing::op_parity::random_floats;
using eredu::vulkan::KvCache;
using eredu::vulkan::VulkanBackend;
using eredu::vulkan::VulkanTensor;

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

// VulkanBackend's attention of `q` (n tokens at positions first..first+n-1) over `layer` of
// `cache`, which first stores rows [first, first+n) of the host matrices k and v there.
eredu::Result<std::vector<float>> operator_attention(const VulkanBackend& backend,
                                                     const std::shared_ptr<KvCache>& cache,
                                                     std::size_t layer, const std::vector<float>& q,
                                                     const std::vector<float>& k,
                                                     const std::vector<float>& v, std::size_t first,
                                                     std::size_t n) {
  eredu::vulkan::Device& dev = backend.device();
  EREDU_TRY(VulkanTensor qt, upload_tensor(dev, q, n, kHeads * kDim));
  EREDU_TRY(VulkanTensor kt,
            upload_tensor(dev, std::span<const float>(k).subspan(first * kRow, n * kRow), n, kRow));
  EREDU_TRY(VulkanTensor vt,
            upload_tensor(dev, std::span<const float>(v).subspan(first * kRow, n * kRow), n, kRow));
  eredu::vulkan::VulkanKvCache handle{
      eredu::KvCacheSpec{static_cast<std::uint32_t>(cache->n_layers()), kHeadsKv, kDim,
                         static_cast<std::uint32_t>(cache->capacity())},
      cache};
  const eredu::AttentionSpec spec{static_cast<std::uint32_t>(layer), kHeads, kHeadsKv, kDim,
                                  1.0F / std::sqrt(static_cast<float>(kDim))};
  EREDU_TRY(VulkanTensor out,
            backend.attention(qt, kt, vt, handle, spec, static_cast<std::uint32_t>(first)));
  return backend.read(out);
}

void check_cache(DType dtype) {
  auto& ctx = VulkanTestContext::get();
  auto backend = VulkanBackend::on_device(ctx.device());
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  auto created = KvCache::create(ctx.device(), 2, 16, kHeadsKv, kDim, dtype);
  ASSERT_TRUE(created.has_value()) << created.error().what();
  auto cache = std::make_shared<KvCache>(std::move(created).value());
  std::mt19937 rng(9 + static_cast<unsigned>(dtype));
  std::vector<float> k = random_floats(rng, 16 * kRow);
  std::vector<float> v = random_floats(rng, 16 * kRow);
  // Prefill 4 positions of layer 1 through staged writes, then two more through the operator.
  ASSERT_TRUE(cache->write(1, 0, k.data(), v.data(), 3).has_value());
  ASSERT_TRUE(cache->write(1, 3, k.data() + 3 * kRow, v.data() + 3 * kRow, 1).has_value());
  EXPECT_EQ(cache->length(), 4U);
  const std::vector<float> q = random_floats(rng, 2 * kHeads * kDim);
  auto out = operator_attention(*backend, cache, 1, q, k, v, 4, 2);
  ASSERT_TRUE(out.has_value()) << out.error().what();
  EXPECT_EQ(cache->length(), 6U);
  const std::vector<float> expected = reference_attention(dtype, k, v, 6, q, {4, 5});
  EXPECT_TRUE(outputs_match("kv cache attention", out->data(), expected.data(), out->size(), 1e-6));

  // Roll back to a checkpoint and overwrite position 5: attention sees only the new row.
  const std::size_t mark = 5;
  ASSERT_TRUE(cache->truncate(mark).has_value());
  EXPECT_EQ(cache->length(), 5U);
  std::vector<float> k2 = k;
  std::vector<float> v2 = v;
  for (std::size_t i = 5 * kRow; i < 6 * kRow; ++i) {
    k2[i] = -k[i] * 0.5F;
    v2[i] = v[i] + 1.0F;
  }
  const std::vector<float> q1(q.begin() + kHeads * kDim, q.end());
  auto again = operator_attention(*backend, cache, 1, q1, k2, v2, 5, 1);
  ASSERT_TRUE(again.has_value()) << again.error().what();
  const std::vector<float> expected2 = reference_attention(dtype, k2, v2, 6, q1, {5});
  EXPECT_TRUE(
      outputs_match("after truncate", again->data(), expected2.data(), again->size(), 1e-6));
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
  // Attention at a position past the cache length (position 2 would stay unset) is refused
  // before any dispatch.
  ASSERT_TRUE(cache.write(0, 0, rows.data(), rows.data(), 2).has_value());
  auto backend = VulkanBackend::on_device(ctx.device());
  ASSERT_TRUE(backend.has_value()) << backend.error().what();
  const auto shared = std::make_shared<KvCache>(std::move(cache));
  const std::vector<float> q(kHeads * kDim, 1.0F);
  auto r = operator_attention(*backend, shared, 0, q, rows, rows, 3, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(shared->length(), 2U);
  backend->abandon();
  expect_no_validation_messages();
}

}  // namespace

#endif
