// Utf8StreamGuard: complete characters pass, split characters are held until complete, and
// ill-formed input becomes U+FFFD per maximal subpart (Unicode §3.9, table 3-8 examples).

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "eredu/generation/utf8_stream.hpp"

namespace eredu::generation {
namespace {

const std::string kFFFD(kReplacementCharacter);

std::string push_all(const std::vector<std::string_view>& pieces) {
  Utf8StreamGuard guard;
  std::string out;
  for (std::string_view piece : pieces)
    guard.push(piece, out);
  guard.finish(out);
  return out;
}

TEST(Utf8StreamGuard, FourByteCharacterSplitOverFourPiecesIsHeldUntilComplete) {
  Utf8StreamGuard guard;
  const std::string grinning = "\xF0\x9F\x98\x80";  // U+1F600
  std::string out;
  for (std::size_t i = 0; i < 3; ++i) {
    guard.push(grinning.substr(i, 1), out);
    EXPECT_EQ(out, "") << "after byte " << i;
    EXPECT_EQ(guard.pending_bytes(), i + 1);
  }
  guard.push(grinning.substr(3, 1), out);
  EXPECT_EQ(out, grinning);
  EXPECT_EQ(guard.pending_bytes(), 0u);
}

TEST(Utf8StreamGuard, WellFormedTextPassesUnchanged) {
  const std::string text = "plain ASCII, caf\xC3\xA9, \xE2\x82\xAC, \xF4\x8F\xBF\xBF";
  EXPECT_EQ(push_all({text}), text);
}

TEST(Utf8StreamGuard, StrayContinuationByteBecomesOneReplacement) {
  EXPECT_EQ(push_all({"a\x80"
                      "b"}),
            "a" + kFFFD + "b");
}

TEST(Utf8StreamGuard, OverlongTwoByteFormBecomesTwoReplacements) {
  EXPECT_EQ(push_all({"\xC0\xAF"}), kFFFD + kFFFD);
}

TEST(Utf8StreamGuard, SurrogateBecomesThreeReplacements) {
  EXPECT_EQ(push_all({"\xED\xA0\x80"}), kFFFD + kFFFD + kFFFD);
}

TEST(Utf8StreamGuard, TruncatedSequenceBeforeAsciiIsOneReplacementAndKeepsTheAscii) {
  // E2 82 is a maximal subpart of the euro sign; 'A' breaks it and is decoded afresh.
  EXPECT_EQ(push_all({"\xE2", "\x82", "A"}), kFFFD + "A");
}

TEST(Utf8StreamGuard, NewLeadByteInsideASequenceRestarts) {
  // C3 then C3 A9: the first C3 is broken by a lead byte, which then starts "é".
  EXPECT_EQ(push_all({"\xC3", "\xC3\xA9"}), kFFFD + "\xC3\xA9");
}

TEST(Utf8StreamGuard, AboveU10FFFFIsRejected) {
  EXPECT_EQ(push_all({"\xF4\x90\x80\x80"}), kFFFD + kFFFD + kFFFD + kFFFD);
  EXPECT_EQ(push_all({"\xF5"}), kFFFD);
}

TEST(Utf8StreamGuard, FinishReplacesAnIncompleteTail) {
  Utf8StreamGuard guard;
  std::string out;
  guard.push("ok\xF0\x9F", out);
  EXPECT_EQ(out, "ok");
  guard.finish(out);
  EXPECT_EQ(out, "ok" + kFFFD);
  EXPECT_EQ(guard.pending_bytes(), 0u);
}

TEST(Utf8StreamGuard, OutputIsAlwaysWellFormedForEverySplitOfMixedInput) {
  const std::string input = "a\xF0\x9F\x98\x80\x80\xE2\x82\xC3\xA9\xED\xA0\x80z\xF0";
  for (std::size_t cut = 0; cut <= input.size(); ++cut) {
    Utf8StreamGuard guard;
    std::string out;
    guard.push(std::string_view(input).substr(0, cut), out);
    EXPECT_TRUE(is_valid_utf8(out)) << "cut " << cut;
    guard.push(std::string_view(input).substr(cut), out);
    guard.finish(out);
    EXPECT_TRUE(is_valid_utf8(out));
    EXPECT_EQ(out, push_all({input})) << "cut " << cut;
  }
}

TEST(IsValidUtf8, AcceptsWellFormedAndRejectsIllFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(
      is_valid_utf8("\xF0\x90\x80"
                    "A"));  // truncated 4-byte sequence
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\x80"));  // overlong
  EXPECT_FALSE(is_valid_utf8("\xFF"));
}

}  // namespace
}  // namespace eredu::generation
