// Streaming detokenization never emits a broken UTF-8 sequence: characters split across byte
// tokens are held back until complete; invalid bytes become U+FFFD.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eredu/text/streaming_detokenizer.hpp"
#include "shared_data.hpp"
#include "shared_vocab.hpp"
#include "tiny_vocab.hpp"

namespace {

using eredu::testing::byte_token;
using eredu::testing::TinyVocab;
using eredu::text::StreamingDetokenizer;
using eredu::text::TokenId;

const std::string kReplacement = "\xEF\xBF\xBD";

// Pushes every id and returns the pieces the detokenizer emitted, the last one from finish().
std::vector<std::string> stream(const eredu::text::Tokenizer& t, const std::vector<TokenId>& ids,
                                eredu::text::DecodeOptions options = {}) {
  StreamingDetokenizer detok(t, options);
  std::vector<std::string> pieces;
  for (TokenId id : ids) {
    auto piece = detok.push(id);
    EXPECT_TRUE(piece.has_value()) << piece.error().what();
    pieces.push_back(piece ? *piece : "");
  }
  pieces.push_back(detok.finish());
  return pieces;
}

TEST(StreamingDetokenizer, AThreeByteCharacterSplitAcrossByteTokensIsHeldBackUntilComplete) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  // U+20AC EURO SIGN = E2 82 AC.
  const auto pieces = stream(*t, {byte_token(0xE2), byte_token(0x82), byte_token(0xAC)});
  EXPECT_EQ(pieces, (std::vector<std::string>{"", "", "\xE2\x82\xAC", ""}));
}

TEST(StreamingDetokenizer, AFourByteCharacterAfterTextIsEmittedWhole) {
  TinyVocab vocab;
  const auto a = vocab.add("a", -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  // U+1F600 = F0 9F 98 80; "a" is emitted at once, the emoji only with its last byte.
  const auto pieces =
      stream(*t, {a, byte_token(0xF0), byte_token(0x9F), byte_token(0x98), byte_token(0x80), a});
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\x98\x80", "a", ""}));
}

TEST(StreamingDetokenizer, PendingBytesCountsTheHeldBackPrefix) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  StreamingDetokenizer detok(*t);
  ASSERT_TRUE(detok.push(byte_token(0xF0)).has_value());
  ASSERT_TRUE(detok.push(byte_token(0x9F)).has_value());
  EXPECT_EQ(detok.pending_bytes(), 2U);
  detok.reset();
  EXPECT_EQ(detok.pending_bytes(), 0U);
  EXPECT_EQ(detok.push(byte_token('z')).value(), "z");
}

TEST(StreamingDetokenizer, AnIncompleteSequenceAtTheEndIsFlushedAsOneReplacementCharacter) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  const auto pieces = stream(*t, {byte_token(0xE2), byte_token(0x82)});
  EXPECT_EQ(pieces, (std::vector<std::string>{"", "", kReplacement}));
}

TEST(StreamingDetokenizer, ALeadByteFollowedByAsciiBecomesAReplacementThenTheAscii) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  const auto pieces = stream(*t, {byte_token(0xE2), byte_token('A')});
  EXPECT_EQ(pieces, (std::vector<std::string>{"", kReplacement + "A", ""}));
}

TEST(StreamingDetokenizer, BytesThatNeverStartASequenceAreReplacedImmediately) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  // FF, a lone continuation byte 80, and C0 (an overlong lead) each become U+FFFD at once.
  const auto pieces = stream(*t, {byte_token(0xFF), byte_token(0x80), byte_token(0xC0)});
  EXPECT_EQ(pieces, (std::vector<std::string>{kReplacement, kReplacement, kReplacement, ""}));
}

TEST(StreamingDetokenizer, AnOutOfRangeIdIsAnErrorAndLeavesTheStreamIntact) {
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  StreamingDetokenizer detok(*t);
  ASSERT_EQ(detok.push(byte_token(0xE2)).value(), "");
  const auto bad = detok.push(100000);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), eredu::ErrorCode::kInvalidArgument);
  EXPECT_EQ(detok.pending_bytes(), 1U);
  ASSERT_EQ(detok.push(byte_token(0x82)).value(), "");
  EXPECT_EQ(detok.push(byte_token(0xAC)).value(), "\xE2\x82\xAC");
}

TEST(StreamingDetokenizer, StripLeadingSpaceDropsOnlyTheFirstSpaceOfTheStream) {
  TinyVocab vocab;
  const auto space_a = vocab.add(
      "\xE2\x96\x81"
      "a",
      -1.0F);
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  const auto pieces = stream(*t, {1, space_a, space_a}, {.strip_leading_space = true});
  EXPECT_EQ(pieces, (std::vector<std::string>{"", "a", " a", ""}));
}

TEST(StreamingDetokenizer, SurrogateEncodingsFromByteTokensAreReplacedPerMaximalSubpart) {
  // ED A0 80 (a UTF-16 surrogate): ED accepts only 80..9F next, so ED, A0 and 80 are each
  // invalid on their own: three replacements (Unicode's recommended practice, as ICU/WHATWG).
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  const auto pieces = stream(*t, {byte_token(0xED), byte_token(0xA0), byte_token(0x80)});
  EXPECT_EQ(pieces, (std::vector<std::string>{"", kReplacement + kReplacement, kReplacement, ""}));
}

TEST(StreamingDetokenizer, ATruncatedCharacterFollowedByAnotherIsOneReplacementThenTheCharacter) {
  // E2 82 then F0 9F 98 80: the first character is cut short, the emoji is intact.
  TinyVocab vocab;
  const auto t = vocab.build();
  ASSERT_NE(t, nullptr);
  const auto pieces = stream(*t, {byte_token(0xE2), byte_token(0x82), byte_token(0xF0),
                                  byte_token(0x9F), byte_token(0x98), byte_token(0x80)});
  EXPECT_EQ(pieces,
            (std::vector<std::string>{"", "", kReplacement, "", "", "\xF0\x9F\x98\x80", ""}));
}

TEST(StreamingDetokenizer, Stories260KNonAsciiTextRoundTripsThroughByteTokensOneTokenAtATime) {
  const std::filesystem::path path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(path);
  const auto tokenizer = eredu::testing::load_shared_tokenizer(path);
  ASSERT_NE(tokenizer, nullptr);
  const auto& t = *tokenizer;
  // ü, 中 and 😀 are no entries of the 512-token vocabulary (é and € are).
  const std::string text = "Lily saw \xC3\xBC\xE4\xB8\xAD\xF0\x9F\x98\x80!";
  const auto ids = t.encode(text);
  ASSERT_TRUE(ids.has_value()) << ids.error().what();
  // Their 2 + 3 + 4 bytes are byte tokens.
  std::size_t byte_tokens = 0;
  for (TokenId id : *ids)
    byte_tokens += t.token_type(id).value() == eredu::text::TokenType::kByte;
  EXPECT_EQ(byte_tokens, 9U);
  const auto pieces = stream(t, *ids);
  std::string joined;
  for (const auto& piece : pieces) {
    // Each emitted piece is complete UTF-8 on its own.
    EXPECT_TRUE(eredu::generation::is_valid_utf8(piece));
    joined += piece;
  }
  EXPECT_EQ(joined, " " + text);
}

}  // namespace
