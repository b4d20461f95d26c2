// StopStringMatcher: text is held back exactly while a stop string can still begin in it; the
// stop string never appears in released text; the result does not depend on how text is split.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "eredu/generation/stop_strings.hpp"

namespace eredu::generation {
namespace {

StopStringMatcher make(std::vector<std::string> stops) {
  Result<StopStringMatcher> matcher = StopStringMatcher::create(std::move(stops));
  EXPECT_TRUE(matcher.has_value()) << matcher.error().what();
  return std::move(matcher).value();
}

// Feeds `pieces`, returns everything released (flushing if nothing matched) and the match.
std::pair<std::string, std::optional<std::size_t>> run(std::vector<std::string> stops,
                                                       const std::vector<std::string>& pieces) {
  StopStringMatcher matcher = make(std::move(stops));
  std::string text;
  for (const std::string& piece : pieces) {
    StopStringMatcher::Released released = matcher.push(piece);
    text += released.text;
    if (released.matched) return {text, released.matched};
  }
  return {text + matcher.flush(), std::nullopt};
}

TEST(StopStringMatcher, StopStringAcrossThreePiecesIsHeldBackAndRemoved) {
  StopStringMatcher matcher = make({"<|end|>"});
  StopStringMatcher::Released first = matcher.push("Hello <|");
  EXPECT_EQ(first.text, "Hello ");
  EXPECT_EQ(matcher.held(), "<|");
  StopStringMatcher::Released second = matcher.push("en");
  EXPECT_EQ(second.text, "");
  EXPECT_EQ(matcher.held(), "<|en");
  StopStringMatcher::Released third = matcher.push("d|> and more");
  EXPECT_EQ(third.text, "");
  ASSERT_TRUE(third.matched.has_value());
  EXPECT_EQ(*third.matched, 0u);
  EXPECT_TRUE(matcher.matched());
  EXPECT_EQ(matcher.push("ignored").text, "");
}

TEST(StopStringMatcher, PartialMatchThatFailsIsReleased) {
  StopStringMatcher matcher = make({"STOP"});
  EXPECT_EQ(matcher.push("ab ST").text, "ab ");
  EXPECT_EQ(matcher.push("O").text, "");
  const StopStringMatcher::Released released = matcher.push("x");
  EXPECT_EQ(released.text, "STOx");
  EXPECT_FALSE(released.matched.has_value());
  EXPECT_EQ(matcher.held(), "");
}

TEST(StopStringMatcher, FailedPartialMatchKeepsANewPartialMatchInsideIt) {
  StopStringMatcher matcher = make({"STOP"});
  EXPECT_EQ(matcher.push("S").text, "");
  EXPECT_EQ(matcher.push("S").text, "S");  // "SS": only the second S can still start "STOP"
  const StopStringMatcher::Released released = matcher.push("TOP!");
  EXPECT_EQ(released.text, "");
  EXPECT_TRUE(released.matched.has_value());
}

TEST(StopStringMatcher, TextBeforeAStopStringInOnePieceIsReleased) {
  const auto [text, matched] = run({"\n\n"}, {"line one\n\nline two"});
  EXPECT_EQ(text, "line one");
  EXPECT_EQ(matched, 0u);
}

TEST(StopStringMatcher, FirstStopStringToCompleteWins) {
  // "bc" completes (at offset 3) before "abcd" (offset 4).
  const auto [text, matched] = run({"abcd", "bc"}, {"xabcd"});
  EXPECT_EQ(text, "xa");
  EXPECT_EQ(matched, 1u);
}

TEST(StopStringMatcher, AmongStopStringsEndingTogetherTheLongestWins) {
  const auto [text, matched] = run({"c", "abc"}, {"zabc"});
  EXPECT_EQ(text, "z");
  EXPECT_EQ(matched, 1u);
}

TEST(StopStringMatcher, ResultDoesNotDependOnHowTheTextIsSplit) {
  const std::vector<std::string> stops = {"</s>", "ss>", "END"};
  const std::string text = "class </ss> is E</s> tail";
  const auto whole = run(stops, {text});
  EXPECT_EQ(whole.first, "class </");
  EXPECT_EQ(whole.second, 1u);
  for (std::size_t a = 0; a <= text.size(); ++a) {
    for (std::size_t b = a; b <= text.size(); ++b) {
      const auto split = run(stops, {text.substr(0, a), text.substr(a, b - a), text.substr(b)});
      ASSERT_EQ(split, whole) << "split at " << a << ", " << b;
    }
  }
}

TEST(StopStringMatcher, FlushReleasesHeldTextWhenTheStreamEnds) {
  StopStringMatcher matcher = make({"STOP"});
  EXPECT_EQ(matcher.push("go ST").text, "go ");
  EXPECT_EQ(matcher.flush(), "ST");
  EXPECT_EQ(matcher.held(), "");
}

TEST(StopStringMatcher, NoStopStringsReleasesEverythingAtOnce) {
  StopStringMatcher matcher = make({});
  EXPECT_EQ(matcher.push("anything <|").text, "anything <|");
}

TEST(StopStringMatcher, MultiByteStopStringIsMatchedWithoutSplittingCharacters) {
  const auto [text, matched] = run({"\xC3\xA9t\xC3\xA9"}, {"un \xC3\xA9", "t", "\xC3\xA9 chaud"});
  EXPECT_EQ(text, "un ");
  EXPECT_EQ(matched, 0u);
}

TEST(StopStringMatcherRejects, EmptyStopStringNamingItsIndex) {
  const Result<StopStringMatcher> result = StopStringMatcher::create({"ok", ""});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().subject(), "stop_strings[1]");
}

TEST(StopStringMatcherRejects, IllFormedUtf8StopString) {
  const Result<StopStringMatcher> result = StopStringMatcher::create({"\xC3"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "stop_strings[0]");
  EXPECT_NE(result.error().message().find("UTF-8"), std::string::npos);
}

TEST(StopStringMatcherRejects, OverLongStopString) {
  const Result<StopStringMatcher> result =
      StopStringMatcher::create({std::string(StopStringMatcher::kMaxStopStringBytes + 1, 'x')});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "stop_strings[0]");
}

TEST(StopStringMatcherRejects, TooManyStopStrings) {
  const Result<StopStringMatcher> result = StopStringMatcher::create(
      std::vector<std::string>(StopStringMatcher::kMaxStopStrings + 1, "x"));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().subject(), "stop_strings");
}

}  // namespace
}  // namespace eredu::generation
