// Bad vocabularies are rejected at construction with a clear error (reliability.md G50-G54,
// G57); one test per case.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tiny_vocab.hpp"

namespace {

using eredu::ErrorCode;
using eredu::testing::TinyVocab;
using eredu::text::SentencePieceTokenizer;
using eredu::text::TokenType;

// Builds and expects failure with `code`, the error naming `subject` and containing `needle`.
void expect_rejected(TinyVocab& vocab, ErrorCode code, const std::string& subject,
                     const std::string& needle) {
  const auto made = SentencePieceTokenizer::create(vocab.data());
  ASSERT_FALSE(made.has_value()) << "a bad vocabulary was accepted";
  EXPECT_EQ(made.error().code(), code) << made.error().what();
  EXPECT_EQ(made.error().subject(), subject) << made.error().what();
  EXPECT_NE(made.error().message().find(needle), std::string::npos) << made.error().what();
}

TEST(VocabularyValidation, TheTinyVocabularyItselfIsAccepted) {
  TinyVocab vocab;
  ASSERT_NE(vocab.build(), nullptr);
}

TEST(VocabularyValidation, EmptyVocabularyIsRejected) {
  TinyVocab vocab;
  vocab.data() = {};
  vocab.data().add_bos = false;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.tokens", "empty");
}

TEST(VocabularyValidation, MoreScoresThanTokensIsRejected) {
  TinyVocab vocab;
  vocab.data().scores.push_back(1.0F);
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.scores", "260 scores for 259");
}

TEST(VocabularyValidation, FewerTokenTypesThanTokensIsRejected) {
  TinyVocab vocab;
  vocab.data().token_types.pop_back();
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.token_type",
                  "258 token types for 259");
}

TEST(VocabularyValidation, TokenTypeOutsideZeroToSixIsRejected) {
  TinyVocab vocab;
  vocab.add("x", 0.0F);
  vocab.data().token_types.back() = 7;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.token_type",
                  "token 259 has type 7");
}

TEST(VocabularyValidation, NanScoreIsRejected) {
  TinyVocab vocab;
  vocab.add("x", std::numeric_limits<float>::quiet_NaN());
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.scores", "token 259 is NaN");
}

TEST(VocabularyValidation, BosIdEqualToVocabularySizeIsRejected) {
  TinyVocab vocab;
  vocab.data().special.bos = 259;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.bos_token_id",
                  "259 is out of range [0, 259)");
}

TEST(VocabularyValidation, NegativeEosIdIsRejected) {
  TinyVocab vocab;
  vocab.data().special.eos = -1;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.eos_token_id",
                  "-1 is out of range");
}

TEST(VocabularyValidation, UnknownIdOutOfRangeIsRejected) {
  TinyVocab vocab;
  vocab.data().special.unk = 100000;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.unknown_token_id",
                  "100000 is out of range");
}

TEST(VocabularyValidation, PaddingIdOutOfRangeIsRejected) {
  TinyVocab vocab;
  vocab.data().special.pad = 4000;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.padding_token_id",
                  "4000 is out of range");
}

TEST(VocabularyValidation, DuplicateTokenStringsAreRejectedNamingBothIds) {
  TinyVocab vocab;
  vocab.add("hello", -1.0F);
  vocab.add("world", -1.0F);
  vocab.add("hello", -2.0F);
  expect_rejected(vocab, ErrorCode::kDuplicate, "tokenizer.ggml.tokens",
                  "'hello' appears at ids 259 and 261");
}

TEST(VocabularyValidation, DuplicateTokenStringsMapToTheFirstIdWhenAllowed) {
  TinyVocab vocab;
  const auto first = vocab.add("x", -1.0F);
  const auto second = vocab.add("x", -2.0F);
  vocab.data().allow_duplicate_tokens = true;
  const auto tokenizer = vocab.build();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->find_token("x"), first);
  const auto ids = tokenizer->encode("x");
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, std::vector<eredu::text::TokenId>{first});
  // Both ids still decode to their own text.
  EXPECT_EQ(tokenizer->token_to_piece(second).value(), "x");
  EXPECT_EQ(tokenizer->token_text(second).value(), "x");
}

TEST(VocabularyValidation, ByteTokenWithNegativeValueIsRejected) {
  TinyVocab vocab;
  vocab.add("<0x-1>", 0.0F, TokenType::kByte);
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.tokens",
                  "byte token 259 is '<0x-1>'");
}

TEST(VocabularyValidation, ByteTokenWithNonHexDigitsIsRejected) {
  TinyVocab vocab;
  vocab.add("<0xZZ>", 0.0F, TokenType::kByte);
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.tokens",
                  "byte token 259 is '<0xZZ>'");
}

TEST(VocabularyValidation, ByteTokenAbove0xFFIsRejected) {
  TinyVocab vocab;
  vocab.add("<0x100>", 0.0F, TokenType::kByte);
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.tokens",
                  "byte token 259 is '<0x100>'");
}

TEST(VocabularyValidation, ByteTokenWithOneDigitIsRejected) {
  TinyVocab vocab;
  vocab.add("<0xA>", 0.0F, TokenType::kByte);
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.tokens", "'<0xA>'");
}

TEST(VocabularyValidation, ByteTokenWithLowerCaseHexIsAcceptedAndDecodesToItsByte) {
  TinyVocab vocab;
  const auto id = vocab.add("<0x0a>", 0.0F, TokenType::kByte);
  const auto tokenizer = vocab.build();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->token_to_piece(id).value(), "\n");
}

TEST(VocabularyValidation, AddBosWithoutBosIdIsRejectedAtConstruction) {
  TinyVocab vocab;
  vocab.data().special.bos.reset();
  vocab.data().add_bos = true;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.add_bos_token", "no BOS id");
}

TEST(VocabularyValidation, AddEosWithoutEosIdIsRejectedAtConstruction) {
  TinyVocab vocab;
  vocab.data().special.eos.reset();
  vocab.data().add_eos = true;
  expect_rejected(vocab, ErrorCode::kInvalidModel, "tokenizer.ggml.add_eos_token", "no EOS id");
}

TEST(VocabularyValidation, MissingScoresAndTypesDefaultToZeroAndNormal) {
  eredu::text::SentencePieceVocabulary data;
  data.tokens = {"a", "b", "ab"};
  data.add_bos = false;
  data.add_space_prefix = false;
  const auto made = SentencePieceTokenizer::create(data);
  ASSERT_TRUE(made.has_value()) << made.error().what();
  EXPECT_EQ((*made)->token_type(2).value(), TokenType::kNormal);
  EXPECT_EQ((*made)->score(2), 0.0F);
  EXPECT_EQ((*made)->encode("ab").value(), std::vector<eredu::text::TokenId>{2});
}

}  // namespace
