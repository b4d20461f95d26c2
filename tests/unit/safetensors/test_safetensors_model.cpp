// Model directories: a single model.safetensors or index.json shards (reliability.md S26).

#include <fstream>

#include "eredu/checkpoint/safetensors_model.hpp"
#include "safetensors_test_util.hpp"

namespace eredu::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::bytes_of;
using testing::FailsWith;
using testing::TempDir;
using testing::write_text;

SafetensorsWriter shard_writer(std::initializer_list<std::pair<const char*, float>> tensors) {
  SafetensorsWriter writer;
  for (const auto& [name, value] : tensors) {
    EXPECT_TRUE(writer.add(name, DType::kF32, {1}, bytes_of<float>({value})));
  }
  return writer;
}

// Two shards: s1 holds "a" (1.0) and "b" (2.0), s2 holds "c" (3.0).
void write_two_shard_model(const fs::path& dir) {
  const std::vector<SafetensorsShardSpec> shards = {
      {"model-00001-of-00002.safetensors", shard_writer({{"a", 1.0F}, {"b", 2.0F}})},
      {"model-00002-of-00002.safetensors", shard_writer({{"c", 3.0F}})},
  };
  ASSERT_TRUE(write_sharded_safetensors(dir, shards).has_value());
}

void write_shard(const fs::path& path, std::initializer_list<std::pair<const char*, float>> t) {
  ASSERT_TRUE(shard_writer(t).write_file(path).has_value()) << path;
}

// An index with the given weight map, written verbatim.
void write_index(const fs::path& dir, const std::map<std::string, std::string>& weight_map) {
  const auto text = safetensors_index_json(weight_map);
  ASSERT_TRUE(text.has_value());
  write_text(dir / "model.safetensors.index.json", *text);
}

