// make_tokenizer_from_gguf: the tokenizer.ggml.* keys of GGUF files written by the test (good
// and malformed, reliability.md G50-G54, G57) and of the real vocabulary files.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/text/bpe_tokenizer.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "shared_data.hpp"

namespace {

using eredu::ErrorCode;
using eredu::checkpoint::GgufArray;
using eredu::checkpoint::GgufValue;
using eredu::checkpoint::GgufWriter;
using eredu::text::TokenId;
using Ids = std::vector<TokenId>;

constexpr const char* kFixtureName = "vocab-fixture.gguf";

// A valid small llama vocabulary: <unk> <s> </s> <0x00>..<0xFF> a b ab ▁a.
struct VocabFixture {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;

  VocabFixture() {
    add("<unk>", 0, 2);
    add("<s>", 0, 3);
    add("</s>", 0, 3);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      add(name, 0, 6);
    }
    add("a", -1, 1);
    add("b", -1, 1);
    add("ab", -0.5F, 1);
    add("\xE2\x96\x81"
        "a",
        -0.25F, 1);
  }
  void add(const std::string& token, float score, std::int32_t type) {
    tokens.push_back(token);
    scores.push_back(score);
    types.push_back(type);
  }
  [[nodiscard]] std::size_t size() const { return tokens.size(); }
  // A writer with the three arrays and the model key; tests add or replace the rest.
  [[nodiscard]] GgufWriter writer(bool with_scores = true, bool with_types = true) const {
    GgufWriter writer;
    writer.add_metadata("general.architecture", GgufValue("llama"));
    writer.add_metadata("tokenizer.ggml.model", GgufValue("llama"));
    writer.add_metadata("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings(tokens)));
    if (with_scores) writer.add_metadata("tokenizer.ggml.scores", GgufValue(GgufArray::of(scores)));
    if (with_types) {
      writer.add_metadata("tokenizer.ggml.token_type", GgufValue(GgufArray::of(types)));
    }
    return writer;
  }
};

// Parses what `writer` builds; the contents are kept alive by the returned pointer.
std::shared_ptr<const eredu::checkpoint::GgufContents> parse(const GgufWriter& writer) {
  auto image = writer.build();
  EXPECT_TRUE(image.has_value());
  if (!image) return nullptr;
  const auto file = eredu::checkpoint::MappedFile::from_bytes(image->bytes, kFixtureName);
  auto contents = eredu::checkpoint::parse_gguf_contents(*file);
  EXPECT_TRUE(contents.has_value()) << contents.error().what();
  return contents ? *contents : nullptr;
}

eredu::Error expect_error(const GgufWriter& writer, ErrorCode code, const std::string& subject) {
  const auto contents = parse(writer);
  if (!contents) return eredu::Error(ErrorCode::kInternal, "fixture did not parse");
  const auto made = eredu::text::make_tokenizer_from_gguf(*contents);
  if (made) {
    ADD_FAILURE() << "a bad vocabulary was accepted";
    return eredu::Error(ErrorCode::kInternal, "accepted");
  }
  EXPECT_EQ(made.error().code(), code) << made.error().what();
  EXPECT_EQ(made.error().subject(), subject) << made.error().what();
  EXPECT_EQ(made.error().path(), kFixtureName) << made.error().what();
  return made.error();
}

TEST(GgufTokenizer, AWellFormedVocabularyBuildsWithLlamaDefaults) {
  VocabFixture fixture;
  const auto contents = parse(fixture.writer());
  ASSERT_NE(contents, nullptr);
  const auto made = eredu::text::make_tokenizer_from_gguf(*contents);
  ASSERT_TRUE(made.has_value()) << made.error().what();
  const auto& t = **made;
  EXPECT_EQ(t.kind(), eredu::text::TokenizerKind::kSentencePiece);
  EXPECT_EQ(t.vocab_size(), fixture.size());
  // No special-id keys: llama.cpp's defaults bos 1, eos 2, unk 0; BOS added, space prefix on.
  EXPECT_EQ(t.special_tokens().bos, 1);
  EXPECT_EQ(t.special_tokens().eos, 2);
  EXPECT_EQ(t.special_tokens().unk, 0);
  EXPECT_FALSE(t.special_tokens().pad.has_value());
  EXPECT_TRUE(t.adds_bos());
  EXPECT_FALSE(t.adds_eos());
  // "ab" -> "▁ab": ▁a (-0.25) beats ab (-0.5), leaving b.
  const auto space_a = static_cast<TokenId>(fixture.size() - 1);
  const auto b = static_cast<TokenId>(fixture.size() - 3);
  EXPECT_EQ(t.encode("ab").value(), (Ids{1, space_a, b}));
}

TEST(GgufTokenizer, ExplicitFlagsAndIdsOverrideTheDefaults) {
  VocabFixture fixture;
  auto writer = fixture.writer();
  writer.add_metadata("tokenizer.ggml.bos_token_id", GgufValue(std::uint32_t{2}));
  writer.add_metadata("tokenizer.ggml.eos_token_id", GgufValue(std::int32_t{1}));
  writer.add_metadata("tokenizer.ggml.add_bos_token", GgufValue(false));
  writer.add_metadata("tokenizer.ggml.add_eos_token", GgufValue(true));
  writer.add_metadata("tokenizer.ggml.add_space_prefix", GgufValue(false));
  const auto contents = parse(writer);
  ASSERT_NE(contents, nullptr);
  const auto made = eredu::text::make_tokenizer_from_gguf(*contents);
  ASSERT_TRUE(made.has_value()) << made.error().what();
  const auto ab = static_cast<TokenId>(fixture.size() - 2);
  EXPECT_EQ((*made)->encode("ab").value(), (Ids{ab, 1}));
}

TEST(GgufTokenizer, AllOnesPaddingIdMeansNoPaddingToken) {
  VocabFixture fixture;
  auto writer = fixture.writer();
  writer.add_metadata("tokenizer.ggml.padding_token_id", GgufValue(std::uint32_t{0xFFFFFFFFu}));
  const auto contents = parse(writer);
  ASSERT_NE(contents, nullptr);
  const auto made = eredu::text::make_tokenizer_from_gguf(*contents);
  ASSERT_TRUE(made.has_value()) << made.error().what();
  EXPECT_FALSE((*made)->special_tokens().pad.has_value());
}

TEST(GgufTokenizer, ScoresStoredAsU8AreRejectedBeforeAnyElementIsRead) {
  VocabFixture fixture;
  auto writer = fixture.writer(/*with_scores=*/false);
  writer.add_metadata("tokenizer.ggml.scores",
                      GgufValue(GgufArray::of(std::vector<std::uint8_t>(fixture.size(), 0))));
  const auto error = expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.scores");
  EXPECT_NE(error.what().find("u8"), std::string::npos) << error.what();
  EXPECT_NE(error.what().find("f32"), std::string::npos) << error.what();
}

TEST(GgufTokenizer, TokensStoredAsIntegersAreRejected) {
  GgufWriter writer;
  writer.add_metadata("tokenizer.ggml.model", GgufValue("llama"));
  writer.add_metadata("tokenizer.ggml.tokens",
                      GgufValue(GgufArray::of(std::vector<std::int32_t>{1, 2, 3})));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.tokens");
}

TEST(GgufTokenizer, TokenTypesStoredAsFloatsAreRejected) {
  VocabFixture fixture;
  auto writer = fixture.writer(true, /*with_types=*/false);
  writer.add_metadata("tokenizer.ggml.token_type",
                      GgufValue(GgufArray::of(std::vector<float>(fixture.size(), 1.0F))));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.token_type");
}

TEST(GgufTokenizer, FewerScoresThanTokensIsRejected) {
  VocabFixture fixture;
  auto writer = fixture.writer(/*with_scores=*/false);
  writer.add_metadata("tokenizer.ggml.scores",
                      GgufValue(GgufArray::of(std::vector<float>(fixture.size() - 1, 0.0F))));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.scores");
}

TEST(GgufTokenizer, MoreTokenTypesThanTokensIsRejected) {
  VocabFixture fixture;
  auto writer = fixture.writer(true, /*with_types=*/false);
  writer.add_metadata("tokenizer.ggml.token_type",
                      GgufValue(GgufArray::of(std::vector<std::int32_t>(fixture.size() + 1, 1))));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.token_type");
}

TEST(GgufTokenizer, BosIdEqualToTheVocabularySizeIsRejected) {
  VocabFixture fixture;
  auto writer = fixture.writer();
  writer.add_metadata("tokenizer.ggml.bos_token_id",
                      GgufValue(static_cast<std::uint32_t>(fixture.size())));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.bos_token_id");
}

TEST(GgufTokenizer, NegativeEosIdOtherThanMinusOneIsRejected) {
  VocabFixture fixture;
  auto writer = fixture.writer();
  writer.add_metadata("tokenizer.ggml.eos_token_id", GgufValue(std::int32_t{-7}));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.eos_token_id");
}

TEST(GgufTokenizer, SpecialIdStoredAsAStringIsATypeError) {
  VocabFixture fixture;
  auto writer = fixture.writer();
  writer.add_metadata("tokenizer.ggml.unknown_token_id", GgufValue("0"));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.unknown_token_id");
}

TEST(GgufTokenizer, AddBosWithoutABosIdIsRejectedAtLoad) {
  VocabFixture fixture;
  auto writer = fixture.writer();
  writer.add_metadata("tokenizer.ggml.bos_token_id", GgufValue(std::uint32_t{0xFFFFFFFFu}));
  writer.add_metadata("tokenizer.ggml.add_bos_token", GgufValue(true));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.add_bos_token");
}

TEST(GgufTokenizer, MalformedByteTokenIsRejected) {
  VocabFixture fixture;
  fixture.add("<0xZZ>", 0, 6);
  expect_error(fixture.writer(), ErrorCode::kInvalidModel, "tokenizer.ggml.tokens");
}

TEST(GgufTokenizer, DuplicateTokenStringsAreRejected) {
  VocabFixture fixture;
  fixture.add("ab", -3, 1);
  expect_error(fixture.writer(), ErrorCode::kDuplicate, "tokenizer.ggml.tokens");
}

TEST(GgufTokenizer, UnknownTokenizerModelsAreReportedUnsupportedNamingTheSupportedOnes) {
  GgufWriter writer;
  writer.add_metadata("tokenizer.ggml.model", GgufValue("t5"));
  const auto error = expect_error(writer, ErrorCode::kUnsupported, "tokenizer.ggml.model");
  EXPECT_NE(error.message().find("'t5'"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("gpt2"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("bert"), std::string::npos) << error.message();
}

// A tiny byte-level BPE vocabulary: the 256 byte stand-ins and "ab".
GgufWriter bpe_writer(GgufValue merges = GgufValue(GgufArray::of_strings(std::vector<std::string>{
                          "a b"}))) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.emplace_back(eredu::text::byte_to_unicode(static_cast<std::uint8_t>(b)));
  tokens.emplace_back("ab");
  GgufWriter writer;
  writer.add_metadata("tokenizer.ggml.model", GgufValue("gpt2"));
  writer.add_metadata("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings(tokens)));
  writer.add_metadata("tokenizer.ggml.merges", std::move(merges));
  writer.add_metadata("tokenizer.ggml.bos_token_id", GgufValue(std::uint32_t{0}));
  writer.add_metadata("tokenizer.ggml.eos_token_id", GgufValue(std::uint32_t{0}));
  return writer;
}

TEST(GgufTokenizer, AWellFormedBpeVocabularyBuildsAndMerges) {
  const auto contents = parse(bpe_writer());
  ASSERT_NE(contents, nullptr);
  const auto made = eredu::text::make_tokenizer_from_gguf(*contents);
  ASSERT_TRUE(made.has_value()) << made.error().what();
  EXPECT_EQ((*made)->kind(), eredu::text::TokenizerKind::kBytePairEncoding);
  EXPECT_FALSE((*made)->adds_bos());  // llama.cpp's default for pre "default"
  // Token i is byte i's stand-in: "ab" merges, " a" is the space and 'a' (no "Ġ a" merge).
  EXPECT_EQ((*made)->encode("ab a").value(), (Ids{256, ' ', 'a'}));
  EXPECT_EQ((*made)->decode(Ids{256, ' ', 'a'}).value(), "ab a");
}

TEST(GgufTokenizer, UnknownPreTokenizerIsAnErrorNamingItAndListingTheKnownOnes) {
  auto writer = bpe_writer();
  writer.add_metadata("tokenizer.ggml.pre", GgufValue("no-such-pre"));
  const auto error = expect_error(writer, ErrorCode::kUnsupported, "tokenizer.ggml.pre");
  EXPECT_NE(error.message().find("'no-such-pre'"), std::string::npos) << error.message();
  for (const char* known : {"llama-bpe", "qwen2", "gpt-2", "deepseek-v3", "tekken", "gpt-4o"}) {
    EXPECT_NE(error.message().find(known), std::string::npos) << known << ": " << error.message();
  }
}

TEST(GgufTokenizer, BpeMergesStoredAsIntegersAreATypeErrorNamingTheKey) {
  auto writer = bpe_writer(GgufValue(GgufArray::of(std::vector<std::int32_t>{1, 2})));
  const auto error = expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.merges");
  EXPECT_NE(error.message().find("array of string"), std::string::npos) << error.message();
}

TEST(GgufTokenizer, BpeVocabularyWithoutMergesIsRejectedNamingTheKey) {
  std::vector<std::string> tokens{"a", "b"};
  GgufWriter writer;
  writer.add_metadata("tokenizer.ggml.model", GgufValue("gpt2"));
  writer.add_metadata("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings(tokens)));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.merges");
}

TEST(GgufTokenizer, PreStoredAsAnIntegerIsATypeErrorNamingTheKey) {
  auto writer = bpe_writer();
  writer.add_metadata("tokenizer.ggml.pre", GgufValue(std::uint32_t{7}));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.pre");
}

TEST(GgufTokenizer, IgnoreMergesStoredAsAStringIsATypeErrorNamingTheKey) {
  auto writer = bpe_writer();
  writer.add_metadata("tokenizer.ggml.ignore_merges", GgufValue("yes"));
  expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.ignore_merges");
}

TEST(GgufTokenizer, AMergeWithoutASpaceIsRejectedNamingItsRank) {
  auto writer = bpe_writer(GgufValue(GgufArray::of_strings(std::vector<std::string>{"a b", "ab"})));
  const auto error = expect_error(writer, ErrorCode::kInvalidModel, "tokenizer.ggml.merges");
  EXPECT_NE(error.message().find("merge 1"), std::string::npos) << error.message();
}

TEST(GgufTokenizer, AFileWithoutTokenizerIsNotFound) {
  GgufWriter writer;
  writer.add_metadata("general.architecture", GgufValue("llama"));
  expect_error(writer, ErrorCode::kNotFound, "tokenizer.ggml.model");
}

TEST(GgufTokenizer, MissingTokensArrayIsNotFound) {
  GgufWriter writer;
  writer.add_metadata("tokenizer.ggml.model", GgufValue("llama"));
  expect_error(writer, ErrorCode::kNotFound, "tokenizer.ggml.tokens");
}

TEST(GgufTokenizer, TheSharedLlamaSpmVocabularyLoadsThroughTheGgufReader) {
  const std::filesystem::path path =
      eredu::testing::testdata_dir() / "vocab" / "ggml-vocab-llama-spm.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  const auto file = eredu::checkpoint::GgufFile::open(path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const auto made = eredu::text::make_tokenizer_from_gguf(file->contents());
  ASSERT_TRUE(made.has_value()) << made.error().what();
  EXPECT_EQ((*made)->vocab_size(), 32000U);
  EXPECT_EQ((*made)->encode("Hello world", {.add_bos = false}).value(), (Ids{15043, 3186}));
}

TEST(GgufTokenizer, TheSharedBpeAndWordPieceVocabulariesLoadAsTheirKinds) {
  using eredu::text::TokenizerKind;
  for (const auto& [name, kind] :
       {std::pair{"ggml-vocab-gpt-2.gguf", TokenizerKind::kBytePairEncoding},
        std::pair{"ggml-vocab-bert-bge.gguf", TokenizerKind::kWordPiece}}) {
    const std::filesystem::path path = eredu::testing::testdata_dir() / "vocab" / name;
    EREDU_REQUIRE_SHARED_PATH(path);
    const auto file = eredu::checkpoint::GgufFile::open(path);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    const auto made = eredu::text::make_tokenizer_from_gguf(file->contents());
    ASSERT_TRUE(made.has_value()) << name << ": " << made.error().what();
    EXPECT_EQ((*made)->kind(), kind) << name;
  }
}

}  // namespace
