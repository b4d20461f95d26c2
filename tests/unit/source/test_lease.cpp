#include <gtest/gtest.h>

#include <memory>
#include <type_traits>

#include "eredu/checkpoint/counting_source.hpp"
#include "eredu/checkpoint/memory_source.hpp"
#include "eredu/checkpoint/recipe.hpp"
#include "source_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::f32_tensor;
using testing::pattern;

static_assert(!std::is_copy_constructible_v<CheckpointLease>);
static_assert(!std::is_copy_assignable_v<CheckpointLease>);
static_assert(std::is_nothrow_move_constructible_v<CheckpointLease>);
static_assert(std::is_abstract_v<CheckpointSource>);

// Shard 0 holds a ([3, 4] F32, 48 bytes) then b ([2, 3] F32, 24 bytes); shard 1 holds c and
// q ([2, 64] Q8_0: 2 rows of 2 blocks of 34 bytes = 136 bytes).
std::shared_ptr<MemoryCheckpointSource> make_source() {
  std::vector<MemoryTensor> tensors{f32_tensor("a", {3, 4}, 1, 0), f32_tensor("b", {2, 3}, 2, 0),
                                    f32_tensor("c", {4}, 3, 1),
                                    MemoryTensor{"q", {2, 64}, DType::kQ8_0, pattern(4, 136), 1},
                                    f32_tensor("empty", {0, 4}, 5, 1)};
  auto source = MemoryCheckpointSource::create(std::move(tensors));
  EXPECT_TRUE(source) << source.error().what();
  return std::make_shared<MemoryCheckpointSource>(std::move(source).value());
}

std::vector<std::byte> to_vector(std::span<const std::byte> bytes) {
  return {bytes.begin(), bytes.end()};
}

TEST(CheckpointSource, MetadataQueriesAndRecipeInferenceReadNoPayload) {
  auto inner = make_source();
  CountingCheckpointSource source(inner);
  EXPECT_EQ(source.keys(), (std::vector<std::string>{"a", "b", "c", "q", "empty"}));
  for (const std::string& key : source.keys()) {
    const auto meta = source.metadata(key);
    ASSERT_TRUE(meta);
    EXPECT_EQ((*meta)->name, key);
  }
  EXPECT_EQ(source.metadata("missing").error().code(), ErrorCode::kNotFound);
  const auto recipe = DerivedWeightRecipe::concatenate(
      0, {DerivedWeightRecipe::source("a"),
          DerivedWeightRecipe::reshape(DerivedWeightRecipe::source("b"), {3, 2})});
  EXPECT_FALSE(recipe.infer(source.catalog()));  // [3,4] and [3,2] differ outside axis 0
  EXPECT_TRUE(DerivedWeightRecipe::source("q").infer(source.catalog()));

  const CallCounts counts = source.counts();
  EXPECT_EQ(counts.keys_calls, 2U);
  EXPECT_EQ(counts.metadata_calls, 6U);
  EXPECT_EQ(counts.catalog_calls, 2U);
  EXPECT_EQ(counts.lease_requests, 0U);
  EXPECT_EQ(counts.payload_reads, 0U);
  EXPECT_EQ(counts.payload_bytes, 0U);
  const SourceDiagnostics diag = source.diagnostics();
  EXPECT_EQ(diag.physical_reads, 0U);
  EXPECT_EQ(diag.bytes_read, 0U);
  EXPECT_TRUE(diag.touched_shards.empty());
  EXPECT_EQ(diag.cache.misses, 0U);
  EXPECT_EQ(diag.cache.shard_opens, 0U);
  EXPECT_EQ(diag.cache.open_shards, 0U);
}

TEST(CheckpointLease, FullLeaseIsExactlyItsTensorsBytes) {
  auto inner = make_source();
  CountingCheckpointSource source(inner);
  const auto lease = source.acquire_lease({"b"});
  ASSERT_TRUE(lease) << lease.error().what();
  EXPECT_EQ(to_vector(lease->bytes()), pattern(2, 24));
  // The span lies exactly on b's bytes in its shard: right after a's 48 bytes.
  const std::span<const std::byte> shard = inner->shard_bytes(0);
  EXPECT_EQ(lease->bytes().data(), shard.data() + 48);
  EXPECT_EQ(lease->bytes().size(), 24U);
  EXPECT_EQ(lease->proof(), (BoundedReadProof{true, 0, 24}));
  EXPECT_EQ(lease->metadata().name, "b");
  EXPECT_EQ(lease->backing_path(), "memory:shard-0");
  EXPECT_TRUE(std::holds_alternative<FullSelection>(lease->selection()));
  EXPECT_EQ(std::vector<std::uint64_t>(lease->output_shape().begin(), lease->output_shape().end()),
            (std::vector<std::uint64_t>{2, 3}));

  const CallCounts counts = source.counts();
  EXPECT_EQ(counts.payload_reads, 1U);
  EXPECT_EQ(counts.payload_bytes, 24U);
  ASSERT_EQ(source.leases().size(), 1U);
  EXPECT_EQ(source.leases()[0].key, "b");
  EXPECT_EQ(source.diagnostics().touched_shards, (std::vector<std::string>{"memory:shard-0"}));
}