TEST(SafetensorsModel, ShardedDirectoryMergesTensorsAndRecordsTheirShards) {
  TempDir dir;
  write_two_shard_model(dir.path());
  const auto model = SafetensorsModelFiles::open(dir.path());
  ASSERT_TRUE(model.has_value()) << model.error().what();
  ASSERT_TRUE(model->index().has_value());
  EXPECT_EQ(model->index()->total_size, 12U);
  ASSERT_EQ(model->shards().size(), 2U);
  EXPECT_EQ(model->shards()[0].file_name, "model-00001-of-00002.safetensors");
  EXPECT_EQ(model->shards()[1].file_name, "model-00002-of-00002.safetensors");
  ASSERT_EQ(model->tensors().size(), 3U);
  EXPECT_EQ(model->find("a")->shard, 0U);
  EXPECT_EQ(model->find("b")->shard, 0U);
  EXPECT_EQ(model->find("c")->shard, 1U);
  EXPECT_EQ(model->find("d"), nullptr);
  EXPECT_EQ(model->total_tensor_bytes(), 12U);

  // Shards are mapped only on request, and serve exactly the tensor's bytes.
  const auto shard = model->open_shard(model->find("c")->shard);
  ASSERT_TRUE(shard.has_value()) << shard.error().what();
  const auto c = shard->tensor_bytes("c");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(std::vector<std::byte>(c->begin(), c->end()), bytes_of<float>({3.0F}));
  const auto in_memory = model->open_shard(0, SafetensorsOpenMode::kReadIntoMemory);
  ASSERT_TRUE(in_memory.has_value()) << in_memory.error().what();
  const auto b = in_memory->tensor_bytes("b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(std::vector<std::byte>(b->begin(), b->end()), bytes_of<float>({2.0F}));
  EXPECT_TRUE(FailsWith(model->open_shard(2), ErrorCode::kInvalidArgument));

  // Opening through the index file's path gives the same model.
  const auto via_index = SafetensorsModelFiles::open(dir.path() / "model.safetensors.index.json");
  ASSERT_TRUE(via_index.has_value()) << via_index.error().what();
  EXPECT_EQ(via_index->tensors().size(), 3U);
}

TEST(SafetensorsModel, SingleFileDirectoryAndFilePathBothOpen) {
  TempDir dir;
  write_shard(dir.path() / "model.safetensors", {{"x", 5.0F}});
  const auto model = SafetensorsModelFiles::open(dir.path());
  ASSERT_TRUE(model.has_value()) << model.error().what();
  EXPECT_FALSE(model->index().has_value());
  ASSERT_EQ(model->shards().size(), 1U);
  EXPECT_EQ(model->shards()[0].file_name, "model.safetensors");
  EXPECT_EQ(model->tensors().size(), 1U);

  write_shard(dir.path() / "other.safetensors", {{"y", 6.0F}, {"z", 7.0F}});
  const auto single = SafetensorsModelFiles::open(dir.path() / "other.safetensors");
  ASSERT_TRUE(single.has_value()) << single.error().what();
  EXPECT_EQ(single->tensors().size(), 2U);
  EXPECT_NE(single->find("z"), nullptr);
}

TEST(SafetensorsModel, ASymlinkedFileNamedDirectlyOpensWhereverItPoints) {
  TempDir dir;
  fs::create_directories(dir.path() / "store");
  fs::create_directories(dir.path() / "links");
  write_shard(dir.path() / "store" / "blob", {{"x", 5.0F}});
  fs::create_symlink(dir.path() / "store" / "blob", dir.path() / "links" / "m.safetensors");
  const auto model = SafetensorsModelFiles::open(dir.path() / "links" / "m.safetensors");
  ASSERT_TRUE(model.has_value()) << model.error().what();
  EXPECT_NE(model->find("x"), nullptr);
}

TEST(SafetensorsModel, OpenShardRejectsAShardChangedSinceOpen) {
  TempDir dir;
  write_two_shard_model(dir.path());
  const auto model = SafetensorsModelFiles::open(dir.path());
  ASSERT_TRUE(model.has_value()) << model.error().what();
  // Same size, different header bytes: rename "c" to "d".
  write_shard(dir.path() / "model-00002-of-00002.safetensors", {{"d", 3.0F}});
  EXPECT_TRUE(FailsWith(model->open_shard(1), ErrorCode::kInvalidModel, "changed"));
}

TEST(SafetensorsModel, DirectoryWithoutModelFilesIsNotFound) {
  TempDir dir;
  EXPECT_TRUE(FailsWith(SafetensorsModelFiles::open(dir.path()), ErrorCode::kNotFound,
                        "neither model.safetensors.index.json nor model.safetensors"));
  EXPECT_TRUE(FailsWith(SafetensorsModelFiles::open(dir.path() / "nope"), ErrorCode::kNotFound));
}

TEST(SafetensorsModel, S26_ShardPathWithDotDotIsRejected) {
  TempDir dir;
  fs::create_directories(dir.path() / "model");
  write_shard(dir.path() / "outside.safetensors", {{"a", 1.0F}});
  write_index(dir.path() / "model", {{"a", "../outside.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path() / "model");
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "contains '..'"));
  EXPECT_EQ(result.error().subject(), "a");
  // Also when ".." appears in the middle of an otherwise inward path.
  fs::create_directories(dir.path() / "model" / "sub");
  write_index(dir.path() / "model", {{"a", "sub/../../outside.safetensors"}});
  EXPECT_TRUE(FailsWith(SafetensorsModelFiles::open(dir.path() / "model"), ErrorCode::kInvalidModel,
                        "contains '..'"));
}

TEST(SafetensorsModel, S26_AbsoluteShardPathIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "abs.safetensors", {{"a", 1.0F}});
  fs::create_directories(dir.path() / "model");
  write_index(dir.path() / "model", {{"a", (dir.path() / "abs.safetensors").string()}});
  const auto result = SafetensorsModelFiles::open(dir.path() / "model");
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "is absolute"));
  EXPECT_EQ(result.error().subject(), "a");
}

