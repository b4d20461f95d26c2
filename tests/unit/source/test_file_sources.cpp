// GGUF- and SafeTensors-backed sources, on files the tests write with the project's writers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/open_checkpoint.hpp"
#include "eredu/checkpoint/safetensors_writer.hpp"
#include "shared_data.hpp"
#include "source_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::pattern;
using Shape = std::vector<std::uint64_t>;

std::vector<std::byte> to_vector(std::span<const std::byte> bytes) {
  return {bytes.begin(), bytes.end()};
}

// A fresh directory per test, removed afterwards.
class FileSources : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("eredu-source-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// "a" F32 [2, 3] (24 bytes) and "q" Q8_0 [2, 64] (2 rows of 2 blocks of 34 bytes = 136 bytes).
void write_gguf(const fs::path& path) {
  GgufWriter writer;
  writer.add_metadata("general.architecture", GgufValue("llama"));
  const Shape a{2, 3}, q{2, 64};
  ASSERT_TRUE(writer.add_tensor("a", DType::kF32, a, pattern(1, 24)));
  ASSERT_TRUE(writer.add_tensor("q", DType::kQ8_0, q, pattern(2, 136)));
  ASSERT_TRUE(writer.write_file(path));
}

// Shards `<dir>/m-0000i-of-00003.gguf`, each holding one F32 [2, 2] tensor "t<i>".
std::vector<fs::path> write_gguf_split(const fs::path& dir) {
  std::vector<fs::path> paths;
  for (std::uint16_t i = 0; i < 3; ++i) {
    GgufWriter writer;
    writer.add_metadata("split.no", GgufValue(i));
    writer.add_metadata("split.count", GgufValue(std::uint16_t{3}));
    if (i == 0) writer.add_metadata("split.tensors.count", GgufValue(std::int32_t{3}));
    const Shape shape{2, 2};
    EXPECT_TRUE(
        writer.add_tensor("t" + std::to_string(i), DType::kF32, shape, pattern(10 + i, 16)));
    paths.push_back(dir / ("m-0000" + std::to_string(i + 1) + "-of-00003.gguf"));
    EXPECT_TRUE(writer.write_file(paths.back()));
  }
  return paths;
}

SafetensorsWriter safetensors_writer(std::uint32_t seed, const std::string& prefix) {
  SafetensorsWriter writer;
  EXPECT_TRUE(writer.add(prefix + "w", DType::kF16, {3, 4}, pattern(seed, 24)));
  EXPECT_TRUE(writer.add(prefix + "b", DType::kF32, {4}, pattern(seed + 1, 16)));
  return writer;
}

TEST_F(FileSources, GgufCatalogComesFromHeadersWithoutOpeningAShard) {
  write_gguf(dir_ / "m.gguf");
  auto source = GgufCheckpointSource::open(dir_ / "m.gguf");
  ASSERT_TRUE(source) << source.error().what();
  EXPECT_EQ(source->container(), "gguf");
  EXPECT_EQ(source->keys(), (std::vector<std::string>{"a", "q"}));
  const TensorMetadata* q = source->metadata("q").value();
  EXPECT_EQ(q->shape, (Shape{2, 64}));
  EXPECT_EQ(q->dtype, DType::kQ8_0);
  EXPECT_EQ(q->byte_length, 136U);
  EXPECT_EQ(q->shard_path, (dir_ / "m.gguf").string());
  const SourceDiagnostics diag = source->diagnostics();
  EXPECT_EQ(diag.cache.shard_opens, 0U);
  EXPECT_EQ(diag.physical_reads, 0U);
  EXPECT_EQ(source->primary().get_string("general.architecture").value(), "llama");
}

TEST_F(FileSources, GgufLeasesHoldExactlyTheWrittenBytes) {
  write_gguf(dir_ / "m.gguf");
  auto source = GgufCheckpointSource::open(dir_ / "m.gguf");
  ASSERT_TRUE(source) << source.error().what();
  const auto a = source->acquire_lease({"a"});
  ASSERT_TRUE(a) << a.error().what();
  EXPECT_EQ(to_vector(a->bytes()), pattern(1, 24));
  const auto row = source->acquire_lease({"q", RangeSelection{0, 1, 2}});
  ASSERT_TRUE(row) << row.error().what();
  const std::vector<std::byte> q = pattern(2, 136);
  EXPECT_EQ(to_vector(row->bytes()), std::vector<std::byte>(q.begin() + 68, q.end()));
  EXPECT_EQ(row->proof(), (BoundedReadProof{true, 68, 68}));
  const SourceDiagnostics diag = source->diagnostics();
  EXPECT_EQ(diag.bytes_read, 24U + 68U);
  EXPECT_EQ(diag.cache.shard_opens, 1U);
}

TEST_F(FileSources, GgufSplitSetOpensShardsLazilyWithinTheLimit) {
  const std::vector<fs::path> paths = write_gguf_split(dir_);
  auto source = GgufCheckpointSource::open(paths[1], {GgufLimits{}, 2});
  ASSERT_TRUE(source) << source.error().what();
  EXPECT_EQ(source->keys(), (std::vector<std::string>{"t0", "t1", "t2"}));
  EXPECT_EQ(source->diagnostics().cache.shard_opens, 0U);
  auto t0 = source->acquire_lease({"t0"});
  auto t1 = source->acquire_lease({"t1"});
  ASSERT_TRUE(t0) << t0.error().what();
  ASSERT_TRUE(t1) << t1.error().what();
  EXPECT_EQ(to_vector(t1->bytes()), pattern(11, 16));
  const auto t2 = source->acquire_lease({"t2"});
  ASSERT_FALSE(t2);
  EXPECT_EQ(t2.error().code(), ErrorCode::kCapacityExhausted);
  EXPECT_NE(t2.error().message().find(paths[0].string()), std::string::npos);
  EXPECT_NE(t2.error().message().find(paths[1].string()), std::string::npos);
  { const CheckpointLease released = std::move(t0).value(); }
  const auto again = source->acquire_lease({"t2"});
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_EQ(to_vector(again->bytes()), pattern(12, 16));
  EXPECT_EQ(source->open_shard_paths(),
            (std::vector<std::string>{paths[1].string(), paths[2].string()}));
  EXPECT_EQ(source->diagnostics().touched_shards,
            (std::vector<std::string>{paths[0].string(), paths[1].string(), paths[2].string()}));
}

TEST_F(FileSources, GgufShardChangedAfterOpenIsRefusedAtLeaseTime) {
  write_gguf(dir_ / "m.gguf");
  auto source = GgufCheckpointSource::open(dir_ / "m.gguf");
  ASSERT_TRUE(source);
  std::ofstream(dir_ / "m.gguf", std::ios::binary | std::ios::app) << "extra";
  const auto lease = source->acquire_lease({"a"});
  ASSERT_FALSE(lease);
  EXPECT_EQ(lease.error().path(), (dir_ / "m.gguf").string());
  EXPECT_EQ(source->diagnostics().cache.open_shards, 0U);
}

TEST_F(FileSources, SafetensorsFileLeasesHoldExactlyTheWrittenBytes) {
  ASSERT_TRUE(safetensors_writer(3, "").write_file(dir_ / "x.safetensors"));
  auto source = SafetensorsCheckpointSource::open(dir_ / "x.safetensors");
  ASSERT_TRUE(source) << source.error().what();
  EXPECT_EQ(source->container(), "safetensors");
  EXPECT_EQ(source->diagnostics().cache.shard_opens, 0U);
  const TensorMetadata* w = source->metadata("w").value();
  EXPECT_EQ(w->shape, (Shape{3, 4}));
  EXPECT_EQ(w->dtype, DType::kF16);
  const auto lease = source->acquire_lease({"w", RangeSelection{0, 1, 3}});
  ASSERT_TRUE(lease) << lease.error().what();
  const std::vector<std::byte> all = pattern(3, 24);
  EXPECT_EQ(to_vector(lease->bytes()), std::vector<std::byte>(all.begin() + 8, all.end()));
  const auto b = source->acquire_lease({"b"});
  ASSERT_TRUE(b);
  EXPECT_EQ(to_vector(b->bytes()), pattern(4, 16));
}

TEST_F(FileSources, SafetensorsShardedDirectoryThroughOpenCheckpoint) {
  std::vector<SafetensorsShardSpec> shards;
  shards.push_back({"model-00001-of-00002.safetensors", safetensors_writer(5, "l0.")});
  shards.push_back({"model-00002-of-00002.safetensors", safetensors_writer(7, "l1.")});
  ASSERT_TRUE(write_sharded_safetensors(dir_, shards));
  auto source = open_checkpoint(dir_);
  ASSERT_TRUE(source) << source.error().what();
  EXPECT_EQ((*source)->container(), "safetensors");
  EXPECT_EQ((*source)->catalog().size(), 4U);
  EXPECT_EQ((*source)->diagnostics().cache.shard_opens, 0U);
  const auto lease = (*source)->acquire_lease({"l1.w"});
  ASSERT_TRUE(lease) << lease.error().what();
  EXPECT_EQ(to_vector(lease->bytes()), pattern(7, 24));
  EXPECT_EQ((*source)->diagnostics().touched_shards,
            (std::vector<std::string>{(dir_ / "model-00002-of-00002.safetensors").string()}));
}

TEST_F(FileSources, OpenCheckpointDetectsEachContainer) {
  write_gguf(dir_ / "m.gguf");
  fs::copy_file(dir_ / "m.gguf", dir_ / "m.bin");
  ASSERT_TRUE(safetensors_writer(3, "").write_file(dir_ / "x.safetensors"));
  fs::create_directories(dir_ / "single");
  ASSERT_TRUE(safetensors_writer(3, "").write_file(dir_ / "single" / "model.safetensors"));
  std::ofstream(dir_ / "notes.txt") << "hello";
  fs::create_directories(dir_ / "empty");

  EXPECT_EQ(detect_checkpoint_container(dir_ / "m.gguf").value(), CheckpointContainer::kGguf);
  EXPECT_EQ(detect_checkpoint_container(dir_ / "m.bin").value(), CheckpointContainer::kGguf);
  EXPECT_EQ(detect_checkpoint_container(dir_ / "x.safetensors").value(),
            CheckpointContainer::kSafetensors);
  EXPECT_EQ(detect_checkpoint_container(dir_ / "single").value(),
            CheckpointContainer::kSafetensors);
  EXPECT_EQ(detect_checkpoint_container(dir_ / "notes.txt").error().code(),
            ErrorCode::kUnsupported);
  EXPECT_EQ(detect_checkpoint_container(dir_ / "empty").error().code(), ErrorCode::kNotFound);
  const auto missing = detect_checkpoint_container(dir_ / "missing.gguf");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().path(), (dir_ / "missing.gguf").string());

  for (const char* name : {"m.gguf", "m.bin", "x.safetensors", "single"}) {
    auto source = open_checkpoint(dir_ / name);
    ASSERT_TRUE(source) << name << ": " << source.error().what();
    EXPECT_FALSE((*source)->catalog().empty()) << name;
  }
}

