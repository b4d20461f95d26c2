// The llama family's config normalization (model/decoder/config.hpp): every missing or absurd
// hyper-parameter is an error naming its key (reliability.md G44-G46), checked from metadata alone.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/model/llama/family.hpp"
#include "eredu/model/mistral/family.hpp"
#include "tiny_llama.hpp"

namespace {

using eredu::ErrorCode;
using eredu::checkpoint::GgufValue;
using eredu::testing::TinyLlama;

eredu::Result<eredu::model::decoder::DecoderConfig> read(const TinyLlama& t) {
  auto contents = t.contents();
  EXPECT_NE(contents, nullptr);
  // The family the file names (llama or mistral: the same decoder, keys under its own prefix).
  const auto arch = contents->get_string("general.architecture");
  const eredu::checkpoint::TensorCatalog no_tensors;
  if (arch && *arch == "mistral") {
    return eredu::model::mistral::Family::read_config(*contents, no_tensors);
  }
  return eredu::model::llama::Family::read_config(*contents, no_tensors);
}

void expect_key_error(const TinyLlama& t, const std::string& key, ErrorCode code) {
  auto config = read(t);
  ASSERT_FALSE(config.has_value()) << "expected an error naming " << key;
  EXPECT_EQ(config.error().code(), code) << config.error().what();
  EXPECT_EQ(config.error().subject(), key) << config.error().what();
  EXPECT_NE(config.error().what().find(key), std::string::npos) << config.error().what();
}

TEST(LlamaConfig, ValidMetadataNormalizesEveryField) {
  TinyLlama t;
  t.metadata["rope.dimension_count"] = GgufValue(std::uint32_t{2});
  auto c = read(t);
  ASSERT_TRUE(c.has_value()) << c.error().what();
  EXPECT_EQ(c->n_layer, 2u);
  EXPECT_EQ(c->n_embd, 8u);
  EXPECT_EQ(c->n_ff, 16u);
  EXPECT_EQ(c->n_head, 2u);
  EXPECT_EQ(c->n_head_kv, 1u);
  EXPECT_EQ(c->head_dim, 4u);
  EXPECT_EQ(c->n_rot, 2u);
  EXPECT_EQ(c->n_ctx_train, 32u);
  EXPECT_EQ(c->n_vocab, 10u);
  EXPECT_FLOAT_EQ(c->rms_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c->rope_freq_base, 10000.0f);
  EXPECT_FLOAT_EQ(c->rope_freq_scale, 1.0f);
}

TEST(LlamaConfig, MissingHeadCountKvDefaultsToHeadCountAndRopeDimsToHeadDim) {
  TinyLlama t;
  t.metadata.erase("attention.head_count_kv");
  auto c = read(t);
  ASSERT_TRUE(c.has_value()) << c.error().what();
  EXPECT_EQ(c->n_head_kv, 2u);
  EXPECT_EQ(c->n_rot, 4u);
}

TEST(LlamaConfig, MistralArchitectureReadsMistralPrefixedKeys) {
  TinyLlama t;
  t.architecture = "mistral";
  auto c = read(t);
  ASSERT_TRUE(c.has_value()) << c.error().what();
  EXPECT_EQ(c->architecture, "mistral");
}

TEST(LlamaConfig, MissingArchitectureIsUnsupported) {
  eredu::checkpoint::GgufWriter w;
  w.add_metadata("llama.block_count", GgufValue(std::uint32_t{2}));
  auto image = w.build();
  auto file = eredu::checkpoint::MappedFile::from_bytes(image->bytes, "x");
  auto contents = eredu::checkpoint::parse_gguf_contents(*file);
  ASSERT_TRUE(contents.has_value());
  auto c = eredu::model::llama::Family::read_config(**contents, eredu::checkpoint::TensorCatalog{});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(c.error().subject(), "general.architecture");
}

TEST(LlamaConfig, OtherArchitectureIsUnsupportedNamingIt) {
  TinyLlama t;
  t.architecture = "gpt2";
  auto c = read(t);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(c.error().what().find("gpt2"), std::string::npos);
}

TEST(LlamaConfig, MissingBlockCountNamesTheKey) {
  TinyLlama t;
  t.metadata.erase("block_count");
  expect_key_error(t, "llama.block_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, BlockCountStoredAsStringIsATypeErrorNamingTheKey) {
  TinyLlama t;
  t.metadata["block_count"] = GgufValue("two");
  expect_key_error(t, "llama.block_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, ZeroBlockCountIsRejected) {
  TinyLlama t;
  t.metadata["block_count"] = GgufValue(std::uint32_t{0});
  expect_key_error(t, "llama.block_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, HugeBlockCountIsRejected) {
  TinyLlama t;
  t.metadata["block_count"] = GgufValue(std::uint64_t{1} << 40);
  expect_key_error(t, "llama.block_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, ZeroHeadCountIsRejectedBeforeAnyDivision) {
  TinyLlama t;
  t.metadata["attention.head_count"] = GgufValue(std::uint32_t{0});
  expect_key_error(t, "llama.attention.head_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, ZeroKvHeadCountIsRejected) {
  TinyLlama t;
  t.metadata["attention.head_count_kv"] = GgufValue(std::uint32_t{0});
  expect_key_error(t, "llama.attention.head_count_kv", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, EmbeddingNotDivisibleByHeadCountIsRejected) {
  TinyLlama t;
  t.metadata["attention.head_count"] = GgufValue(std::uint32_t{3});
  t.metadata["attention.head_count_kv"] = GgufValue(std::uint32_t{3});
  expect_key_error(t, "llama.attention.head_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, HeadCountNotAMultipleOfKvHeadsIsRejected) {
  TinyLlama t;
  t.metadata["attention.head_count"] = GgufValue(std::uint32_t{4});
  t.metadata["attention.head_count_kv"] = GgufValue(std::uint32_t{3});
  expect_key_error(t, "llama.attention.head_count_kv", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, RopeDimensionsBeyondTheHeadDimensionAreRejected) {
  TinyLlama t;
  t.metadata["rope.dimension_count"] = GgufValue(std::uint32_t{6});
  expect_key_error(t, "llama.rope.dimension_count", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, MissingRmsEpsilonNamesTheKey) {
  TinyLlama t;
  t.metadata.erase("attention.layer_norm_rms_epsilon");
  expect_key_error(t, "llama.attention.layer_norm_rms_epsilon", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, NanRmsEpsilonIsRejected) {
  TinyLlama t;
  t.metadata["attention.layer_norm_rms_epsilon"] =
      GgufValue(std::numeric_limits<float>::quiet_NaN());
  expect_key_error(t, "llama.attention.layer_norm_rms_epsilon", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, NanRopeBaseIsRejected) {
  TinyLlama t;
  t.metadata["rope.freq_base"] = GgufValue(std::numeric_limits<float>::quiet_NaN());
  expect_key_error(t, "llama.rope.freq_base", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, ZeroContextLengthIsRejected) {
  TinyLlama t;
  t.metadata["context_length"] = GgufValue(std::uint32_t{0});
  expect_key_error(t, "llama.context_length", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, HugeVocabularyIsRejected) {
  TinyLlama t;
  t.metadata["vocab_size"] = GgufValue(std::uint32_t{1u << 30});
  expect_key_error(t, "llama.vocab_size", ErrorCode::kInvalidModel);
}

TEST(LlamaConfig, LinearRopeScalingSetsTheInverseFrequencyScale) {
  TinyLlama t;
  t.metadata["rope.scaling.type"] = GgufValue("linear");
  t.metadata["rope.scaling.factor"] = GgufValue(4.0f);
  auto c = read(t);
  ASSERT_TRUE(c.has_value()) << c.error().what();
  EXPECT_FLOAT_EQ(c->rope_freq_scale, 0.25f);
}

TEST(LlamaConfig, UnknownRopeScalingTypeIsUnsupportedNamingTheKey) {
  TinyLlama t;
  t.metadata["rope.scaling.type"] = GgufValue("yarn");
  expect_key_error(t, "llama.rope.scaling.type", ErrorCode::kUnsupported);
}

}  // namespace