TEST(SafetensorsModel, S26_ShardSymlinkResolvingOutsideTheDirectoryIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "secret.safetensors", {{"a", 1.0F}});
  fs::create_directories(dir.path() / "model");
  fs::create_symlink(dir.path() / "secret.safetensors", dir.path() / "model" / "s.safetensors");
  write_index(dir.path() / "model", {{"a", "s.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path() / "model");
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "outside the model directory"));
  EXPECT_EQ(result.error().subject(), "s.safetensors");
  // A symlinked directory component escaping the model directory is caught the same way.
  fs::create_directories(dir.path() / "elsewhere");
  write_shard(dir.path() / "elsewhere" / "t.safetensors", {{"a", 1.0F}});
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "model" / "link");
  write_index(dir.path() / "model", {{"a", "link/t.safetensors"}});
  EXPECT_TRUE(FailsWith(SafetensorsModelFiles::open(dir.path() / "model"), ErrorCode::kInvalidModel,
                        "outside the model directory"));
  // A symlink that stays inside the directory is fine.
  write_shard(dir.path() / "model" / "real.safetensors", {{"a", 1.0F}});
  fs::create_symlink("real.safetensors", dir.path() / "model" / "alias.safetensors");
  write_index(dir.path() / "model", {{"a", "alias.safetensors"}});
  const auto inside = SafetensorsModelFiles::open(dir.path() / "model");
  ASSERT_TRUE(inside.has_value()) << inside.error().what();
}

TEST(SafetensorsModel, S26_HuggingFaceCacheSnapshotSymlinksIntoBlobsAreAccepted) {
  TempDir dir;
  const fs::path repo = dir.path() / "models--org--name";
  fs::create_directories(repo / "blobs");
  fs::create_directories(repo / "snapshots" / "abc123");
  write_shard(repo / "blobs" / "f00d", {{"a", 1.0F}});
  fs::create_symlink("../../blobs/f00d", repo / "snapshots" / "abc123" / "model.safetensors");
  const auto model = SafetensorsModelFiles::open(repo / "snapshots" / "abc123");
  ASSERT_TRUE(model.has_value()) << model.error().what();
  EXPECT_EQ(model->shards()[0].resolved_path, fs::canonical(repo / "blobs" / "f00d"));
  // The exception can be turned off.
  SafetensorsModelOptions strict;
  strict.allow_hf_cache_blobs = false;
  EXPECT_TRUE(FailsWith(SafetensorsModelFiles::open(repo / "snapshots" / "abc123", strict),
                        ErrorCode::kInvalidModel, "outside the model directory"));
}

TEST(SafetensorsModel, S26_MissingShardIsNotFoundNamingShardAndTensor) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}});
  write_index(dir.path(), {{"a", "s1.safetensors"}, {"b", "s2.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(FailsWith(result, ErrorCode::kNotFound, "tensor 'b'"));
  EXPECT_EQ(result.error().subject(), "s2.safetensors");
  EXPECT_EQ(result.error().path(), (dir.path() / "s2.safetensors").string());
}

TEST(SafetensorsModel, S26_TensorInTwoShardsIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}, {"shared", 2.0F}});
  write_shard(dir.path() / "s2.safetensors", {{"b", 1.0F}, {"shared", 2.0F}});
  write_index(dir.path(),
              {{"a", "s1.safetensors"}, {"b", "s2.safetensors"}, {"shared", "s1.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(
      FailsWith(result, ErrorCode::kDuplicate, "in two shards: s1.safetensors and s2.safetensors"));
  EXPECT_EQ(result.error().subject(), "shared");
}

TEST(SafetensorsModel, S26_IndexNamingATensorTheShardLacksIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}});
  write_index(dir.path(), {{"a", "s1.safetensors"}, {"ghost", "s1.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "which does not contain it"));
  EXPECT_EQ(result.error().subject(), "ghost");
  EXPECT_EQ(result.error().path(), (dir.path() / "s1.safetensors").string());
}

TEST(SafetensorsModel, S26_ShardTensorMissingFromTheIndexIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}, {"extra", 2.0F}});
  write_index(dir.path(), {{"a", "s1.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "the index does not list it"));
  EXPECT_EQ(result.error().subject(), "extra");
}

TEST(SafetensorsModel, S26_IndexPlacingATensorInTheWrongShardIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}});
  write_shard(dir.path() / "s2.safetensors", {{"b", 1.0F}});
  write_index(dir.path(), {{"a", "s2.safetensors"}, {"b", "s1.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel,
                        "places this tensor in s2.safetensors "
                        "but it is in s1.safetensors"));
  EXPECT_EQ(result.error().subject(), "a");
}

