// The tokenizer against independent references: llama.cpp's tokenizer test vectors (expected ids
// from Hugging Face `tokenizers`) for the SentencePiece, byte-level BPE and WordPiece vocabularies,
// and the prompts and generated text llama.cpp recorded for stories260K.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "eredu/text/streaming_detokenizer.hpp"
#include "shared_data.hpp"
#include "shared_vocab.hpp"

namespace {

using eredu::text::TokenId;

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The .inp format of llama.cpp's test-tokenizer-0: inputs separated by the separator LINE, so the
// newline before "__ggml_vocab_test__" belongs to the separator, not to the input.
std::vector<std::string> split_inputs(const std::string& text) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  std::size_t last = 0;
  for (std::size_t pos = text.find(sep); pos != std::string::npos; pos = text.find(sep, last)) {
    inputs.push_back(text.substr(last, pos - last));
    last = pos + sep.size();
  }
  return inputs;
}

std::vector<std::vector<TokenId>> read_outputs(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<TokenId>> outputs;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::vector<TokenId> ids;
    for (TokenId id = 0; fields >> id;)
      ids.push_back(id);
    outputs.push_back(std::move(ids));
  }
  return outputs;
}

std::shared_ptr<const eredu::text::Tokenizer> load(const std::filesystem::path& gguf) {
  return eredu::testing::load_shared_tokenizer(gguf);
}

std::string describe(const std::vector<TokenId>& ids) {
  std::string out;
  for (TokenId id : ids)
    out += " " + std::to_string(id);
  return out;
}

TEST(LlamaSpmVectors, EveryInputEncodesToTheIdsHuggingFaceProduced) {
  const auto dir = eredu::testing::testdata_dir() / "vocab";
  const auto gguf = dir / "ggml-vocab-llama-spm.gguf";
  EREDU_REQUIRE_SHARED_PATH(gguf);
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf.inp");
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf.out");
  const auto tokenizer = load(gguf);
  ASSERT_NE(tokenizer, nullptr);
  ASSERT_EQ(tokenizer->vocab_size(), 32000U);

  const auto inputs = split_inputs(read_all(dir / "ggml-vocab-llama-spm.gguf.inp"));
  const auto outputs = read_outputs(dir / "ggml-vocab-llama-spm.gguf.out");
  ASSERT_EQ(inputs.size(), outputs.size());
  ASSERT_GE(inputs.size(), 40U);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto ids = tokenizer->encode(inputs[i], {.add_bos = false, .add_eos = false});
    ASSERT_TRUE(ids.has_value()) << ids.error().what();
    EXPECT_EQ(*ids, outputs[i]) << "input " << i << ": '" << inputs[i]
                                << "'\n got:     " << describe(*ids)
                                << "\n expected:" << describe(outputs[i]);
  }
}

TEST(LlamaSpmVectors, DecodingTheExpectedIdsGivesBackTheInputAfterTheSpacePrefix) {
  const auto dir = eredu::testing::testdata_dir() / "vocab";
  const auto gguf = dir / "ggml-vocab-llama-spm.gguf";
  EREDU_REQUIRE_SHARED_PATH(gguf);
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf.inp");
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf.out");
  const auto tokenizer = load(gguf);
  ASSERT_NE(tokenizer, nullptr);
  const auto inputs = split_inputs(read_all(dir / "ggml-vocab-llama-spm.gguf.inp"));
  const auto outputs = read_outputs(dir / "ggml-vocab-llama-spm.gguf.out");
  ASSERT_EQ(inputs.size(), outputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    // SentencePiece is lossless: the pieces are the input with a space in front.
    const auto text = tokenizer->decode(outputs[i]);
    ASSERT_TRUE(text.has_value()) << text.error().what();
    EXPECT_EQ(*text, inputs[i].empty() ? "" : " " + inputs[i]) << "input " << i;
    const auto stripped = tokenizer->decode(outputs[i], {.strip_leading_space = true});
    ASSERT_TRUE(stripped.has_value()) << stripped.error().what();
    EXPECT_EQ(*stripped, inputs[i]) << "input " << i;
  }
}

