// Split GGUF sets and reliability.md §(b.1) G43.

#include "eredu/checkpoint/gguf_split.hpp"
#include "gguf_fixtures.hpp"

namespace eredu::checkpoint {
namespace {

using testing::pattern_bytes;

// Writes shard `no` (0-based) of a set of `count` with the given tensors (one F32 [4] each).
void write_shard(const std::filesystem::path& path, std::uint32_t no, std::uint32_t count,
                 const std::vector<std::string>& tensors, std::uint64_t total_tensors) {
  GgufWriter w;
  if (no == 0) w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata("split.no", GgufValue(static_cast<std::uint16_t>(no)));
  w.add_metadata("split.count", GgufValue(static_cast<std::uint16_t>(count)));
  w.add_metadata("split.tensors.count", GgufValue(static_cast<std::int32_t>(total_tensors)));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<std::uint64_t> shape{4};
    ASSERT_TRUE(w.add_tensor(tensors[i], DType::kF32, shape, pattern_bytes(16, no * 10 + i + 1))
                    .has_value());
  }
  ASSERT_TRUE(w.write_file(path).has_value());
}

// Three shards "model-0000k-of-00003.gguf" holding tensors t0..t5, two per shard.
std::filesystem::path write_set(const std::string& name) {
  const std::filesystem::path dir = testing::temp_dir(name);
  for (std::uint32_t no = 0; no < 3; ++no) {
    write_shard(dir / ("model-0000" + std::to_string(no + 1) + "-of-00003.gguf"), no, 3,
                {"t" + std::to_string(2 * no), "t" + std::to_string(2 * no + 1)}, 6);
  }
  return dir;
}

TEST(GgufSplit, FileNamePatternIsParsedAndShardPathsStayInTheDirectory) {
  const auto name = parse_gguf_split_name("/models/x/Qwen-7B-00002-of-00005.gguf");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->prefix, "Qwen-7B");
  EXPECT_EQ(name->number, 2u);
  EXPECT_EQ(name->count, 5u);
  EXPECT_EQ(gguf_split_path(*name, 5),
            std::filesystem::path("/models/x/Qwen-7B-00005-of-00005.gguf"));
  const auto paths = gguf_split_paths("/models/x/Qwen-7B-00002-of-00005.gguf");
  ASSERT_EQ(paths.size(), 5u);
  EXPECT_EQ(paths[0], std::filesystem::path("/models/x/Qwen-7B-00001-of-00005.gguf"));
  for (const char* bad :
       {"model.gguf", "-00001-of-00002.gguf", "m-1-of-2.gguf", "m-00003-of-00002.gguf",
        "m-00000-of-00002.gguf", "m-0000a-of-00002.gguf", "m-00001-of-00002.bin"}) {
    EXPECT_FALSE(parse_gguf_split_name(bad).has_value()) << bad;
  }
  EXPECT_EQ(gguf_split_paths("/a/model.gguf"), std::vector<std::filesystem::path>{"/a/model.gguf"});
}

TEST(GgufSplit, SetOpenedFromTheSecondShardMergesEveryShardsTensors) {
  const std::filesystem::path dir = write_set("open2");
  auto set = GgufShardSet::open(dir / "model-00002-of-00003.gguf");
  ASSERT_TRUE(set.has_value()) << set.error().what();
  ASSERT_EQ(set->shards().size(), 3u);
  EXPECT_EQ(set->shards()[0].path, dir / "model-00001-of-00003.gguf");
  EXPECT_EQ(set->primary().get_string("general.architecture").value(), "llama");
  ASSERT_EQ(set->tensors().size(), 6u);
  for (std::uint32_t i = 0; i < 6; ++i) {
    const GgufShardTensor* t = set->find_tensor("t" + std::to_string(i));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->shard, i / 2);
    const auto bytes = set->tensor_bytes(*t).value();
    const auto expected = pattern_bytes(16, (i / 2) * 10 + i % 2 + 1);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end()));
  }
  std::filesystem::remove_all(dir);
}