TEST(CheckpointLease, OutermostRangeReadsOnlyTheSelectedRows) {
  auto source = make_source();
  const auto lease = source->acquire_lease({"a", RangeSelection{0, 1, 3}});
  ASSERT_TRUE(lease) << lease.error().what();
  // Rows 1..3 of a [3, 4] F32 tensor are its bytes 16..48.
  const std::vector<std::byte> all = pattern(1, 48);
  EXPECT_EQ(to_vector(lease->bytes()), std::vector<std::byte>(all.begin() + 16, all.end()));
  EXPECT_EQ(lease->bytes().data(), source->shard_bytes(0).data() + 16);
  EXPECT_EQ(lease->proof(), (BoundedReadProof{true, 16, 32}));
  EXPECT_EQ(source->diagnostics().bytes_read, 32U);
}

TEST(CheckpointLease, PackedRangeReadsWholeBlocks) {
  auto source = make_source();
  // Row 1 of q: bytes 68..136 of q, which starts at byte 16 of shard 1 (after c).
  const auto lease = source->acquire_lease({"q", RangeSelection{0, 1, 2}});
  ASSERT_TRUE(lease) << lease.error().what();
  const std::vector<std::byte> all = pattern(4, 136);
  EXPECT_EQ(to_vector(lease->bytes()), std::vector<std::byte>(all.begin() + 68, all.end()));
  EXPECT_EQ(lease->bytes().data(), source->shard_bytes(1).data() + 16 + 68);
  // The second block of every row is not one byte span.
  const auto columns = source->acquire_lease({"q", RangeSelection{1, 32, 64}});
  ASSERT_FALSE(columns);
  EXPECT_EQ(columns.error().code(), ErrorCode::kUnsupported);
  const auto misaligned =
      source->acquire_lease({"q", RangeSelection{1, 0, 16}, ReadPolicy::kAllowFullTensorRead});
  ASSERT_FALSE(misaligned);
  EXPECT_EQ(misaligned.error().code(), ErrorCode::kInvalidArgument);
}

