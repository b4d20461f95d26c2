// eredu-inspect on checkpoints the tests write with eredu's writers: a split GGUF set opened from
// its second shard, a single SafeTensors file, a sharded SafeTensors directory, long metadata
// values, and the output options.

#include <nlohmann/json.hpp>

#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/safetensors_writer.hpp"
#include "inspect_runner.hpp"

namespace eredu::testing {
namespace {

using checkpoint::GgufValue;
using checkpoint::GgufWriter;
using nlohmann::json;

std::vector<std::byte> zero_bytes(std::size_t n) {
  return std::vector<std::byte>(n);
}

// Shard `no` (0-based) of three, holding tensors t<2no> and t<2no+1> as F32 [2, 4].
void write_gguf_shard(const std::filesystem::path& path, std::uint16_t no) {
  GgufWriter w;
  if (no == 0) w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata("split.no", GgufValue(no));
  w.add_metadata("split.count", GgufValue(std::uint16_t{3}));
  w.add_metadata("split.tensors.count", GgufValue(std::int32_t{6}));
  for (int k = 0; k < 2; ++k) {
    const std::vector<std::uint64_t> shape{2, 4};
    ASSERT_TRUE(w.add_tensor("t" + std::to_string(2 * no + k), DType::kF32, shape, zero_bytes(32))
                    .has_value());
  }
  ASSERT_TRUE(w.write_file(path).has_value());
}

TEST(InspectWrittenFiles, SplitGgufSetOpenedFromTheSecondShardListsEveryShard) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("split");
  for (std::uint16_t no = 0; no < 3; ++no) {
    write_gguf_shard(dir / ("m-0000" + std::to_string(no + 1) + "-of-00003.gguf"), no);
  }
  const InspectRun run = run_inspect({(dir / "m-00002-of-00003.gguf").string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json report = json::parse(run.out);
  EXPECT_EQ(report.at("container").at("shard_count"), 3);
  EXPECT_EQ(report.at("container").at("shards")[0].at("path"),
            (dir / "m-00001-of-00003.gguf").string());
  EXPECT_EQ(report.at("verdict").at("tensor_count"), 6);
  EXPECT_EQ(report.at("verdict").at("tensor_bytes"), 6 * 32);
  const json& tensors = report.at("tensors");
  ASSERT_EQ(tensors.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(tensors[i].at("name"), "t" + std::to_string(i));
    EXPECT_EQ(tensors[i].at("shard"), i / 2);
    EXPECT_EQ(tensors[i].at("shape"), json::array({2, 4}));
  }
  // The model's metadata comes from the first shard.
  EXPECT_EQ(report.at("metadata")[0].at("key"), "general.architecture");
  EXPECT_EQ(report.at("metadata")[0].at("value"), "llama");

  const InspectRun text = run_inspect({(dir / "m-00003-of-00003.gguf").string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("all ranges inside their shards (3 files)"), std::string::npos)
      << text.out;
  std::filesystem::remove_all(dir);
}

TEST(InspectWrittenFiles, SafetensorsFileShowsHeaderTensorsAndMetadata) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("st-file");
  checkpoint::SafetensorsWriter w;
  ASSERT_TRUE(w.add("embed", DType::kBF16, {3, 4}, zero_bytes(24)).has_value());
  ASSERT_TRUE(w.add("norm", DType::kF32, {4}, zero_bytes(16)).has_value());
  w.set_metadata("format", "pt");
  const auto path = dir / "weights.safetensors";
  ASSERT_TRUE(w.write_file(path).has_value());

  // N, read independently from the file's first 8 bytes (little-endian).
  const std::string bytes = read_text_file(path);
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i)
    header_bytes = header_bytes << 8 | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);

