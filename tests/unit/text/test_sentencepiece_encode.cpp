// The SentencePiece encoder on hand-made vocabularies whose expected ids follow from the
// algorithm's definition (worked out by hand in each test's comment).

#include <gtest/gtest.h>

#include <vector>

#include "tiny_vocab.hpp"

namespace {

using eredu::ErrorCode;
using eredu::testing::byte_token;
using eredu::testing::TinyVocab;
using eredu::text::TokenId;
using eredu::text::TokenType;
using Ids = std::vector<TokenId>;

Ids encode(const eredu::text::Tokenizer& t, std::string_view text,
           eredu::text::EncodeOptions options = {}) {
  auto ids = t.encode(text, options);
  EXPECT_TRUE(ids.has_value()) << ids.error().what();
  return ids ? *ids : Ids{};
}

TEST(SentencePieceEncode, TheHigherScoringPairMergesFirst) {
  // "abc": candidates "ab" (-5) and "bc" (-1); "bc" wins, then "a"+"bc" is no entry.
  TinyVocab vocab;
  const auto a = vocab.add("a", -10.0F);
  vocab.add("b", -10.0F);
  vocab.add("c", -10.0F);
  vocab.add("ab", -5.0F);
  const auto bc = vocab.add("bc", -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "abc"), (Ids{a, bc}));
}

TEST(SentencePieceEncode, TheHigherScoringPairMergesFirstWhateverItsPosition) {
  // Same as above with the scores swapped: "ab" wins, leaving "c".
  TinyVocab vocab;
  vocab.add("a", -10.0F);
  vocab.add("b", -10.0F);
  const auto c = vocab.add("c", -10.0F);
  const auto ab = vocab.add("ab", -1.0F);
  vocab.add("bc", -5.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "abc"), (Ids{ab, c}));
}

TEST(SentencePieceEncode, EqualScoresMergeTheLeftmostPairFirst) {
  // "aaa": both "aa" candidates score the same; the left one merges, leaving "aa","a".
  TinyVocab vocab;
  const auto a = vocab.add("a", -10.0F);
  const auto aa = vocab.add("aa", -2.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "aaa"), (Ids{aa, a}));
}

TEST(SentencePieceEncode, MergingIsGreedyByScoreEvenWhenItPreventsALongerEntry) {
  // Greedy, not optimal: "bc" (-0.5) merges first -> a,bc,d; "abc" and "bcd" are no entries, so
  // "ab"/"cd"/"abcd" can no longer form even though "abcd" would be one token.
  TinyVocab vocab;
  const auto a = vocab.add("a", -10.0F);
  vocab.add("b", -10.0F);
  vocab.add("c", -10.0F);
  const auto d = vocab.add("d", -10.0F);
  vocab.add("ab", -1.0F);
  vocab.add("cd", -2.0F);
  const auto bc = vocab.add("bc", -0.5F);
  vocab.add("abcd", -3.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "abcd"), (Ids{a, bc, d}));
}

TEST(SentencePieceEncode, PairsOfMergedPiecesMergeAgain) {
  // Without "bc": ab(-1) then cd(-2) then ab+cd="abcd"(-3).
  TinyVocab vocab;
  vocab.add("a", -10.0F);
  vocab.add("b", -10.0F);
  vocab.add("c", -10.0F);
  vocab.add("d", -10.0F);
  vocab.add("ab", -1.0F);
  vocab.add("cd", -2.0F);
  const auto abcd = vocab.add("abcd", -3.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "abcd"), (Ids{abcd}));
}

TEST(SentencePieceEncode, SpacesBecomeTheU2581MarkerAndTheTextGetsASpacePrefix) {
  // " a b" -> "▁a▁b" with the prefix; "▁a" and "▁b" are entries.
  TinyVocab vocab;
  vocab.data().add_space_prefix = true;
  vocab.add("\xE2\x96\x81", -10.0F);
  vocab.add("a", -10.0F);
  vocab.add("b", -10.0F);
  const auto space_a = vocab.add(
      "\xE2\x96\x81"
      "a",
      -1.0F);
  const auto space_b = vocab.add(
      "\xE2\x96\x81"
      "b",
      -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "a b"), (Ids{space_a, space_b}));
  EXPECT_EQ(t->decode(Ids{space_a, space_b}).value(), " a b");
}

TEST(SentencePieceEncode, CharactersOutsideTheVocabularyFallBackToByteTokens) {
  // "é" is C3 A9 and no entry: the two byte tokens.
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "\xC3\xA9"), (Ids{byte_token(0xC3), byte_token(0xA9)}));
  EXPECT_EQ(t->decode(Ids{byte_token(0xC3), byte_token(0xA9)}).value(), "\xC3\xA9");
}

TEST(SentencePieceEncode, WithoutByteTokensAnUnrepresentableByteBecomesTheUnknownToken) {
  eredu::text::SentencePieceVocabulary data;
  data.tokens = {"<unk>", "a"};
  data.token_types = {2, 1};
  data.special.unk = 0;
  data.add_bos = false;
  data.add_space_prefix = false;
  const auto t = eredu::text::SentencePieceTokenizer::create(data);
  ASSERT_TRUE(t.has_value()) << t.error().what();
  EXPECT_EQ(encode(**t, "a\xC3\xA9"), (Ids{1, 0, 0}));
}

