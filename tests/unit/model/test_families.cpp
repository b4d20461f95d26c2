// The family registry and the decoder's family traits, from tiny GGUF files built here: each
// family reads its own keys, qwen3's head size may differ from embedding_length / head_count,
// qwen2's biases are part of its schema, and a backend without an optional operator a model
// needs is refused at admission, naming the operator, while other families still load on it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/model/admission.hpp"
#include "eredu/model/registry.hpp"
#include "eredu/runtime/load_model.hpp"
#include "tiny_llama.hpp"

namespace {

using eredu::ErrorCode;
using eredu::checkpoint::GgufValue;
using eredu::cpu::CpuBackend;
using eredu::cpu::CpuBackendOptions;
using eredu::testing::TinyLlama;

// A qwen3 file whose heads are 16 wide although embedding_length / head_count is 4.
TinyLlama wide_head_qwen3() {
  TinyLlama t;
  t.architecture = "qwen3";
  t.metadata["attention.key_length"] = GgufValue(std::uint32_t{16});
  t.metadata["attention.value_length"] = GgufValue(std::uint32_t{16});
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    t.shapes[b + "attn_q.weight"] = {32, 8};  // 2 heads x 16
    t.shapes[b + "attn_k.weight"] = {16, 8};  // 1 KV head x 16
    t.shapes[b + "attn_v.weight"] = {16, 8};
    t.shapes[b + "attn_output.weight"] = {8, 32};
    t.shapes[b + "attn_q_norm.weight"] = {16};
    t.shapes[b + "attn_k_norm.weight"] = {16};
  }
  return t;
}

TinyLlama qwen2_with_biases() {
  TinyLlama t;
  t.architecture = "qwen2";
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    t.shapes[b + "attn_q.bias"] = {8};
    t.shapes[b + "attn_k.bias"] = {4};
    t.shapes[b + "attn_v.bias"] = {4};
  }
  return t;
}

class Families : public ::testing::Test {
 protected:
  std::filesystem::path write(const TinyLlama& t, const char* name) {
    path_ = t.write(name);
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::filesystem::path path_;
};

TEST(FamilyRegistry, ListsEveryFamilyByItsGgufArchitectureName) {
  EXPECT_EQ(eredu::model::supported_architectures(), "llama, mistral, qwen2, qwen3");
  EXPECT_TRUE(eredu::model::is_supported_architecture("qwen3"));
  EXPECT_FALSE(eredu::model::is_supported_architecture("gpt2"));
  static_assert(eredu::model::Families::size == 4);
}

TEST_F(Families, AnUnregisteredArchitectureIsRefusedListingTheSupportedOnes) {
  TinyLlama t;
  t.architecture = "phi3";
  auto inspection = eredu::runtime::inspect_artifact(write(t, "phi3.gguf"));
  ASSERT_TRUE(inspection.has_value()) << inspection.error().what();
  auto admitted = eredu::model::read_model_admission("test", *inspection, 0);
  ASSERT_FALSE(admitted.has_value());
  EXPECT_EQ(admitted.error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(admitted.error().subject(), "general.architecture");
  EXPECT_NE(admitted.error().what().find("'phi3'"), std::string::npos);
  EXPECT_NE(admitted.error().what().find("llama, mistral, qwen2, qwen3"), std::string::npos);
}

TEST_F(Families, Qwen3HeadSizeComesFromKeyLengthNotEmbeddingOverHeads) {
  auto inspection = eredu::runtime::inspect_artifact(write(wide_head_qwen3(), "qwen3.gguf"));
  ASSERT_TRUE(inspection.has_value()) << inspection.error().what();
  auto admitted = eredu::model::read_model_admission("test", *inspection, 0);
  ASSERT_TRUE(admitted.has_value()) << admitted.error().what();
  EXPECT_EQ(admitted->geometry.head_dim, 16u);
  EXPECT_EQ(admitted->geometry.n_head_kv, 1u);
  const auto& config = std::get<eredu::model::decoder::DecoderConfig>(admitted->config);
  EXPECT_EQ(config.n_q(), 32u);
  EXPECT_TRUE(config.qk_norm);
  EXPECT_EQ(config.rotary_layout, eredu::RotaryLayout::kHalfSplit);
  EXPECT_TRUE(admitted->required_operators.has(eredu::OptionalOperator::kHeadRmsNorm));
}

TEST_F(Families, AWideHeadQwen3ModelRunsEndToEndOnTheCpu) {
  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}),
                                            write(wide_head_qwen3(), "qwen3_run.gguf"),
                                            eredu::cpu::CpuLoadOptions{});
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  auto sub = runtime->prefill(std::vector<std::uint32_t>{1, 5, 7});
  ASSERT_TRUE(sub.has_value()) << sub.error().what();
  auto logits = runtime->observe_output(sub->output);
  ASSERT_TRUE(logits.has_value());
  ASSERT_EQ(logits->size(), 10u);
  for (float v : *logits)
    EXPECT_TRUE(std::isfinite(v));
  auto next = runtime->decode(std::uint32_t{3});
  ASSERT_TRUE(next.has_value()) << next.error().what();
}