  const InspectRun run = run_inspect({path.string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json report = json::parse(run.out);
  EXPECT_EQ(report.at("format"), "safetensors");
  EXPECT_EQ(report.at("container").at("header_bytes"), header_bytes);
  EXPECT_EQ(report.at("container").at("data_offset"), header_bytes + 8);
  EXPECT_EQ(report.at("container").at("file_size"), bytes.size());
  EXPECT_EQ(report.at("container").at("shard_count"), 1);
  ASSERT_EQ(report.at("tensors").size(), 2u);
  EXPECT_EQ(report.at("tensors")[0].at("name"), "embed");
  EXPECT_EQ(report.at("tensors")[0].at("encoding"), "BF16");
  EXPECT_EQ(report.at("tensors")[0].at("shape"), json::array({3, 4}));
  EXPECT_EQ(report.at("tensors")[0].at("bytes"), 24);
  EXPECT_EQ(report.at("tensors")[1].at("encoding"), "F32");
  EXPECT_EQ(report.at("verdict").at("tensor_bytes"), 40);
  ASSERT_EQ(report.at("metadata").size(), 1u);
  EXPECT_EQ(report.at("metadata")[0].at("key"), "format");
  EXPECT_EQ(report.at("metadata")[0].at("value"), "pt");

  const InspectRun text = run_inspect({path.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("SafeTensors"), std::string::npos);
  EXPECT_NE(text.out.find("[3, 4]"), std::string::npos);
  std::filesystem::remove_all(dir);
}

std::filesystem::path write_sharded_model(const std::string& name) {
  const auto dir = fresh_temp_dir(name);
  std::vector<checkpoint::SafetensorsShardSpec> shards(2);
  shards[0].file_name = "model-00001-of-00002.safetensors";
  shards[1].file_name = "model-00002-of-00002.safetensors";
  EXPECT_TRUE(shards[0].writer.add("a", DType::kF16, {8}, zero_bytes(16)).has_value());
  EXPECT_TRUE(shards[0].writer.add("b", DType::kF16, {2, 2}, zero_bytes(8)).has_value());
  EXPECT_TRUE(shards[1].writer.add("c", DType::kF32, {5}, zero_bytes(20)).has_value());
  EXPECT_TRUE(checkpoint::write_sharded_safetensors(dir, shards).has_value());
  return dir;
}

TEST(InspectWrittenFiles, ShardedSafetensorsDirectoryListsShardsFromTheIndex) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = write_sharded_model("st-dir");
  for (const auto& target : {dir, dir / "model.safetensors.index.json"}) {
    SCOPED_TRACE(target.string());
    const InspectRun run = run_inspect({target.string(), "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json report = json::parse(run.out);
    EXPECT_EQ(report.at("container").at("shard_count"), 2);
    EXPECT_FALSE(report.at("container").at("index").is_null());
    EXPECT_EQ(report.at("container").at("index_total_size"), 44);
    EXPECT_EQ(report.at("container").at("shards")[0].at("tensors"), 2);
    EXPECT_EQ(report.at("container").at("shards")[1].at("tensors"), 1);
    ASSERT_EQ(report.at("tensors").size(), 3u);
    EXPECT_EQ(report.at("tensors")[2].at("name"), "c");
    EXPECT_EQ(report.at("tensors")[2].at("shard"), 1);
    EXPECT_EQ(report.at("verdict").at("tensor_bytes"), 44);
    // Two encodings: F16 (24 bytes) before F32 (20 bytes).
    ASSERT_EQ(report.at("totals").size(), 2u);
    EXPECT_EQ(report.at("totals")[0].at("encoding"), "F16");
    EXPECT_EQ(report.at("totals")[0].at("tensors"), 2);
  }
  std::filesystem::remove_all(dir);
}

TEST(InspectWrittenFiles, LongStringsAndArraysAreSummarizedWithTheirSizes) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("long");
  GgufWriter w;
  const std::string tmpl(5000, 'x');
  w.add_metadata("tokenizer.chat_template", GgufValue(tmpl));
  std::vector<std::int32_t> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<std::int32_t>(i) * 3;
  w.add_metadata("test.values", GgufValue(checkpoint::GgufArray::of(values)));
  w.add_metadata("test.line", GgufValue("a\nb"));
  const auto path = dir / "long.gguf";
  ASSERT_TRUE(w.write_file(path).has_value());

  const InspectRun text = run_inspect({path.string(), "--max-array", "3"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(5000 bytes)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(tmpl), std::string::npos);
  EXPECT_NE(text.out.find("[i32; 1000] 0, 3, 6, ..."), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\"a\\nb\""), std::string::npos) << text.out;  // one line, escaped

  const InspectRun run =
      run_inspect({path.string(), "--json", "--max-array", "2", "--max-string", "10"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json report = json::parse(run.out);
  const json& chat = report.at("metadata")[0];
  EXPECT_EQ(chat.at("value"), std::string(10, 'x'));
  EXPECT_EQ(chat.at("bytes"), 5000);
  EXPECT_EQ(chat.at("truncated"), true);
  const json& array = report.at("metadata")[1];
  EXPECT_EQ(array.at("element_type"), "i32");
  EXPECT_EQ(array.at("count"), 1000);
  EXPECT_EQ(array.at("value"), json::array({0, 3}));
  EXPECT_EQ(array.at("truncated"), true);
  EXPECT_EQ(report.at("metadata")[2].at("value"), "a\nb");
  EXPECT_EQ(report.at("verdict").at("tensor_count"), 0);
  std::filesystem::remove_all(dir);
}

TEST(InspectWrittenFiles, NoTensorsOptionLeavesOutTheTableButKeepsTotals) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = write_sharded_model("no-tensors");
  const InspectRun run = run_inspect({dir.string(), "--json", "--no-tensors"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json report = json::parse(run.out);
  EXPECT_FALSE(report.contains("tensors"));
  EXPECT_EQ(report.at("verdict").at("tensor_count"), 3);
  const InspectRun text = run_inspect({dir.string(), "--no-tensors"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("\ntensors ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("totals per encoding"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eredu::testing
