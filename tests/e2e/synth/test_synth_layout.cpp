// eredu-synth files have the layout llama.cpp's converter writes: compared key by key and tensor by
// tensor with files llama.cpp made (stories260K.gguf, the quant-zoo files and the zoo's recorded
// converter tensor order), in every encoding eredu can write.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "shared_data.hpp"
#include "synth_fixture.hpp"

namespace eredu::synth::testing {
namespace {

using checkpoint::GgufArray;
using checkpoint::GgufContents;
using checkpoint::GgufFile;
using checkpoint::GgufValueType;

checkpoint::GgufFile open_or_die(const fs::path& path) {
  auto file = GgufFile::open(path);
  EXPECT_TRUE(file.has_value()) << path << ": " << (file ? "" : file.error().what());
  return std::move(file).value();
}

// "u32", "f32", "array<string>", ...: the value type with the element type of arrays.
std::string type_of(const checkpoint::GgufMetadataEntry& entry) {
  std::string t(checkpoint::to_string(entry.value.type()));
  if (const GgufArray* a = entry.value.get_if<GgufArray>()) {
    t += "<" + std::string(checkpoint::to_string(a->element_type())) + ">";
  }
  return t;
}

std::map<std::string, std::string> key_types(const GgufContents& contents) {
  std::map<std::string, std::string> out;
  for (const auto& entry : contents.metadata())
    out[entry.key] = type_of(entry);
  return out;
}

bool is_matrix(const checkpoint::GgufTensorInfo& t) {
  return t.shape.size() == 2;
}

TEST_F(SynthTest, EveryEncodingWritesAFileTheGgufReaderParsesWithMatricesInThatEncoding) {
  for (const std::string& type : kEncodings) {
    SCOPED_TRACE(type);
    const fs::path path = write_tiny(type);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    ASSERT_EQ(file->tensors().size(), 3u + 2u * 9u);
    for (const auto& t : file->tensors()) {
      EXPECT_EQ(to_string(t.dtype), is_matrix(t) ? type : std::string("F32")) << t.name;
    }
    EXPECT_EQ(file->header().file_size, fs::file_size(path));
  }
}

TEST_F(SynthTest, MetadataKeysAndValueTypesMatchTheFilesLlamaCppWrote) {
  const fs::path stories = eredu::testing::models_dir() / "stories260K.gguf";
  const fs::path zoo = eredu::testing::testdata_dir() / "quant-zoo" / "zoo-Q8_0.gguf";
  EREDU_REQUIRE_SHARED_PATH(stories);
  EREDU_REQUIRE_SHARED_PATH(zoo);
  std::map<std::string, std::string> reference = key_types(open_or_die(stories).contents());
  for (const auto& [key, type] : key_types(open_or_die(zoo).contents()))
    reference.emplace(key, type);

  const auto ours = key_types(open_or_die(write_tiny("Q8_0")).contents());
  // Every key both sides have holds the same value type (u32 vs i32, f32, array element types).
  for (const auto& [key, type] : ours) {
    if (auto it = reference.find(key); it != reference.end()) {
      EXPECT_EQ(type, it->second) << key;
    }
  }
  // Every llama.* hyperparameter and the tokenizer/general keys llama.cpp needs are present.
  for (const auto& [key, type] : reference) {
    if (key.starts_with("llama.")) {
      EXPECT_TRUE(ours.contains(key)) << key;
    }
  }
  for (const char* key :
       {"general.architecture", "general.name", "general.file_type", "general.quantization_version",
        "tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores",
        "tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.unknown_token_id"}) {
    EXPECT_TRUE(ours.contains(key)) << key;
    EXPECT_TRUE(reference.contains(key)) << key;
  }
  // Keys the reference files lack: written as llama.cpp's converter types them.
  EXPECT_EQ(ours.at("tokenizer.ggml.add_bos_token"), "bool");
  EXPECT_EQ(ours.at("tokenizer.ggml.add_eos_token"), "bool");
}

TEST_F(SynthTest, HyperparametersAreTheRequestedShape) {
  auto file = open_or_die(write_tiny("F16"));
  const GgufContents& c = file.contents();
  EXPECT_EQ(c.get_string("general.architecture").value(), "llama");
  EXPECT_EQ(c.get_u32("llama.embedding_length").value(), 64u);
  EXPECT_EQ(c.get_u32("llama.block_count").value(), 2u);
  EXPECT_EQ(c.get_u32("llama.attention.head_count").value(), 4u);
  EXPECT_EQ(c.get_u32("llama.attention.head_count_kv").value(), 2u);
  EXPECT_EQ(c.get_u32("llama.rope.dimension_count").value(), 16u);
  EXPECT_EQ(c.get_u32("llama.feed_forward_length").value(), 128u);
  EXPECT_EQ(c.get_u32("llama.vocab_size").value(), 320u);
  EXPECT_EQ(c.get_u32("llama.context_length").value(), 256u);
  EXPECT_EQ(c.get_f32("llama.rope.freq_base").value(), 10000.0f);
  EXPECT_EQ(c.get_f32("llama.attention.layer_norm_rms_epsilon").value(), 1e-5f);
  EXPECT_EQ(c.get_u32("tokenizer.ggml.bos_token_id").value(), 1u);
  EXPECT_EQ(c.get_u32("tokenizer.ggml.eos_token_id").value(), 2u);
  EXPECT_EQ(c.get_u32("tokenizer.ggml.unknown_token_id").value(), 0u);
  EXPECT_TRUE(c.get_bool("tokenizer.ggml.add_bos_token").value());
  EXPECT_EQ(c.get_u32("general.quantization_version").value(), 2u);
  // head size = hidden / heads here, so (like the converter) no key/value length keys.
  EXPECT_EQ(c.find_metadata("llama.attention.key_length"), nullptr);
}

TEST_F(SynthTest, HeadSizeOtherThanHiddenOverHeadsIsWrittenAsKeyAndValueLength) {
  const fs::path path = dir_ / "wide-heads.gguf";
  const RunResult r =
      run("--hidden 64 --layers 1 --heads 4 --head-dim 32 --ffn 64 --vocab 300 -q -o '" +
          path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto file = open_or_die(path);
  EXPECT_EQ(file.contents().get_u32("llama.attention.key_length").value(), 32u);
  EXPECT_EQ(file.contents().get_u32("llama.attention.value_length").value(), 32u);
  EXPECT_EQ(file.contents().get_u32("llama.rope.dimension_count").value(), 32u);
  EXPECT_EQ(file.find_tensor("blk.0.attn_q.weight")->ne, (std::vector<std::uint64_t>{64, 128}));
  EXPECT_EQ(file.find_tensor("blk.0.attn_output.weight")->ne,
            (std::vector<std::uint64_t>{128, 64}));
}

TEST_F(SynthTest, FileTypeIsLlamaCppsNumberForEachEncoding) {
  const fs::path zoo_dir = eredu::testing::testdata_dir() / "quant-zoo";
  EREDU_REQUIRE_SHARED_PATH(zoo_dir / "zoo-Q8_0.gguf");
  for (const std::string& type : kEncodings) {
    SCOPED_TRACE(type);
    const std::uint32_t ours =
        open_or_die(write_tiny(type)).contents().get_u32("general.file_type").value();
    if (type == "F32") {
      EXPECT_EQ(ours, 0u);  // LLAMA_FTYPE_ALL_F32 (no zoo file is F32)
      continue;
    }
    // llama-quantize wrote general.file_type into the zoo file of the same encoding.
    const std::uint32_t reference = open_or_die(zoo_dir / ("zoo-" + type + ".gguf"))
                                        .contents()
                                        .get_u32("general.file_type")
                                        .value();
    EXPECT_EQ(ours, reference);
  }
}

TEST_F(SynthTest, TensorNamesOrderAndShapesFollowTheConverter) {
  const fs::path zoo_dir = eredu::testing::testdata_dir() / "quant-zoo";
  EREDU_REQUIRE_SHARED_PATH(zoo_dir / "manifest.json");
  EREDU_REQUIRE_SHARED_PATH(zoo_dir / "zoo-F16.gguf");
  // The zoo model's shape (manifest.json, source_model.hparams).
  const fs::path path = dir_ / "zoo-shape.gguf";
  const RunResult r =
      run("--hidden 256 --layers 2 --heads 4 --kv-heads 2 --head-dim 64 --ffn 512 --vocab 512 "
          "--context 512 --type F16 -q -o '" +
          path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ours = open_or_die(path);

  const auto manifest = nlohmann::json::parse(read_text(zoo_dir / "manifest.json"));
  const auto& order = manifest.at("source_model").at("tensor_order");
  ASSERT_EQ(ours.tensors().size(), order.size());
  auto reference = open_or_die(zoo_dir / "zoo-F16.gguf");
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& t = ours.tensors()[i];
    EXPECT_EQ(t.name, order[i].get<std::string>()) << "position " << i;
    const auto* ref = reference.find_tensor(t.name);
    ASSERT_NE(ref, nullptr) << t.name;
    EXPECT_EQ(t.ne, ref->ne) << t.name;
    EXPECT_EQ(t.dtype, ref->dtype) << t.name;  // F16 matrices, F32 norms in both
  }
}

TEST_F(SynthTest, TensorNamesMatchStories260KForItsShape) {
  const fs::path stories = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(stories);
  // stories260K: 64 hidden, 5 blocks, 8 heads / 4 KV heads of 8, FFN 172, vocabulary 512.
  const fs::path path = dir_ / "stories-shape.gguf";
  const RunResult r =
      run("--hidden 64 --layers 5 --heads 8 --kv-heads 4 --ffn 172 --vocab 512 --type F32 -q -o '" +
          path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ours = open_or_die(path);
  auto reference = open_or_die(stories);
  std::map<std::string, std::vector<std::uint64_t>> ref_shapes;
  for (const auto& t : reference.tensors())
    ref_shapes[t.name] = t.ne;
  std::map<std::string, std::vector<std::uint64_t>> our_shapes;
  for (const auto& t : ours.tensors())
    our_shapes[t.name] = t.ne;
  EXPECT_EQ(our_shapes, ref_shapes);
  for (const char* key : {"llama.embedding_length", "llama.block_count",
                          "llama.feed_forward_length", "llama.attention.head_count",
                          "llama.attention.head_count_kv", "llama.rope.dimension_count"}) {
    EXPECT_EQ(ours.contents().get_u32(key).value(), reference.contents().get_u32(key).value())
        << key;
  }
}

// The presets' values as issue 5 gives them. Layers, vocabulary (and for llama1b the FFN) are
// overridden to keep the test small; overriding is itself part of what is checked.
TEST_F(SynthTest, PresetsHaveTheirShapesAndExplicitOptionsOverrideThem) {
  struct Expected {
    std::string preset;
    std::string overrides;
    std::uint32_t hidden, heads, kv_heads, head_dim, ffn, context;
    float rope_base;
  };
  for (const Expected& e :
       {Expected{"smol135m", "--layers 1 --vocab 300", 576, 9, 3, 64, 1536, 2048, 100000.0f},
        Expected{"llama1b", "--layers 1 --vocab 300 --ffn 256", 2048, 32, 8, 64, 256, 4096,
                 10000.0f}}) {
    SCOPED_TRACE(e.preset);
    const fs::path path = dir_ / (e.preset + ".gguf");
    const RunResult r = run("--preset " + e.preset + " " + e.overrides + " --type Q4_0 -q -o '" +
                            path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto file = open_or_die(path);
    const GgufContents& c = file.contents();
    EXPECT_EQ(c.get_string("general.name").value(), e.preset);
    EXPECT_EQ(c.get_u32("llama.embedding_length").value(), e.hidden);
    EXPECT_EQ(c.get_u32("llama.attention.head_count").value(), e.heads);
    EXPECT_EQ(c.get_u32("llama.attention.head_count_kv").value(), e.kv_heads);
    EXPECT_EQ(c.get_u32("llama.rope.dimension_count").value(), e.head_dim);
    EXPECT_EQ(c.get_u32("llama.feed_forward_length").value(), e.ffn);
    EXPECT_EQ(c.get_u32("llama.context_length").value(), e.context);
    EXPECT_EQ(c.get_f32("llama.rope.freq_base").value(), e.rope_base);
    EXPECT_EQ(c.get_u32("llama.block_count").value(), 1u);
    EXPECT_EQ(c.get_u32("llama.vocab_size").value(), 300u);
    EXPECT_EQ(file.tensors().size(), 3u + 9u);
    EXPECT_EQ(file.find_tensor("blk.0.attn_k.weight")->ne,
              (std::vector<std::uint64_t>{e.hidden, std::uint64_t{e.kv_heads} * e.head_dim}));
    EXPECT_EQ(file.find_tensor("blk.0.ffn_down.weight")->ne,
              (std::vector<std::uint64_t>{e.ffn, e.hidden}));
  }
}

TEST_F(SynthTest, RowLengthThatIsNotWholeBlocksKeepsF16AndSaysSo) {
  const fs::path path = dir_ / "ffn100.gguf";
  const RunResult r = run(
      "--hidden 64 --layers 2 --heads 4 --kv-heads 2 --ffn 100 --vocab 320 --type Q4_0 -q -o '" +
      path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto file = open_or_die(path);
  for (const auto& t : file.tensors()) {
    if (t.name.ends_with("ffn_down.weight")) {
      EXPECT_EQ(t.dtype, DType::kF16) << t.name;  // rows of 100 are not whole 32-blocks
      EXPECT_NE(r.err.find(t.name), std::string::npos) << r.err;
    } else if (is_matrix(t)) {
      EXPECT_EQ(t.dtype, DType::kQ4_0) << t.name;  // ffn_gate/ffn_up rows are 64 long
      EXPECT_EQ(r.err.find(t.name), std::string::npos) << r.err;
    }
  }
  EXPECT_NE(r.err.find("F16"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("100"), std::string::npos) << r.err;
  EXPECT_EQ(file.contents().get_u32("general.file_type").value(), 2u);  // still "mostly Q4_0"
}

TEST_F(SynthTest, TypesWithoutAQuantizerAreRefusedNamingTheTypeAndNoFileIsWritten) {
  for (const std::string type : {"IQ2_XXS", "TQ2_0", "Q8_1"}) {
    SCOPED_TRACE(type);
    const fs::path path = dir_ / (type + ".gguf");
    const RunResult r = run(kTinyShape + " --type " + type + " -o '" + path.string() + "'");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(type), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("quantizer"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path));
  }
  const RunResult unknown =
      run(kTinyShape + " --type Q9_9 -o '" + (dir_ / "x.gguf").string() + "'");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("Q9_9"), std::string::npos) << unknown.err;
}

TEST_F(SynthTest, InvalidShapesAreRefusedNamingTheOption) {
  const fs::path path = dir_ / "bad.gguf";
  RunResult r = run("--hidden 64 --layers 1 --heads 4 --kv-heads 3 --ffn 64 --vocab 300 -o '" +
                    path.string() + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("kv-heads"), std::string::npos) << r.err;
  r = run("--hidden 64 --layers 1 --heads 4 --ffn 64 --vocab 100 -o '" + path.string() + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("vocab"), std::string::npos) << r.err;
  r = run("--layers 1 --heads 4 --ffn 64 --vocab 300 -o '" + path.string() + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--hidden"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace eredu::synth::testing
