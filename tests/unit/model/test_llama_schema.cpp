// The llama tensor schema: shapes derived from the config are checked against the catalog (G47),
// and an absent output.weight becomes an alias of token_embd.weight.
#include <gtest/gtest.h>

#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/model/llama/family.hpp"
#include "tiny_llama.hpp"

namespace {

using eredu::testing::TinyLlama;

eredu::Result<std::vector<eredu::model::ParameterSchema>> schema_of(const TinyLlama& t,
                                                                    const char* file) {
  const auto path = t.write(file);
  auto source = eredu::checkpoint::GgufCheckpointSource::open(path);
  EXPECT_TRUE(source.has_value());
  auto config = eredu::model::llama::Family::read_config(source->primary(), source->catalog());
  EXPECT_TRUE(config.has_value());
  auto schema = eredu::model::llama::Family::schema(*config, source->catalog());
  std::filesystem::remove(path);
  return schema;
}

TEST(LlamaSchema, CompleteCheckpointListsEveryParameterWithItsShape) {
  TinyLlama t;
  auto schema = schema_of(t, "complete.gguf");
  ASSERT_TRUE(schema.has_value()) << schema.error().what();
  EXPECT_EQ(schema->size(), 3u + 9u * 2u);
  for (const auto& p : *schema) {
    EXPECT_EQ(p.shape, t.shapes.at(p.id)) << p.id;
    EXPECT_FALSE(p.alias_of.has_value()) << p.id;
  }
}

TEST(LlamaSchema, WrongShapeNamesTensorExpectedAndActualShapes) {
  TinyLlama t;
  t.shapes["blk.1.attn_k.weight"] = {8, 8};  // as if head_count_kv were 2
  auto schema = schema_of(t, "wrong_shape.gguf");
  ASSERT_FALSE(schema.has_value());
  EXPECT_EQ(schema.error().code(), eredu::ErrorCode::kInvalidModel);
  EXPECT_EQ(schema.error().subject(), "blk.1.attn_k.weight");
  EXPECT_NE(
      schema.error().what().find("tensor blk.1.attn_k.weight has wrong shape; expected [4, 8], "
                                 "got [8, 8]"),
      std::string::npos)
      << schema.error().what();
}

TEST(LlamaSchema, TokenEmbeddingRowsThatContradictTheVocabularyAreRejected) {
  TinyLlama t;
  t.shapes["token_embd.weight"] = {12, 8};
  auto schema = schema_of(t, "vocab_mismatch.gguf");
  ASSERT_FALSE(schema.has_value());
  EXPECT_EQ(schema.error().subject(), "token_embd.weight");
}

TEST(LlamaSchema, MissingLayerTensorIsNamed) {
  TinyLlama t;
  t.shapes.erase("blk.0.ffn_up.weight");
  auto schema = schema_of(t, "missing.gguf");
  ASSERT_FALSE(schema.has_value());
  EXPECT_EQ(schema.error().subject(), "blk.0.ffn_up.weight");
  EXPECT_NE(schema.error().what().find("missing"), std::string::npos);
}

TEST(LlamaSchema, AbsentOutputIsTiedToTokenEmbedding) {
  TinyLlama t;
  t.tied_output = true;
  auto schema = schema_of(t, "tied.gguf");
  ASSERT_TRUE(schema.has_value()) << schema.error().what();
  const auto it = std::find_if(schema->begin(), schema->end(),
                               [](const auto& p) { return p.id == "output.weight"; });
  ASSERT_NE(it, schema->end());
  ASSERT_TRUE(it->alias_of.has_value());
  EXPECT_EQ(*it->alias_of, "token_embd.weight");
}

}  // namespace