TEST(LlamaSpmVectors, RandomByteStringsRoundTripThroughEncodeAndDecode) {
  // SentencePiece with byte fallback is lossless: decode(encode(s)) is " " + s for any valid
  // UTF-8 without U+2581 itself. 300 seeded random strings of ASCII and multi-byte characters.
  // (Invalid UTF-8 is split the way llama.cpp splits it, by lead-byte length, so a stray lead
  // byte can swallow part of an escaped space; there only "encodes without error" holds.)
  const std::filesystem::path path =
      eredu::testing::testdata_dir() / "vocab" / "ggml-vocab-llama-spm.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  const auto tokenizer = load(path);
  ASSERT_NE(tokenizer, nullptr);
  std::mt19937 rng(12345);
  const std::vector<std::string> alphabet = {"a",
                                             "e",
                                             "t",
                                             " ",
                                             "  ",
                                             "\n",
                                             "\t",
                                             "Hello",
                                             "\xC3\xA9",
                                             "\xE2\x82\xAC",
                                             "\xF0\x9F\x98\x80",
                                             "\xE4\xB8\xAD"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int parts = static_cast<int>(rng() % 24) + 1;
    for (int p = 0; p < parts; ++p)
      text += alphabet[rng() % alphabet.size()];
    const auto ids = tokenizer->encode(text, {.add_bos = false});
    ASSERT_TRUE(ids.has_value()) << ids.error().what();
    const auto back = tokenizer->decode(*ids);
    ASSERT_TRUE(back.has_value()) << back.error().what();
    ASSERT_EQ(*back, " " + text) << "round " << round;
  }
}

TEST(LlamaSpmVectors, InvalidUtf8EncodesToIdsInRangeWithoutError) {
  const std::filesystem::path path =
      eredu::testing::testdata_dir() / "vocab" / "ggml-vocab-llama-spm.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  const auto tokenizer = load(path);
  ASSERT_NE(tokenizer, nullptr);
  std::mt19937 rng(777);
  for (int round = 0; round < 200; ++round) {
    std::string text(rng() % 40, '\0');
    for (char& c : text)
      c = static_cast<char>(rng() & 0xFF);
    const auto ids = tokenizer->encode(text, {.add_bos = false, .parse_special = true});
    ASSERT_TRUE(ids.has_value()) << ids.error().what();
    for (TokenId id : *ids)
      ASSERT_TRUE(tokenizer->check_token(id).has_value());
  }
}

TEST(LlamaSpmVectors, OneTokenizerEncodesTheVectorsFromFourThreadsAtOnceWithTheSameResults) {
  // A Tokenizer is immutable: sessions share one. Run under TSan in CI to catch races.
  const auto dir = eredu::testing::testdata_dir() / "vocab";
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf");
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf.inp");
  EREDU_REQUIRE_SHARED_PATH(dir / "ggml-vocab-llama-spm.gguf.out");
  const auto tokenizer = load(dir / "ggml-vocab-llama-spm.gguf");
  ASSERT_NE(tokenizer, nullptr);
  const auto inputs = split_inputs(read_all(dir / "ggml-vocab-llama-spm.gguf.inp"));
  const auto outputs = read_outputs(dir / "ggml-vocab-llama-spm.gguf.out");
  ASSERT_EQ(inputs.size(), outputs.size());
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          const auto ids = tokenizer->encode(inputs[i], {.add_bos = false});
          if (!ids || *ids != outputs[i]) ++mismatches[t];
        }
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// One test per vocabulary with .inp/.out vectors: every input encodes (without BOS) to exactly
// the ids of its line; the first mismatching line is reported.
class VocabularyVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabularyVectors, EveryInputEncodesToTheIdsHuggingFaceProduced) {
  const auto dir = eredu::testing::testdata_dir() / "vocab";
  const std::string name = "ggml-vocab-" + GetParam() + ".gguf";
  EREDU_REQUIRE_SHARED_PATH(dir / name);
  EREDU_REQUIRE_SHARED_PATH(dir / (name + ".inp"));
  EREDU_REQUIRE_SHARED_PATH(dir / (name + ".out"));
  const auto tokenizer = load(dir / name);
  ASSERT_NE(tokenizer, nullptr);
  const auto inputs = split_inputs(read_all(dir / (name + ".inp")));
  const auto outputs = read_outputs(dir / (name + ".out"));
  ASSERT_EQ(inputs.size(), outputs.size());
  ASSERT_GE(inputs.size(), 30U);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto ids = tokenizer->encode(inputs[i], {.add_bos = false, .add_eos = false});
    ASSERT_TRUE(ids.has_value()) << "line " << i + 1 << ": " << ids.error().what();
    ASSERT_EQ(*ids, outputs[i]) << "first mismatch at line " << i + 1 << " of " << name
                                << ".out, input '" << inputs[i] << "'\n got:     " << describe(*ids)
                                << "\n expected:" << describe(outputs[i]);
  }
}

