// The real GGUF files in ../shared parse, and agree with facts known independently of this
// reader: the model card of stories260K (models/README.md), the quant-zoo manifest (written by
// gguf-py's GGUFReader), and the published sizes of well-known vocabularies.

#include <nlohmann/json.hpp>

#include <fstream>

#include "eredu/checkpoint/gguf_split.hpp"
#include "gguf_fixtures.hpp"
#include "shared_data.hpp"

namespace eredu::checkpoint {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> gguf_files_in(const fs::path& dir, std::string_view prefix = {}) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".gguf" && name.rfind(prefix, 0) == 0) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GgufRealFiles, EveryModelVocabAndZooFileParsesWithConsistentTensorRanges) {
  std::vector<fs::path> files = gguf_files_in(eredu::testing::models_dir());
  for (const auto& p : gguf_files_in(eredu::testing::testdata_dir() / "vocab"))
    files.push_back(p);
  for (const auto& p : gguf_files_in(eredu::testing::testdata_dir() / "quant-zoo", "zoo-")) {
    files.push_back(p);
  }
  if (files.empty()) GTEST_SKIP() << "no GGUF files under " << eredu::testing::shared_dir();
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    EXPECT_GE(file->header().version, 2u);
    EXPECT_EQ(file->header().file_size, fs::file_size(path));
    EXPECT_EQ(file->metadata().size(), file->header().metadata_count);
    EXPECT_EQ(file->tensors().size(), file->header().tensor_count);
    for (const GgufTensorInfo& t : file->tensors()) {
      EXPECT_EQ(t.data_offset % file->header().alignment, 0u) << t.name;
      EXPECT_LE(t.data_offset + t.byte_size, file->header().file_size) << t.name;
      EXPECT_TRUE(file->tensor_bytes(t).has_value()) << t.name;
    }
    // Every file is also a (one-shard) set.
    auto set = GgufShardSet::open(path);
    ASSERT_TRUE(set.has_value()) << set.error().what();
    EXPECT_EQ(set->tensors().size(), file->tensors().size());
  }
}

TEST(GgufRealFiles, Stories260KMatchesItsModelCard) {
  const fs::path path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const GgufContents& c = file->contents();
  EXPECT_EQ(c.get_string("general.architecture").value(), "llama");
  EXPECT_EQ(c.get_u32("llama.block_count").value(), 5u);
  EXPECT_EQ(c.get_u32("llama.embedding_length").value(), 64u);
  EXPECT_EQ(c.get_u32("llama.feed_forward_length").value(), 172u);
  EXPECT_EQ(c.get_u32("llama.attention.head_count").value(), 8u);
  EXPECT_EQ(c.get_u32("llama.attention.head_count_kv").value(), 4u);
  EXPECT_EQ(c.get_u32("llama.context_length").value(), 2048u);
  EXPECT_FLOAT_EQ(c.get_f32("llama.attention.layer_norm_rms_epsilon").value(), 1e-5f);
  EXPECT_EQ(c.get_u32("tokenizer.ggml.bos_token_id").value(), 1u);
  EXPECT_EQ(c.get_u32("tokenizer.ggml.eos_token_id").value(), 2u);
  const GgufArray* tokens = c.get_array("tokenizer.ggml.tokens", GgufValueType::kString).value();
  EXPECT_EQ(tokens->size(), 512u);
  const GgufTensorInfo* embd = c.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->dtype, DType::kF32);
  EXPECT_EQ(embd->shape, (std::vector<std::uint64_t>{512, 64}));
  EXPECT_EQ(embd->byte_size, 512u * 64u * 4u);
  const GgufTensorInfo* down = c.find_tensor("blk.4.ffn_down.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->shape, (std::vector<std::uint64_t>{64, 172}));
  EXPECT_EQ(c.find_tensor("blk.5.ffn_down.weight"), nullptr);
  // 260K parameters, all F32: the tensor bytes are about 4 * 260K and fill most of the file.
  std::uint64_t elements = 0;
  for (const GgufTensorInfo& t : c.tensors())
    elements += t.element_count;
  EXPECT_GT(elements, 250'000u);
  EXPECT_LT(elements, 300'000u);
}

TEST(GgufRealFiles, QuantZooTensorOffsetsAndSizesMatchTheManifest) {
  const fs::path dir = eredu::testing::testdata_dir() / "quant-zoo";
  // (The macro's parameter is spelled `path`, so it is given a variable of that name.)
  const fs::path path = dir / "manifest.json";
  EREDU_REQUIRE_SHARED_PATH(path);
  std::ifstream in(path);
  const nlohmann::json manifest = nlohmann::json::parse(in);
  int checked = 0;
  for (const auto& variant : manifest.at("variants")) {
    const fs::path zoo = dir / variant.at("file").get<std::string>();
    SCOPED_TRACE(zoo.string());
    if (!fs::exists(zoo)) continue;
    auto file = GgufFile::open(zoo);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    EXPECT_EQ(file->header().file_size, variant.at("size_bytes").get<std::uint64_t>());
    EXPECT_EQ(file->header().alignment, variant.at("alignment").get<std::uint64_t>());
    EXPECT_EQ(file->header().data_section_offset,
              variant.at("tensor_data_section_offset").get<std::uint64_t>());
    for (const auto& t : variant.at("tensors")) {
      const std::string name = t.at("name").get<std::string>();
      const GgufTensorInfo* info = file->find_tensor(name);
      ASSERT_NE(info, nullptr) << name;
      EXPECT_EQ(info->data_offset, t.at("data_offset").get<std::uint64_t>()) << name;
      EXPECT_EQ(info->byte_size, t.at("n_bytes").get<std::uint64_t>()) << name;
      EXPECT_EQ(info->element_count, t.at("n_elements").get<std::uint64_t>()) << name;
      EXPECT_EQ(info->ggml_type, t.at("ggml_type_id").get<std::uint32_t>()) << name;
      EXPECT_EQ(to_string(info->dtype), t.at("ggml_type").get<std::string>()) << name;
      EXPECT_EQ(info->ne, t.at("ne").get<std::vector<std::uint64_t>>()) << name;
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "no quant-zoo GGUF files present in " << dir;
}

TEST(GgufRealFiles, WellKnownVocabulariesHaveTheirPublishedSizes) {
  const struct {
    const char* file;
    std::uint64_t tokens;
    const char* model;
  } cases[] = {{"ggml-vocab-gpt-2.gguf", 50257, "gpt2"},
               {"ggml-vocab-llama-spm.gguf", 32000, "llama"}};
  for (const auto& c : cases) {
    const fs::path path = eredu::testing::testdata_dir() / "vocab" / c.file;
    EREDU_REQUIRE_SHARED_PATH(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    EXPECT_EQ(file->contents().get_string("tokenizer.ggml.model").value(), c.model);
    EXPECT_EQ(file->contents().get_array("tokenizer.ggml.tokens").value()->size(), c.tokens);
  }
}

}  // namespace
}  // namespace eredu::checkpoint