TEST_F(Families, ValueLengthOtherThanKeyLengthIsUnsupportedNamingTheKey) {
  TinyLlama t = wide_head_qwen3();
  t.metadata["attention.value_length"] = GgufValue(std::uint32_t{8});
  auto inspection = eredu::runtime::inspect_artifact(write(t, "qwen3_v.gguf"));
  ASSERT_TRUE(inspection.has_value());
  auto admitted = eredu::model::read_model_admission("test", *inspection, 0);
  ASSERT_FALSE(admitted.has_value());
  EXPECT_EQ(admitted.error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(admitted.error().subject(), "qwen3.attention.value_length");
}

TEST_F(Families, Qwen2WithoutItsQueryBiasIsAnInvalidModelNamingTheTensor) {
  TinyLlama t = qwen2_with_biases();
  t.shapes.erase("blk.1.attn_q.bias");
  auto inspection = eredu::runtime::inspect_artifact(write(t, "qwen2_nobias.gguf"));
  ASSERT_TRUE(inspection.has_value());
  auto admitted = eredu::model::read_model_admission("test", *inspection, 0);
  ASSERT_FALSE(admitted.has_value());
  EXPECT_EQ(admitted.error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(admitted.error().subject(), "blk.1.attn_q.bias");
}

TEST_F(Families, TheMistralFamilyReadsMistralPrefixedKeys) {
  TinyLlama t;
  t.architecture = "mistral";
  auto inspection = eredu::runtime::inspect_artifact(write(t, "mistral.gguf"));
  ASSERT_TRUE(inspection.has_value());
  auto admitted = eredu::model::read_model_admission("test", *inspection, 0);
  ASSERT_TRUE(admitted.has_value()) << admitted.error().what();
  EXPECT_EQ(eredu::model::Families::names[admitted->family], "mistral");
}

// The CPU backend with its optional operators withheld: the decoder still compiles against it.
struct CpuWithoutOptionalOperators : CpuBackend {
  static constexpr eredu::OperatorCapabilities operator_capabilities{};
};
static_assert(eredu::model::ModelBackend<CpuWithoutOptionalOperators>);

TEST_F(Families, ABackendWithoutBiasAddRefusesQwen2AtAdmissionNamingTheOperator) {
  auto inspection = eredu::runtime::inspect_artifact(write(qwen2_with_biases(), "qwen2.gguf"));
  ASSERT_TRUE(inspection.has_value());
  auto refused = eredu::runtime::select_family_preparation<CpuWithoutOptionalOperators>(
      "test backend", *inspection, eredu::runtime::LoadOptions{});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), ErrorCode::kCapabilityMissing);
  EXPECT_EQ(refused.error().subject(), "bias_add");
  // The same file is admitted where the operator exists.
  EXPECT_TRUE(eredu::runtime::select_family_preparation<CpuBackend>("cpu backend", *inspection,
                                                                    eredu::runtime::LoadOptions{})
                  .has_value());
}

TEST_F(Families, ABackendWithoutOptionalOperatorsStillRunsTheLlamaFamily) {
  auto inspection = eredu::runtime::inspect_artifact(write(TinyLlama{}, "llama.gguf"));
  ASSERT_TRUE(inspection.has_value());
  EXPECT_TRUE(eredu::runtime::select_family_preparation<CpuWithoutOptionalOperators>(
                  "test backend", *inspection, eredu::runtime::LoadOptions{})
                  .has_value());
}

}  // namespace