TEST(SafetensorsModel, S26_ShardHeaderErrorsNameTheShard) {
  TempDir dir;
  const auto bytes = raw_safetensors_bytes("{\"a\":1}");
  ASSERT_TRUE(write_safetensors_bytes(dir.path() / "bad.safetensors", bytes));
  write_index(dir.path(), {{"a", "bad.safetensors"}});
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(FailsWith(result, ErrorCode::kInvalidModel, "must be an object"));
  EXPECT_EQ(result.error().path(), (dir.path() / "bad.safetensors").string());
  EXPECT_EQ(result.error().subject(), "a");
}

TEST(SafetensorsModel, S26_IndexWithDuplicateKeysIsRejected) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}});
  write_text(dir.path() / "model.safetensors.index.json",
             R"({"weight_map":{"a":"s1.safetensors","a":"s2.safetensors"}})");
  const auto result = SafetensorsModelFiles::open(dir.path());
  EXPECT_TRUE(FailsWith(result, ErrorCode::kDuplicate, "appears twice"));
  EXPECT_EQ(result.error().subject(), "a");
}

TEST(SafetensorsModel, S26_MalformedIndexIsRejectedWithPositionOrField) {
  const std::tuple<const char*, ErrorCode, const char*> cases[] = {
      {R"({"weight_map":{"a":"s1.safetensors")", ErrorCode::kInvalidModel, "malformed"},
      {R"({"weight_map":{}})", ErrorCode::kInvalidModel, "non-empty object"},
      {R"({"weight_map":[]})", ErrorCode::kInvalidModel, "non-empty object"},
      {R"({"metadata":{}})", ErrorCode::kInvalidModel, "no \"weight_map\""},
      {R"({"weight_map":{"a":1}})", ErrorCode::kInvalidModel, "a string"},
      {R"({"weight_map":{"a":""}})", ErrorCode::kInvalidModel, "is empty"},
      {R"({"weight_map":{"a":"x\u0000y"}})", ErrorCode::kInvalidModel, "NUL"},
      {R"({"metadata":[],"weight_map":{"a":"s"}})", ErrorCode::kInvalidModel, "\"metadata\""},
      {R"([1,2])", ErrorCode::kInvalidModel, "must be a JSON object"},
  };
  for (const auto& [text, code, needle] : cases) {
    const std::string_view view(text);
    EXPECT_TRUE(FailsWith(
        parse_safetensors_index(std::as_bytes(std::span(view.data(), view.size())), "index.json"),
        code, needle))
        << text;
  }
  std::string deep = "{\"weight_map\":";
  deep.append(100'000, '[');
  const auto too_deep =
      parse_safetensors_index(std::as_bytes(std::span(deep.data(), deep.size())), "index.json");
  EXPECT_TRUE(FailsWith(too_deep, ErrorCode::kLimitExceeded, "nests deeper"));
  const std::string_view bad = R"({"weight_map": x})";
  const auto malformed =
      parse_safetensors_index(std::as_bytes(std::span(bad.data(), bad.size())), "index.json");
  ASSERT_FALSE(malformed.has_value());
  EXPECT_EQ(malformed.error().offset(), bad.find('x'));
}

TEST(SafetensorsModel, S26_OversizedIndexIsRejectedBeforeReading) {
  TempDir dir;
  write_shard(dir.path() / "s1.safetensors", {{"a", 1.0F}});
  write_index(dir.path(), {{"a", "s1.safetensors"}});
  SafetensorsModelOptions options;
  options.max_index_bytes = 10;
  EXPECT_TRUE(FailsWith(SafetensorsModelFiles::open(dir.path(), options), ErrorCode::kLimitExceeded,
                        "above the limit"));
}

}  // namespace
}  // namespace eredu::checkpoint