TEST(CheckpointLease, RequireBoundedRefusesAScatteredSelectionBeforeAnyRead) {
  auto source = make_source();
  const auto lease = source->acquire_lease({"a", RangeSelection{1, 1, 3}});
  ASSERT_FALSE(lease);
  EXPECT_EQ(lease.error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(lease.error().subject(), "a");
  EXPECT_NE(lease.error().message().find("bounded selection unavailable"), std::string::npos);
  const SourceDiagnostics diag = source->diagnostics();
  EXPECT_EQ(diag.physical_reads, 0U);
  EXPECT_EQ(diag.cache.shard_opens, 0U);
}

TEST(CheckpointLease, AllowFullTensorReadGathersAScatteredSelection) {
  auto source = make_source();
  const auto lease =
      source->acquire_lease({"a", RangeSelection{1, 1, 3}, ReadPolicy::kAllowFullTensorRead});
  ASSERT_TRUE(lease) << lease.error().what();
  // Columns 1..3 of each of the 3 rows of 4 floats: byte ranges [4,12), [20,28), [36,44).
  const std::vector<std::byte> all = pattern(1, 48);
  std::vector<std::byte> expected;
  for (std::size_t row = 0; row < 3; ++row) {
    expected.insert(expected.end(), all.begin() + static_cast<std::ptrdiff_t>(row * 16 + 4),
                    all.begin() + static_cast<std::ptrdiff_t>(row * 16 + 12));
  }
  EXPECT_EQ(to_vector(lease->bytes()), expected);
  EXPECT_EQ(lease->proof(), (BoundedReadProof{false, 4, 40}));
  EXPECT_EQ(source->diagnostics().bytes_read, 40U);
}

TEST(CheckpointLease, ContiguousRunIsBoundedToItsElements) {
  auto source = make_source();
  const auto lease = source->acquire_lease({"a", ContiguousSelection{2, {2, 3}}});
  ASSERT_TRUE(lease) << lease.error().what();
  const std::vector<std::byte> all = pattern(1, 48);
  EXPECT_EQ(to_vector(lease->bytes()), std::vector<std::byte>(all.begin() + 8, all.begin() + 32));
  EXPECT_EQ(lease->proof(), (BoundedReadProof{true, 8, 24}));
}

TEST(CheckpointLease, BadRequestsFailBeforeAnyShardIsOpened) {
  auto source = make_source();
  const auto unknown = source->acquire_lease({"nope"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(unknown.error().subject(), "nope");
  const auto out_of_range = source->acquire_lease({"a", RangeSelection{0, 2, 4}});
  ASSERT_FALSE(out_of_range);
  EXPECT_EQ(out_of_range.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(out_of_range.error().subject(), "a");
  EXPECT_EQ(source->diagnostics().cache.shard_opens, 0U);
  EXPECT_EQ(source->diagnostics().physical_reads, 0U);
}

TEST(CheckpointLease, ZeroSizedTensorGivesAnEmptyLease) {
  auto source = make_source();
  const auto lease = source->acquire_lease({"empty"});
  ASSERT_TRUE(lease) << lease.error().what();
  EXPECT_TRUE(lease->bytes().empty());
  EXPECT_EQ(lease->proof(), (BoundedReadProof{true, 0, 0}));
}

TEST(CheckpointLease, MovingKeepsTheBytesAndTheSinglePin) {
  auto source = make_source();
  auto first = source->acquire_lease({"c"});
  ASSERT_TRUE(first);
  CheckpointLease lease = std::move(first).value();
  CheckpointLease moved = std::move(lease);
  EXPECT_FALSE(
      lease.holds_pin());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_TRUE(moved.holds_pin());
  EXPECT_EQ(to_vector(moved.bytes()), pattern(3, 16));
  EXPECT_EQ(source->diagnostics().cache.pinned_shards, 1U);
}

TEST(CheckpointLease, GatheredLeaseOwnsItsBytesAcrossMoves) {
  auto source = make_source();
  auto first =
      source->acquire_lease({"a", RangeSelection{1, 0, 1}, ReadPolicy::kAllowFullTensorRead});
  ASSERT_TRUE(first);
  CheckpointLease moved = std::move(first).value();
  const std::vector<std::byte> all = pattern(1, 48);
  std::vector<std::byte> expected;
  for (std::size_t row = 0; row < 3; ++row) {
    expected.insert(expected.end(), all.begin() + static_cast<std::ptrdiff_t>(row * 16),
                    all.begin() + static_cast<std::ptrdiff_t>(row * 16 + 4));
  }
  EXPECT_EQ(to_vector(moved.bytes()), expected);
}

TEST(CheckpointLease, OutlivesItsSource) {
  auto source = make_source();
  auto lease = source->acquire_lease({"b"});
  ASSERT_TRUE(lease);
  source.reset();
  EXPECT_EQ(to_vector(lease->bytes()), pattern(2, 24));
  EXPECT_TRUE(lease->holds_pin());
}

TEST(MemoryCheckpointSource, RejectsBytesThatDoNotMatchTheShape) {
  std::vector<MemoryTensor> tensors{f32_tensor("a", {2, 2}, 1)};
  tensors[0].bytes.pop_back();
  const auto source = MemoryCheckpointSource::create(std::move(tensors));
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(source.error().subject(), "a");
}

TEST(MemoryCheckpointSource, RejectsAGapInShardIndices) {
  const auto source = MemoryCheckpointSource::create({f32_tensor("a", {2}, 1, 1)});
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code(), ErrorCode::kInvalidArgument);
}

TEST(MemoryCheckpointSource, RejectsDuplicateNames) {
  const auto source =
      MemoryCheckpointSource::create({f32_tensor("a", {2}, 1), f32_tensor("a", {2}, 2)});
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error().code(), ErrorCode::kDuplicate);
}

TEST(MemoryCheckpointSource, ReportsLocationsBackToBackInShardOrder) {
  auto source = make_source();
  EXPECT_EQ(source->container(), "memory");
  const auto q = source->location("q");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->shard_index, 1U);
  EXPECT_EQ(q->offset_bytes, 16U);
  EXPECT_EQ(source->shard_bytes(1).size(), 16U + 136U);
  EXPECT_EQ(source->shard_paths(), (std::vector<std::string>{"memory:shard-0", "memory:shard-1"}));
}

}  // namespace
}  // namespace eredu::checkpoint