TEST_P(VocabularyVectors, DecodingTheExpectedIdsGivesBackEveryByteLevelInput) {
  // Byte-level BPE is lossless: the pieces of the expected ids concatenate to the input.
  const auto dir = eredu::testing::testdata_dir() / "vocab";
  const std::string name = "ggml-vocab-" + GetParam() + ".gguf";
  EREDU_REQUIRE_SHARED_PATH(dir / (name + ".inp"));
  const auto tokenizer = load(dir / name);
  ASSERT_NE(tokenizer, nullptr);
  if (tokenizer->kind() != eredu::text::TokenizerKind::kBytePairEncoding) {
    GTEST_SKIP() << name << " is not byte-level BPE (its normalizer loses information)";
  }
  const auto inputs = split_inputs(read_all(dir / (name + ".inp")));
  const auto outputs = read_outputs(dir / (name + ".out"));
  ASSERT_EQ(inputs.size(), outputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto text = tokenizer->decode(outputs[i]);
    ASSERT_TRUE(text.has_value()) << text.error().what();
    EXPECT_EQ(*text, inputs[i]) << "line " << i + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedVocabularies, VocabularyVectors,
                         ::testing::Values("gpt-2", "deepseek-coder", "mpt", "starcoder", "refact",
                                           "bert-bge"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(VocabulariesWithoutVectors, BaichuanAndGptNeoxLoadAndRoundTripAscii) {
  for (const std::string name : {"baichuan", "gpt-neox"}) {
    const auto path = eredu::testing::testdata_dir() / "vocab" / ("ggml-vocab-" + name + ".gguf");
    EREDU_REQUIRE_SHARED_PATH(path);
    const auto tokenizer = load(path);
    ASSERT_NE(tokenizer, nullptr) << name;
    const auto ids = tokenizer->encode("Hello world", {.add_bos = false});
    ASSERT_TRUE(ids.has_value()) << name << ": " << ids.error().what();
    EXPECT_FALSE(ids->empty()) << name;
    const auto text = tokenizer->decode(*ids, {.strip_leading_space = true});
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(*text, "Hello world") << name;
  }
}

class Stories260K : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto model = eredu::testing::models_dir() / "stories260K.gguf";
    const auto reference = eredu::testing::reference_dir() / "stories260K-F32-greedy.json";
    EREDU_REQUIRE_SHARED_PATH(model);
    EREDU_REQUIRE_SHARED_PATH(reference);
    tokenizer_ = load(model);
    ASSERT_NE(tokenizer_, nullptr);
    reference_ = nlohmann::json::parse(read_all(reference));
    ASSERT_EQ(reference_.at("cases").size(), 5U);
  }
  std::shared_ptr<const eredu::text::Tokenizer> tokenizer_;
  nlohmann::json reference_;
};

TEST_F(Stories260K, PromptsEncodeWithBosToLlamaCppPromptTokens) {
  for (const auto& c : reference_.at("cases")) {
    const auto prompt = c.at("prompt").get<std::string>();
    const auto expected = c.at("prompt_tokens").get<std::vector<TokenId>>();
    const auto ids = tokenizer_->encode(prompt);  // default: BOS as the vocabulary asks
    ASSERT_TRUE(ids.has_value()) << ids.error().what();
    EXPECT_EQ(*ids, expected) << "prompt '" << prompt << "' got" << describe(*ids);
  }
}

TEST_F(Stories260K, GeneratedTokensDecodeToLlamaCppGeneratedText) {
  for (const auto& c : reference_.at("cases")) {
    const auto tokens = c.at("generated_tokens").get<std::vector<TokenId>>();
    const auto expected = c.at("generated_text").get<std::string>();
    const auto text = tokenizer_->decode(tokens);
    ASSERT_TRUE(text.has_value()) << text.error().what();
    EXPECT_EQ(*text, expected);
  }
}

TEST_F(Stories260K, StreamingTheGeneratedTokensGivesTheSameText) {
  for (const auto& c : reference_.at("cases")) {
    eredu::text::StreamingDetokenizer stream(*tokenizer_);
    std::string text;
    for (TokenId id : c.at("generated_tokens").get<std::vector<TokenId>>()) {
      auto piece = stream.push(id);
      ASSERT_TRUE(piece.has_value()) << piece.error().what();
      text += *piece;
    }
    text += stream.finish();
    EXPECT_EQ(text, c.at("generated_text").get<std::string>());
  }
}

}  // namespace