TEST_F(FileSources, OpenCheckpointPassesTheShardLimit) {
  write_gguf(dir_ / "m.gguf");
  const auto zero = open_checkpoint(dir_ / "m.gguf", {GgufLimits{}, SafetensorsModelOptions{}, 0});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code(), ErrorCode::kInvalidArgument);
  const auto one = open_checkpoint(dir_ / "m.gguf", {GgufLimits{}, SafetensorsModelOptions{}, 1});
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)->diagnostics().cache.max_open_shards, 1U);
}

}  // namespace
}  // namespace eredu::checkpoint

namespace eredu::checkpoint {
namespace {

// Every shared model, through open_checkpoint: each lease equals the bytes the GGUF reader reports
// for that tensor, and the source reads exactly the sum of the tensors' bytes.
TEST(SharedModels, EveryLeaseMatchesTheReadersTensorBytes) {
  const std::filesystem::path models = eredu::testing::models_dir();
  // The macro's parameter is spelled `path`, so its argument must be that very token.
  const std::filesystem::path path = models / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  int files = 0;
  for (const auto& item : std::filesystem::directory_iterator(models)) {
    if (item.path().extension() != ".gguf") continue;
    ++files;
    auto reference = GgufFile::open(item.path());
    ASSERT_TRUE(reference) << reference.error().what();
    auto source = open_checkpoint(item.path());
    ASSERT_TRUE(source) << source.error().what();
    ASSERT_EQ((*source)->catalog().size(), reference->tensors().size()) << item.path();
    std::uint64_t total = 0;
    for (const GgufTensorInfo& info : reference->tensors()) {
      const auto lease = (*source)->acquire_lease({info.name});
      ASSERT_TRUE(lease) << lease.error().what();
      const auto expected = reference->tensor_bytes(info);
      ASSERT_TRUE(expected);
      EXPECT_TRUE(std::equal(lease->bytes().begin(), lease->bytes().end(), expected->begin(),
                             expected->end()))
          << item.path() << " " << info.name;
      EXPECT_EQ(lease->metadata().shape, info.shape);
      total += info.byte_size;
    }
    EXPECT_EQ((*source)->diagnostics().bytes_read, total) << item.path();
    EXPECT_EQ((*source)->diagnostics().cache.shard_opens, 1U) << item.path();
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace eredu::checkpoint