TEST(SentencePieceEncode, WithoutByteTokensOrUnknownTokenAnUnrepresentableByteIsAnError) {
  eredu::text::SentencePieceVocabulary data;
  data.tokens = {"a"};
  data.add_bos = false;
  data.add_space_prefix = false;
  const auto t = eredu::text::SentencePieceTokenizer::create(data);
  ASSERT_TRUE(t.has_value()) << t.error().what();
  const auto ids = (*t)->encode("ab");
  ASSERT_FALSE(ids.has_value());
  EXPECT_EQ(ids.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(ids.error().message().find("0x62"), std::string::npos) << ids.error().what();
}

TEST(SentencePieceEncode, BosAndEosAreAddedOnlyWhenTheVocabularyAndTheOptionsBothAskForThem) {
  TinyVocab vocab;
  const auto a = vocab.add("a", -1.0F);
  vocab.data().add_bos = true;
  vocab.data().add_eos = true;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "a"), (Ids{1, a, 2}));
  EXPECT_EQ(encode(*t, "a", {.add_bos = false}), (Ids{a, 2}));
  EXPECT_EQ(encode(*t, "a", {.add_eos = false}), (Ids{1, a}));
  EXPECT_EQ(encode(*t, ""), (Ids{1, 2}));

  TinyVocab plain;  // add_bos = add_eos = false in the vocabulary
  const auto pa = plain.add("a", -1.0F);
  const auto p = plain.build();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(encode(*p, "a", {.add_bos = true, .add_eos = true}), (Ids{pa}));
  EXPECT_EQ(encode(*p, ""), Ids{});
}

TEST(SentencePieceEncode, ControlTokenTextIsPlainTextUnlessParseSpecialIsOn) {
  // "<s>" with parse_special: the BOS id; without: the characters '<' 's' '>' (bytes here).
  TinyVocab vocab;
  const auto s = vocab.add("s", -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "<s>", {.parse_special = true}), (Ids{1}));
  EXPECT_EQ(encode(*t, "<s>"), (Ids{byte_token('<'), s, byte_token('>')}));
  EXPECT_EQ(encode(*t, "<unk>", {.parse_special = true}), (Ids{0}));
}

TEST(SentencePieceEncode, UserDefinedTokensAreAlwaysMatchedVerbatim) {
  TinyVocab vocab;
  const auto a = vocab.add("a", -1.0F);
  const auto b = vocab.add("b", -1.0F);
  const auto tool = vocab.add("<tool>", 0.0F, TokenType::kUserDefined);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "a<tool>b<tool>"), (Ids{a, tool, b, tool}));
  EXPECT_EQ(t->decode(Ids{a, tool, b}).value(), "a<tool>b");
}

TEST(SentencePieceEncode, TextAfterASpecialTokenGetsTheSpacePrefixAgain) {
  // llama.cpp: "<s>a" with parse_special and add_space_prefix -> <s>, "▁a".
  TinyVocab vocab;
  vocab.data().add_space_prefix = true;
  vocab.add("a", -1.0F);
  const auto space_a = vocab.add(
      "\xE2\x96\x81"
      "a",
      -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "a<s>a", {.parse_special = true}), (Ids{space_a, 1, space_a}));
}

TEST(SentencePieceEncode, LongerSpecialTokensWinOverTheirPrefixes) {
  TinyVocab vocab;
  const auto shorter = vocab.add("<|e", 0.0F, TokenType::kControl);
  const auto longer = vocab.add("<|end|>", 0.0F, TokenType::kControl);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(encode(*t, "<|end|><|e", {.parse_special = true}), (Ids{longer, shorter}));
}

TEST(SentencePieceDecode, ControlAndUnknownTokensRenderOnlyWhenAsked) {
  TinyVocab vocab;
  const auto a = vocab.add("a", -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->decode(Ids{1, a, 0, 2}).value(), "a");
  EXPECT_EQ(t->decode(Ids{1, a, 0, 2}, {.render_special = true}).value(), "<s>a<unk></s>");
}

TEST(SentencePieceDecode, UnusedTokensRenderAsNothing) {
  TinyVocab vocab;
  const auto unused = vocab.add("[UNUSED]", 0.0F, TokenType::kUnused);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->token_to_piece(unused, true).value(), "");
}

TEST(SentencePieceDecode, StripLeadingSpaceActsOnTheFirstPieceWithText) {
  TinyVocab vocab;
  const auto space_a = vocab.add(
      "\xE2\x96\x81"
      "a",
      -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->decode(Ids{1, space_a, space_a}, {.strip_leading_space = true}).value(), "a a");
}

TEST(SentencePieceDecode, TokenIdsOutOfRangeAreErrorsNamingTheId) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  const auto piece = t->token_to_piece(259);
  ASSERT_FALSE(piece.has_value());
  EXPECT_EQ(piece.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(piece.error().message().find("259"), std::string::npos);
  const auto text = t->decode(Ids{1, -3});
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message().find("-3"), std::string::npos);
  EXPECT_FALSE(t->token_text(100000).has_value());
  EXPECT_FALSE(t->token_type(-1).has_value());
  EXPECT_FALSE(t->is_eog(-1));
  EXPECT_FALSE(t->is_control(259));
}

TEST(SentencePieceDecode, EndOfGenerationIsEosEotOrEom) {
  TinyVocab vocab;
  const auto eot = vocab.add("<|eot|>", 0.0F, TokenType::kControl);
  const auto other = vocab.add("<|other|>", 0.0F, TokenType::kControl);
  vocab.data().special.eot = eot;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->is_eog(2));
  EXPECT_TRUE(t->is_eog(eot));
  EXPECT_FALSE(t->is_eog(other));
  EXPECT_FALSE(t->is_eog(1));
  EXPECT_TRUE(t->is_control(1));
  EXPECT_TRUE(t->is_control(other));
  EXPECT_FALSE(t->is_control(byte_token('a')));
}

}  // namespace
