// The synthesized vocabulary: laid out as stories260K's (specials, 256 byte tokens, then pieces
// with descending scores), loadable by eredu's SentencePiece tokenizer, which tokenizes text with
// it and falls back to byte tokens for what no piece covers.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "shared_data.hpp"
#include "synth_fixture.hpp"

namespace eredu::synth::testing {
namespace {

using checkpoint::GgufFile;

constexpr int kByteBase = 3;  // <0x00> is token 3

TEST_F(SynthTest, VocabularyHasTheSentencePieceLayoutAndDescendingScores) {
  auto file = GgufFile::open(write_tiny("Q8_0"));
  ASSERT_TRUE(file.has_value());
  const auto& c = file->contents();
  const auto tokens = c.get_array("tokenizer.ggml.tokens").value()->strings();
  const auto scores = c.get_array("tokenizer.ggml.scores").value()->values<float>().value();
  const auto types =
      c.get_array("tokenizer.ggml.token_type").value()->values<std::int32_t>().value();
  ASSERT_EQ(tokens.size(), 320u);
  ASSERT_EQ(scores.size(), 320u);
  ASSERT_EQ(types.size(), 320u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(types[0], 2);  // unknown
  EXPECT_EQ(types[1], 3);  // control
  EXPECT_EQ(types[2], 3);
  for (int b = 0; b < 256; ++b) {
    char expected[8];
    std::snprintf(expected, sizeof expected, "<0x%02X>", b);
    EXPECT_EQ(tokens[kByteBase + b], expected);
    EXPECT_EQ(types[kByteBase + b], 6);  // byte
  }
  for (std::size_t i = 259; i < tokens.size(); ++i) {
    EXPECT_EQ(types[i], 1) << i;  // normal
    if (i > 259) {
      EXPECT_LT(scores[i], scores[i - 1]) << i;
    }
  }
  EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size());
}

TEST_F(SynthTest, VocabularyMatchesStories260KInItsReservedPart) {
  const fs::path stories = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(stories);
  auto ours = GgufFile::open(write_tiny("F16"));
  auto reference = GgufFile::open(stories);
  ASSERT_TRUE(ours.has_value() && reference.has_value());
  const auto our_tokens = ours->contents().get_array("tokenizer.ggml.tokens").value()->strings();
  const auto ref_tokens =
      reference->contents().get_array("tokenizer.ggml.tokens").value()->strings();
  const auto our_types =
      ours->contents().get_array("tokenizer.ggml.token_type").value()->values<std::int32_t>();
  const auto ref_types =
      reference->contents().get_array("tokenizer.ggml.token_type").value()->values<std::int32_t>();
  for (std::size_t i = 0; i < 259; ++i) {
    EXPECT_EQ(our_tokens[i], ref_tokens[i]) << i;
    EXPECT_EQ(our_types.value()[i], ref_types.value()[i]) << i;
  }
}

TEST_F(SynthTest, TextTokenizerEncodesAndDecodesWithTheVocabulary) {
  // 2048 entries: past the single characters into "▁a".."▁z" and "aa".."zz", so pieces merge.
  const fs::path path = dir_ / "vocab2048.gguf";
  const RunResult r =
      run("--hidden 32 --layers 1 --heads 2 --ffn 32 --vocab 2048 --type Q8_0 -q -o '" +
          path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value());
  auto tokenizer = text::make_tokenizer_from_gguf(file->contents());
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error().what();
  const text::Tokenizer& tok = **tokenizer;
  EXPECT_EQ(tok.vocab_size(), 2048u);
  EXPECT_EQ(tok.token_text(259).value(), "\xE2\x96\x81");  // the first piece is "▁"
  EXPECT_EQ(tok.special_tokens().bos, 1);
  EXPECT_EQ(tok.special_tokens().eos, 2);
  EXPECT_TRUE(tok.adds_bos());

  const std::string text = "hello world";
  auto ids = tok.encode(text);
  ASSERT_TRUE(ids.has_value()) << ids.error().what();
  ASSERT_FALSE(ids->empty());
  EXPECT_EQ(ids->front(), 1);  // BOS
  for (std::size_t i = 1; i < ids->size(); ++i) {
    EXPECT_GE((*ids)[i], 259) << "lower-case text needs no byte fallback";
  }
  // "▁hello" needs pieces up to 3 characters ("▁he" + "ll" + "o" or the like): at most 8 tokens
  // for 11 characters plus the space prefix, against 12 unmerged.
  EXPECT_LE(ids->size(), 1u + 8u) << "pieces merge characters";
  text::DecodeOptions options;
  options.strip_leading_space = true;
  auto decoded = tok.decode(*ids, options);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, text);
}

TEST_F(SynthTest, CharactersOutsideThePiecesFallBackToByteTokens) {
  auto file = GgufFile::open(write_tiny("F16"));
  ASSERT_TRUE(file.has_value());
  auto tokenizer = text::make_tokenizer_from_gguf(file->contents());
  ASSERT_TRUE(tokenizer.has_value()) << tokenizer.error().what();
  const text::Tokenizer& tok = **tokenizer;
  const std::string euro = "\xE2\x82\xAC";  // U+20AC, no piece holds it
  text::EncodeOptions no_bos;
  no_bos.add_bos = false;
  auto ids = tok.encode(euro, no_bos);
  ASSERT_TRUE(ids.has_value()) << ids.error().what();
  // "▁" (the space prefix) is a piece; the euro sign is its three UTF-8 bytes.
  ASSERT_EQ(ids->size(), 4u);
  EXPECT_EQ(tok.token_text((*ids)[0]).value(), "\xE2\x96\x81");
  EXPECT_EQ((*ids)[1], kByteBase + 0xE2);
  EXPECT_EQ((*ids)[2], kByteBase + 0x82);
  EXPECT_EQ((*ids)[3], kByteBase + 0xAC);
  text::DecodeOptions options;
  options.strip_leading_space = true;
  EXPECT_EQ(tok.decode(*ids, options).value(), euro);
}

}  // namespace
}  // namespace eredu::synth::testing
