// eredu-inspect on every checkpoint in ../shared: the models, the tokenizer vocabularies and the
// quant zoo. Counts are compared with what the GGUF reader itself says about each file, and a few
// values with facts documented in ../shared/models/README.md.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "eredu/checkpoint/gguf.hpp"
#include "inspect_runner.hpp"
#include "shared_data.hpp"

namespace eredu::testing {
namespace {

using nlohmann::json;

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir,
                                            std::string_view prefix, std::string_view ext) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !name.starts_with(prefix)) continue;
    if (!ext.empty() && entry.path().extension() != ext) continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const json* find_metadata(const json& report, std::string_view key) {
  for (const json& entry : report.at("metadata")) {
    if (entry.at("key") == key) return &entry;
  }
  return nullptr;
}

// Runs --json on a GGUF file and checks it against the reader: exit 0, nothing on stderr, tensor
// count, tensor names and encodings in order, metadata keys in order, totals that add up.
void expect_json_matches_reader(const std::filesystem::path& path) {
  SCOPED_TRACE(path.string());
  const auto file = checkpoint::GgufFile::open(path);
  ASSERT_TRUE(file.has_value()) << file.error().what();

  const InspectRun run = run_inspect({path.string(), "--json"});
  ASSERT_EQ(run.signal, 0);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const json report = json::parse(run.out);
  EXPECT_EQ(report.at("format"), "gguf");
  EXPECT_EQ(report.at("container").at("version"), file->header().version);
  EXPECT_EQ(report.at("container").at("shard_count"), 1u);
  EXPECT_EQ(report.at("verdict").at("valid"), true);
  EXPECT_EQ(report.at("verdict").at("tensor_count"), file->tensors().size());

  const json& tensors = report.at("tensors");
  ASSERT_EQ(tensors.size(), file->tensors().size());
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const checkpoint::GgufTensorInfo& info = file->tensors()[i];
    EXPECT_EQ(tensors[i].at("name"), info.name);
    EXPECT_EQ(tensors[i].at("encoding"), std::string(to_string(info.dtype)));
    EXPECT_EQ(tensors[i].at("shape").get<std::vector<std::uint64_t>>(), info.shape);
    EXPECT_EQ(tensors[i].at("bytes"), info.byte_size);
    bytes += info.byte_size;
  }
  EXPECT_EQ(report.at("verdict").at("tensor_bytes"), bytes);

  const json& metadata = report.at("metadata");
  ASSERT_EQ(metadata.size(), file->metadata().size());
  for (std::size_t i = 0; i < metadata.size(); ++i) {
    EXPECT_EQ(metadata[i].at("key"), file->metadata()[i].key);
  }

  std::uint64_t total_tensors = 0;
  for (const json& total : report.at("totals"))
    total_tensors += total.at("tensors").get<std::uint64_t>();
  EXPECT_EQ(total_tensors, file->tensors().size());
}

TEST(InspectSharedFiles, EveryModelFileIsReadAndMatchesTheGgufReader) {
  EREDU_REQUIRE_INSPECT_BINARY();
  EREDU_REQUIRE_SHARED_PATH(models_dir());
  std::size_t models = 0;
  for (const auto& path : files_in(models_dir(), "", "")) {
    if (path.extension() == ".gguf") {
      expect_json_matches_reader(path);
      ++models;
    } else {
      // Not a checkpoint (README.md): one clear line and exit code 2, never a crash.
      const InspectRun run = run_inspect({path.string()});
      EXPECT_EQ(run.exit_code, 2) << path;
      EXPECT_EQ(line_count(run.err), 1u) << run.err;
      EXPECT_NE(run.err.find(path.string()), std::string::npos) << run.err;
    }
  }
  EXPECT_GE(models, 1u);
}