TEST(GgufSplit, SetCanBeOpenedWithoutKeepingMappingsAndReattachedLater) {
  const std::filesystem::path dir = write_set("lazy");
  auto set = GgufShardSet::open(dir / "model-00003-of-00003.gguf", {}, {false});
  ASSERT_TRUE(set.has_value()) << set.error().what();
  const GgufShardTensor* t = set->find_tensor("t5");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(set->tensor_bytes(*t).error().code(), ErrorCode::kInvalidArgument);
  const GgufShard& shard = set->shards()[t->shard];
  EXPECT_EQ(shard.mapping, nullptr);
  auto file = GgufFile::attach(shard.contents, MappedFile::open(shard.path).value());
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const auto bytes = file->tensor_bytes("t5").value();
  const auto expected = pattern_bytes(16, 2 * 10 + 1 + 1);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end()));
  // A shard whose size changed since it was parsed is refused.
  std::filesystem::resize_file(shard.path, shard.contents->header().file_size + 1);
  EXPECT_EQ(GgufFile::attach(shard.contents, MappedFile::open(shard.path).value()).error().code(),
            ErrorCode::kIo);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_MissingShardIsAnErrorNamingTheShard) {
  const std::filesystem::path dir = write_set("missing");
  std::filesystem::remove(dir / "model-00003-of-00003.gguf");
  const auto result = GgufShardSet::open(dir / "model-00001-of-00003.gguf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(result.error().path(), (dir / "model-00003-of-00003.gguf").string());
  EXPECT_NE(result.error().message().find("shard 3 of 3"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_ShardClaimingAnotherCountIsAnErrorNamingTheShard) {
  const std::filesystem::path dir = write_set("count");
  const auto shard2 = dir / "model-00002-of-00003.gguf";
  write_shard(shard2, 1, 4, {"t2", "t3"}, 6);
  const auto result = GgufShardSet::open(dir / "model-00001-of-00003.gguf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(result.error().path(), shard2.string());
  EXPECT_EQ(result.error().subject(), "split.count");
  EXPECT_NE(result.error().message().find("split.count 4"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_ShardClaimingAnotherIndexIsAnErrorNamingTheShard) {
  const std::filesystem::path dir = write_set("index");
  const auto shard3 = dir / "model-00003-of-00003.gguf";
  write_shard(shard3, 1, 3, {"t4", "t5"}, 6);  // says it is the second shard
  const auto result = GgufShardSet::open(dir / "model-00002-of-00003.gguf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(result.error().path(), shard3.string());
  EXPECT_EQ(result.error().subject(), "split.no");
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_SameTensorInTwoShardsIsAnErrorNamingBothShards) {
  const std::filesystem::path dir = write_set("dup");
  const auto shard3 = dir / "model-00003-of-00003.gguf";
  write_shard(shard3, 2, 3, {"t4", "t1"}, 6);
  const auto result = GgufShardSet::open(shard3);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(result.error().path(), shard3.string());
  EXPECT_EQ(result.error().subject(), "t1");
  EXPECT_NE(result.error().message().find("model-00001-of-00003.gguf"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_TensorTotalDisagreeingWithSplitTensorsCountIsAnError) {
  const std::filesystem::path dir = write_set("total");
  write_shard(dir / "model-00003-of-00003.gguf", 2, 3, {"t4"}, 6);  // one tensor short
  const auto result = GgufShardSet::open(dir / "model-00001-of-00003.gguf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "split.tensors.count");
  EXPECT_NE(result.error().message().find("hold 5 tensors"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_ShardFromAnotherModelWithoutSplitKeysIsAnError) {
  const std::filesystem::path dir = write_set("foreign");
  const auto shard2 = dir / "model-00002-of-00003.gguf";
  ASSERT_TRUE(testing::valid_writer().write_file(shard2).has_value());
  const auto result = GgufShardSet::open(dir / "model-00001-of-00003.gguf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().path(), shard2.string());
  EXPECT_NE(result.error().message().find("no split.count"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GgufBadInput, G43_SplitFileWhoseNameHidesTheOtherShardsIsAnError) {
  const std::filesystem::path dir = testing::temp_dir("renamed");
  write_shard(dir / "renamed.gguf", 0, 3, {"t0"}, 6);
  const auto result = GgufShardSet::open(dir / "renamed.gguf");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel);
  EXPECT_NE(result.error().message().find("declares split.count 3"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(GgufSplit, OrdinaryFileIsASetOfOne) {
  const std::filesystem::path dir = testing::temp_dir("single");
  ASSERT_TRUE(testing::valid_writer().write_file(dir / "model.gguf").has_value());
  auto set = GgufShardSet::open(dir / "model.gguf");
  ASSERT_TRUE(set.has_value()) << set.error().what();
  EXPECT_EQ(set->shards().size(), 1u);
  EXPECT_EQ(set->tensors().size(), 3u);
  EXPECT_EQ(set->find_tensor("b.weight")->info->dtype, DType::kQ8_0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eredu::checkpoint
