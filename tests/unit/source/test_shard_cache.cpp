#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "eredu/checkpoint/memory_source.hpp"
#include "eredu/checkpoint/shard_cache.hpp"
#include "source_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::one_tensor_per_shard;
using testing::shard_name;

MemoryCheckpointSource make_source(std::uint32_t shards, std::size_t limit) {
  auto source = MemoryCheckpointSource::create(one_tensor_per_shard(shards), {limit});
  EXPECT_TRUE(source) << source.error().what();
  return std::move(source).value();
}

// Leases tensor t<i> and drops the lease at once.
void touch(const MemoryCheckpointSource& source, std::uint32_t i) {
  const auto lease = source.acquire_lease({"t" + std::to_string(i)});
  ASSERT_TRUE(lease) << lease.error().what();
}

TEST(ShardCache, ZeroLimitIsInvalid) {
  const auto cache =
      ShardCache::create({"a"}, 0, [](std::size_t) -> Result<std::shared_ptr<const MappedFile>> {
        return MappedFile::from_bytes({}, "a");
      });
  ASSERT_FALSE(cache);
  EXPECT_EQ(cache.error().code(), ErrorCode::kInvalidArgument);
  const auto source = MemoryCheckpointSource::create(one_tensor_per_shard(1), {0});
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code(), ErrorCode::kInvalidArgument);
}

TEST(ShardCache, DefaultLimitIsFourOpenShards) {
  EXPECT_EQ(kDefaultMaxOpenShards, 4U);
  auto source = MemoryCheckpointSource::create(one_tensor_per_shard(6));
  ASSERT_TRUE(source);
  for (std::uint32_t i = 0; i < 6; ++i) {
    touch(*source, i);
    EXPECT_LE(source->diagnostics().cache.open_shards, 4U);
  }
  const ShardCacheStats stats = source->diagnostics().cache;
  EXPECT_EQ(stats.max_open_shards, 4U);
  EXPECT_EQ(stats.open_shards, 4U);
  EXPECT_EQ(stats.misses, 6U);
  EXPECT_EQ(stats.evictions, 2U);
  EXPECT_EQ(source->open_shard_paths(),
            (std::vector<std::string>{shard_name(2), shard_name(3), shard_name(4), shard_name(5)}));
}

TEST(ShardCache, EvictsTheLeastRecentlyUsedShard) {
  const auto source = make_source(3, 2);
  touch(source, 0);
  touch(source, 1);
  touch(source, 0);  // shard 0 is now more recent than shard 1
  EXPECT_EQ(source.diagnostics().cache.hits, 1U);
  touch(source, 2);  // evicts shard 1
  EXPECT_EQ(source.open_shard_paths(), (std::vector<std::string>{shard_name(0), shard_name(2)}));
  const ShardCacheStats before = source.diagnostics().cache;
  touch(source, 0);
  const ShardCacheStats after = source.diagnostics().cache;
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.evictions, 1U);
}

TEST(ShardCache, NeverEvictsAPinnedShard) {
  const auto source = make_source(4, 2);
  const auto held = source.acquire_lease({"t0"});  // oldest, but pinned
  ASSERT_TRUE(held);
  touch(source, 1);
  touch(source, 2);  // must evict shard 1, not the older pinned shard 0
  touch(source, 3);
  EXPECT_EQ(source.open_shard_paths(), (std::vector<std::string>{shard_name(0), shard_name(3)}));
  EXPECT_EQ(source.diagnostics().cache.evictions, 2U);
  EXPECT_EQ(source.diagnostics().cache.pinned_shards, 1U);
}

TEST(ShardCache, CapacityExhaustedListsThePinnedShards) {
  const auto source = make_source(3, 2);
  auto first = source.acquire_lease({"t0"});
  auto second = source.acquire_lease({"t1"});
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  const auto third = source.acquire_lease({"t2"});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code(), ErrorCode::kCapacityExhausted);
  EXPECT_EQ(third.error().path(), shard_name(2));
  EXPECT_NE(third.error().message().find(shard_name(0)), std::string::npos);
  EXPECT_NE(third.error().message().find(shard_name(1)), std::string::npos);
  const ShardCacheStats stats = source.diagnostics().cache;
  EXPECT_EQ(stats.open_shards, 2U);
  EXPECT_EQ(stats.evictions, 0U);
  EXPECT_EQ(stats.shard_opens, 2U);
  EXPECT_EQ(source.diagnostics().physical_reads, 2U);
}

TEST(ShardCache, DroppingALeaseReleasesItsPin) {
  const auto source = make_source(3, 2);
  auto first = source.acquire_lease({"t0"});
  auto second = source.acquire_lease({"t1"});
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  ASSERT_FALSE(source.acquire_lease({"t2"}));
  { const CheckpointLease released = std::move(second).value(); }
  EXPECT_EQ(source.diagnostics().cache.pinned_shards, 1U);
  const auto third = source.acquire_lease({"t2"});
  ASSERT_TRUE(third) << third.error().what();
  EXPECT_EQ(source.open_shard_paths(), (std::vector<std::string>{shard_name(0), shard_name(2)}));
  EXPECT_EQ(source.diagnostics().cache.evictions, 1U);
}

TEST(ShardCache, ShardStaysPinnedUntilItsLastLeaseDies) {
  const auto source = make_source(2, 1);
  auto a = source.acquire_lease({"t0"});
  auto b = source.acquire_lease({"t0", RangeSelection{0, 1, 2}});
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(source.diagnostics().cache.hits, 1U);
  { const CheckpointLease gone = std::move(a).value(); }
  EXPECT_EQ(source.acquire_lease({"t1"}).error().code(), ErrorCode::kCapacityExhausted);
  { const CheckpointLease gone = std::move(b).value(); }
  EXPECT_EQ(source.diagnostics().cache.pinned_shards, 0U);
  EXPECT_TRUE(source.acquire_lease({"t1"}));
}

TEST(ShardCache, FailedOpenConsumesNoSlotAndNamesTheShard) {
  int opens = 0;
  auto cache = ShardCache::create(
      {"good", "bad"}, 1, [&opens](std::size_t index) -> Result<std::shared_ptr<const MappedFile>> {
        ++opens;
        if (index == 1) return fail(ErrorCode::kIo, "cannot open");
        return MappedFile::from_bytes({}, "good");
      });
  ASSERT_TRUE(cache);
  const auto bad = cache->pin(1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kIo);
  EXPECT_EQ(bad.error().path(), "bad");
  EXPECT_EQ(cache->stats().open_shards, 0U);
  const auto good = cache->pin(0);
  ASSERT_TRUE(good);
  EXPECT_EQ(good->shard_index(), 0U);
  EXPECT_EQ(opens, 2);
  EXPECT_EQ(cache->stats().shard_opens, 1U);
  const auto unknown = cache->pin(2);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
}

TEST(ShardCache, ConcurrentLeasesStayWithinTheLimit) {
  const auto source = make_source(6, 4);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&source, &failures, t] {
      for (int i = 0; i < 200; ++i) {
        const auto lease = source.acquire_lease({"t" + std::to_string((t + i) % 6)});
        if (!lease || lease->bytes().size() != 32) ++failures;
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  const SourceDiagnostics diag = source.diagnostics();
  EXPECT_EQ(diag.leases_granted, 600U);
  EXPECT_LE(diag.cache.open_shards, 4U);
  EXPECT_EQ(diag.cache.pinned_shards, 0U);
  EXPECT_EQ(diag.cache.hits + diag.cache.misses, 600U);
}

}  // namespace
}  // namespace eredu::checkpoint