TEST(InspectSharedFiles, EveryVocabularyFileIsReadWithItsTokenArray) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const std::filesystem::path dir = testdata_dir() / "vocab";
  EREDU_REQUIRE_SHARED_PATH(dir);
  const auto files = files_in(dir, "", ".gguf");
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    expect_json_matches_reader(path);
    const auto file = checkpoint::GgufFile::open(path);
    ASSERT_TRUE(file.has_value());
    const auto tokens = file->contents().get_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.has_value()) << path;
    const json report = json::parse(run_inspect({path.string(), "--json"}).out);
    const json* entry = find_metadata(report, "tokenizer.ggml.tokens");
    ASSERT_NE(entry, nullptr) << path;
    EXPECT_EQ(entry->at("type"), "array");
    EXPECT_EQ(entry->at("element_type"), "string");
    EXPECT_EQ(entry->at("count"), (*tokens)->size());
    EXPECT_EQ(entry->at("value").size(), std::min<std::uint64_t>(8, (*tokens)->size()));
    EXPECT_EQ(entry->value("truncated", false), (*tokens)->size() > 8);
    // The text form reads the same file without error.
    const InspectRun text = run_inspect({path.string()});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("[string; " + std::to_string((*tokens)->size()) + "]"),
              std::string::npos);
  }
}

TEST(InspectSharedFiles, EveryQuantZooFileIsReadWithItsEncodings) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const std::filesystem::path dir = testdata_dir() / "quant-zoo";
  EREDU_REQUIRE_SHARED_PATH(dir);
  const auto files = files_in(dir, "zoo-", ".gguf");
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    expect_json_matches_reader(path);
    const auto file = checkpoint::GgufFile::open(path);
    ASSERT_TRUE(file.has_value());
    std::set<std::string> expected;
    for (const auto& info : file->tensors())
      expected.insert(std::string(to_string(info.dtype)));
    const json report = json::parse(run_inspect({path.string(), "--json"}).out);
    std::set<std::string> listed;
    for (const json& total : report.at("totals"))
      listed.insert(total.at("encoding").get<std::string>());
    EXPECT_EQ(listed, expected) << path;
  }
}

// Facts from ../shared/models/README.md: Llama, 5 blocks, embedding 64, 512 tokens, all F32.
TEST(InspectSharedFiles, Stories260KShowsItsDocumentedHyperparameters) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const std::filesystem::path path = models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  const InspectRun run = run_inspect({path.string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json report = json::parse(run.out);
  ASSERT_NE(find_metadata(report, "llama.block_count"), nullptr);
  EXPECT_EQ(find_metadata(report, "llama.block_count")->at("value"), 5);
  EXPECT_EQ(find_metadata(report, "llama.embedding_length")->at("value"), 64);
  EXPECT_EQ(find_metadata(report, "llama.feed_forward_length")->at("value"), 172);
  EXPECT_EQ(find_metadata(report, "general.architecture")->at("value"), "llama");
  EXPECT_EQ(find_metadata(report, "tokenizer.ggml.tokens")->at("count"), 512);
  ASSERT_EQ(report.at("totals").size(), 1u);
  EXPECT_EQ(report.at("totals")[0].at("encoding"), "F32");
  EXPECT_DOUBLE_EQ(report.at("totals")[0].at("share").get<double>(), 1.0);

  const InspectRun text = run_inspect({path.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("llama.block_count"), std::string::npos);
  EXPECT_NE(text.out.find("GGUF v3"), std::string::npos);
  EXPECT_NE(text.out.find("[string; 512] \"<unk>\", \"<s>\", \"</s>\""), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\n  valid: "), std::string::npos);
  EXPECT_NE(text.out.find("all ranges inside the file"), std::string::npos);
}

// A Q4_K_M file falls back per tensor to several encodings (README): totals list each, and the
// shares add up to one.
TEST(InspectSharedFiles, MixedEncodingTotalsAddUpToTheWhole) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const std::filesystem::path path = models_dir() / "stories260K-Q4_K_M.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  const json report = json::parse(run_inspect({path.string(), "--json"}).out);
  EXPECT_GE(report.at("totals").size(), 3u);
  double share = 0;
  std::uint64_t bytes = 0;
  for (const json& total : report.at("totals")) {
    share += total.at("share").get<double>();
    bytes += total.at("bytes").get<std::uint64_t>();
  }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(bytes, report.at("verdict").at("tensor_bytes"));
}

}  // namespace
}  // namespace eredu::testing
