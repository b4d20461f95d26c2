// BpeTokenizer, Pretokenizer and WordPieceTokenizer on small vocabularies built in the test:
// merge order, special and added tokens, end-of-generation, UTF-8 validation, byte-level
// detokenization and streaming, and the BERT normalizer. The expected values are worked out by
// hand from the algorithms' definitions (GPT-2 bytes_to_unicode, Hugging Face's BertNormalizer).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eredu/text/bpe_tokenizer.hpp"
#include "eredu/text/pretokenizer.hpp"
#include "eredu/text/streaming_detokenizer.hpp"
#include "eredu/text/wordpiece_tokenizer.hpp"

namespace {

using eredu::ErrorCode;
using eredu::text::BpeTokenizer;
using eredu::text::BpeVocabulary;
using eredu::text::Pretokenizer;
using eredu::text::TokenId;
using Ids = std::vector<TokenId>;

// Token i < 256 is byte i's stand-in; extra tokens follow from id 256.
BpeVocabulary byte_vocabulary(std::vector<std::string> extra, std::vector<std::string> merges,
                              std::vector<std::int32_t> extra_types = {}) {
  BpeVocabulary v;
  for (int b = 0; b < 256; ++b)
    v.tokens.emplace_back(eredu::text::byte_to_unicode(static_cast<std::uint8_t>(b)));
  v.token_types.assign(256, 1);
  for (std::size_t i = 0; i < extra.size(); ++i) {
    v.tokens.push_back(extra[i]);
    v.token_types.push_back(i < extra_types.size() ? extra_types[i] : 1);
  }
  v.merges = std::move(merges);
  v.pre = "gpt-2";
  return v;
}

std::shared_ptr<const BpeTokenizer> make(BpeVocabulary v) {
  auto made = BpeTokenizer::create(std::move(v));
  EXPECT_TRUE(made.has_value()) << made.error().what();
  return made ? *made : nullptr;
}

TEST(ByteToUnicode, PrintableBytesStandForThemselvesAndTheOthersTakeU0100Onwards) {
  EXPECT_EQ(eredu::text::byte_to_unicode('a'), "a");
  EXPECT_EQ(eredu::text::byte_to_unicode(0xA1), "\xC2\xA1");  // '¡' itself
  EXPECT_EQ(eredu::text::byte_to_unicode(0x00), "\xC4\x80");  // U+0100
  EXPECT_EQ(eredu::text::byte_to_unicode(' '), "\xC4\xA0");   // U+0120 'Ġ' (33rd non-printable)
  EXPECT_EQ(eredu::text::byte_to_unicode('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  EXPECT_EQ(eredu::text::byte_to_unicode(0xAD), "\xC5\x83");  // U+0143, the last one
  for (int b = 0; b < 256; ++b) {
    const std::string_view s = eredu::text::byte_to_unicode(static_cast<std::uint8_t>(b));
    char32_t cp = 0;
    if (s.size() == 1) cp = static_cast<unsigned char>(s[0]);
    if (s.size() == 2) cp = ((s[0] & 0x1F) << 6) | (s[1] & 0x3F);
    EXPECT_EQ(eredu::text::unicode_to_byte(cp), std::optional<std::uint8_t>(b)) << b;
  }
}

TEST(BpeEncode, TheLowestRankedPairMergesFirstWhateverItsPosition) {
  // "abc": "b c" has rank 0, "a b" rank 1, so b+c merge first and "ab" never forms.
  const auto t = make(byte_vocabulary({"ab", "bc"}, {"b c", "a b"}));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->encode("abc").value(), (Ids{'a', 257}));
}

TEST(BpeEncode, EqualRanksMergeTheLeftmostPairFirst) {
  // "aaa" with only "a a": the leftmost pair merges, leaving "aa" + "a".
  const auto t = make(byte_vocabulary({"aa"}, {"a a"}));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->encode("aaa").value(), (Ids{256, 'a'}));
  EXPECT_EQ(t->encode("aaaa").value(), (Ids{256, 256}));
}

TEST(BpeEncode, LongWordsMergeAsShortOnesDo) {
  // Past the linear-scan limit the heap takes over; "ab" * 100 must still pair up evenly.
  const auto t = make(byte_vocabulary({"ab", "abab"}, {"a b", "ab ab"}));
  ASSERT_NE(t, nullptr);
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "ab";
  EXPECT_EQ(t->encode(text).value(), Ids(50, 257));
  EXPECT_EQ(t->encode(text + "a").value().back(), 'a');
}

TEST(BpeEncode, IgnoreMergesEmitsAWordThatIsAVocabularyEntryWhole) {
  // "abc" is an entry but no merge chain builds it.
  auto v = byte_vocabulary({"abc"}, {});
  EXPECT_EQ(make(v)->encode("abc").value(), (Ids{'a', 'b', 'c'}));
  v.ignore_merges = true;
  EXPECT_EQ(make(v)->encode("abc").value(), (Ids{256}));
}

TEST(BpeEncode, InvalidUtf8IsAnErrorNamingTheByteOffset) {
  const auto t = make(byte_vocabulary({}, {}));
  ASSERT_NE(t, nullptr);
  for (const auto& [text, offset] : {std::pair<std::string, std::size_t>{"ab\xFF", 2},
                                     {"\xC3", 0},                             // truncated
                                     {"ok \xC0\xAF", 3},                      // overlong
                                     {"x\xED\xA0\x80", 1},                    // surrogate
                                     {"\xE2\x82\xAC\xF4\x90\x80\x80", 3}}) {  // above U+10FFFF
    const auto ids = t->encode(text);
    ASSERT_FALSE(ids.has_value()) << offset;
    EXPECT_EQ(ids.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(ids.error().message().find("byte offset " + std::to_string(offset)),
              std::string::npos)
        << ids.error().message();
  }
  EXPECT_TRUE(t->encode("\xE2\x82\xAC \xF0\x9F\xA6\x99").has_value());
}

TEST(BpeEncode, UserDefinedTokensAreAlwaysMatchedAndControlOnesOnlyWithParseSpecial) {
  // 256 "<|im_end|>" control, 257 "<tool>" user-defined; neither is ever split or merged.
  const auto t = make(byte_vocabulary({"<|im_end|>", "<tool>"}, {}, {3, 4}));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->encode("a<tool>b").value(), (Ids{'a', 257, 'b'}));
  const Ids plain = t->encode("<|im_end|>").value();
  EXPECT_GT(plain.size(), 1U);  // plain text: '<', '|', ...
  EXPECT_EQ(t->encode("x<|im_end|>", {.parse_special = true}).value(), (Ids{'x', 256}));
  // Control tokens render only when asked; user-defined always.
  EXPECT_EQ(t->decode(Ids{256, 257}).value(), "<tool>");
  EXPECT_EQ(t->decode(Ids{256, 257}, {.render_special = true}).value(), "<|im_end|><tool>");
}

TEST(BpeEncode, BosAndEosAreAddedWhenTheVocabularyAndTheOptionsAskForThem) {
  auto v = byte_vocabulary({"<s>"}, {}, {3});
  v.special.bos = 256;
  v.special.eos = 256;
  v.add_bos = true;
  const auto t = make(v);
  EXPECT_EQ(t->encode("a").value(), (Ids{256, 'a'}));
  EXPECT_EQ(t->encode("a", {.add_bos = false}).value(), (Ids{'a'}));
}

TEST(EndOfGeneration, EosEotEomAndKnownEndOfTurnTextsAreAllEog) {
  auto v = byte_vocabulary(
      {"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|endoftext|>", "<|return|>", "<|call|>",
       "<EOT>", "<｜end▁of▁sentence｜>", "<|end|>", "<|start|>", "<eos>", "<eom>"},
      {}, std::vector<std::int32_t>(12, 3));
  v.special.eos = 266;
  v.special.eom = 267;
  const auto t = make(v);
  ASSERT_NE(t, nullptr);
  for (TokenId id = 256; id <= 267; ++id) {
    EXPECT_EQ(t->is_eog(id), id != 265) << id;
  }
  EXPECT_FALSE(t->is_eog('a'));
  EXPECT_FALSE(t->is_eog(-1));
  const auto eog = t->eog_tokens();
  EXPECT_EQ(Ids(eog.begin(), eog.end()),
            (Ids{256, 257, 258, 259, 260, 261, 262, 263, 264, 266, 267}));
}

TEST(BpeDecode, StandInsBecomeRawBytesAndAMultiByteCharacterStreamsWhole) {
  // "€" is E2 82 AC: three byte tokens; the stream holds the first two back.
  const auto t = make(byte_vocabulary({}, {}));
  ASSERT_NE(t, nullptr);
  const Ids ids = t->encode("€!").value();
  ASSERT_EQ(ids, (Ids{0xE2, 0x82, 0xAC, '!'}));
  EXPECT_EQ(t->token_to_piece(0xE2).value(), "\xE2");
  eredu::text::StreamingDetokenizer stream(*t);
  EXPECT_EQ(stream.push(ids[0]).value(), "");
  EXPECT_EQ(stream.push(ids[1]).value(), "");
  EXPECT_EQ(stream.pending_bytes(), 2U);
  EXPECT_EQ(stream.push(ids[2]).value(), "€");
  EXPECT_EQ(stream.push(ids[3]).value(), "!");
  EXPECT_EQ(stream.finish(), "");
}

TEST(BpeDecode, AFourByteCharacterSplitOverTwoMergedTokensStreamsWhole) {
  // U+1F999 F0 9F A6 99 as two tokens of two bytes each.
  const std::string s0 = std::string(eredu::text::byte_to_unicode(0xF0)) +
                         std::string(eredu::text::byte_to_unicode(0x9F));
  const std::string s1 = std::string(eredu::text::byte_to_unicode(0xA6)) +
                         std::string(eredu::text::byte_to_unicode(0x99));
  const auto t =
      make(byte_vocabulary({s0, s1}, {std::string(eredu::text::byte_to_unicode(0xF0)) + " " +
                                          std::string(eredu::text::byte_to_unicode(0x9F)),
                                      std::string(eredu::text::byte_to_unicode(0xA6)) + " " +
                                          std::string(eredu::text::byte_to_unicode(0x99))}));
  ASSERT_NE(t, nullptr);
  const Ids ids = t->encode("\xF0\x9F\xA6\x99").value();
  ASSERT_EQ(ids, (Ids{256, 257}));
  eredu::text::StreamingDetokenizer stream(*t);
  EXPECT_EQ(stream.push(256).value(), "");
  EXPECT_EQ(stream.push(257).value(), "\xF0\x9F\xA6\x99");
}

TEST(BpeDecode, CleanUpSpacesFollowsLlamaCppWhenAskedAndTheVocabularyAllowsIt) {
  const auto t = make(byte_vocabulary({}, {}));
  ASSERT_NE(t, nullptr);
  const Ids ids = t->encode("Hi , you 're here ' ok ?").value();
  EXPECT_EQ(t->decode(ids).value(), "Hi , you 're here ' ok ?");
  EXPECT_EQ(t->decode(ids, {.clean_up_spaces = true}).value(), "Hi, you're here'ok?");
  auto v = byte_vocabulary({}, {});
  v.clean_spaces = false;
  EXPECT_EQ(make(v)->decode(ids, {.clean_up_spaces = true}).value(), "Hi , you 're here ' ok ?");
}

std::vector<std::string> split(std::string_view pre, std::string_view text) {
  const auto p = Pretokenizer::create(pre);
  EXPECT_TRUE(p.has_value()) << p.error().what();
  std::vector<std::string_view> words;
  EXPECT_TRUE((*p)->split(text, words).has_value());
  return {words.begin(), words.end()};
}

using Words = std::vector<std::string>;

TEST(Pretokenizer, Gpt2SplitsContractionsLettersDigitsAndKeepsTheLastSpaceWithTheWord) {
  EXPECT_EQ(split("gpt-2", "I'm  here 123!!"), (Words{"I", "'m", " ", " here", " 123", "!!"}));
}

TEST(Pretokenizer, Llama3MatchesContractionsCaseInsensitivelyAndDigitsInThrees) {
  EXPECT_EQ(split("llama-bpe", "HE'S 12345"), (Words{"HE", "'S", " ", "123", "45"}));
  EXPECT_EQ(split("gpt-2", "HE'S"), (Words{"HE", "'", "S"}));  // gpt-2 is case-sensitive
}

TEST(Pretokenizer, Qwen2SplitsEveryDigit) {
  EXPECT_EQ(split("qwen2", "x 2024"), (Words{"x", " ", "2", "0", "2", "4"}));
}

TEST(Pretokenizer, SeveralNamesMapOntoOneRegexList) {
  EXPECT_EQ(Pretokenizer::patterns_for("llama3").data(),
            Pretokenizer::patterns_for("llama-bpe").data());
  EXPECT_EQ(Pretokenizer::patterns_for("mpt").data(), Pretokenizer::patterns_for("gpt-2").data());
  EXPECT_TRUE(Pretokenizer::patterns_for("nope").empty());
  const auto names = Pretokenizer::known_names();
  for (const char* required : {"default", "gpt-2", "llama-bpe", "qwen2", "smollm", "starcoder",
                               "refact", "mpt", "olmo", "falcon", "deepseek-llm", "deepseek-coder",
                               "deepseek-v3", "command-r", "tekken", "gpt-4o"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
}

TEST(Pretokenizer, EveryKnownRegexListCompilesAndCoversTheTextExactly) {
  const std::string text = "Hello, WORLD! I'm 2024 \n\n  tabs\tand 中文 ǅx Ῥ 🦙...";
  for (const std::string_view name : Pretokenizer::known_names()) {
    std::string joined;
    for (const std::string& w : split(name, text))
      joined += w;
    EXPECT_EQ(joined, text) << name;
  }
}

TEST(Pretokenizer, LongRunsOfOneCharacterClassSplitWithoutErrorUnderEveryName) {
  // 100 kB single-class runs are where a backtracking regex engine runs out of stack; with the
  // byte vocabulary and no merges every byte is one token, whatever the split.
  for (const std::string_view name : Pretokenizer::known_names()) {
    auto v = byte_vocabulary({}, {});
    v.pre = std::string(name);
    const auto t = make(v);
    ASSERT_NE(t, nullptr);
    for (const std::string& run : {std::string(100000, 'a'), std::string(100000, ' '),
                                   std::string(100000, '7'), std::string(100000, '\n')}) {
      const auto ids = t->encode(run);
      ASSERT_TRUE(ids.has_value()) << name << ": " << ids.error().what();
      EXPECT_EQ(ids->size(), run.size()) << name;
    }
  }
}

TEST(Pretokenizer, ARegexThatDoesNotCompileIsAnErrorNamingIt) {
  const auto p = Pretokenizer::from_patterns("bad", {"(unclosed"});
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(p.error().message().find("(unclosed"), std::string::npos) << p.error().message();
}

TEST(WordPiece, TheBertNormalizerLowerCasesStripsAccentsSpacesCjkAndSplitsPunctuation) {
  using eredu::text::WordPieceTokenizer;
  EXPECT_EQ(
      WordPieceTokenizer::normalize_and_split("Héllo, WÖRLD!中文 a\x01z \xC3\x85ngstr\xC3\xB6m"),
      (Words{"hello", ",", "world", "!", "中", "文", "az", "angstrom"}));
  EXPECT_EQ(WordPieceTokenizer::normalize_and_split("$5+x ~ok"),  // ASCII symbols count too
            (Words{"$", "5", "+", "x", "~", "ok"}));
  EXPECT_EQ(WordPieceTokenizer::normalize_and_split("한"),
            (Words{"\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"}));
}

TEST(WordPiece, WordsBecomeTheLongestEntriesFromTheLeftOrTheUnknownTokenWhole) {
  eredu::text::WordPieceVocabulary v;
  v.tokens = {"[UNK]", "[CLS]", "[SEP]", "▁un", "▁una", "able", "ble", "▁x"};
  v.token_types = {3, 3, 3, 1, 1, 1, 1, 1};
  v.special.unk = 0;
  v.special.bos = 1;
  v.sep = 2;
  const auto made = eredu::text::WordPieceTokenizer::create(v);
  ASSERT_TRUE(made.has_value()) << made.error().what();
  const auto& t = *made;
  EXPECT_EQ(t->encode("unable", {.add_bos = false, .add_eos = false}).value(), (Ids{4, 6}));
  EXPECT_EQ(t->encode("unxble x").value(), (Ids{1, 0, 7, 2}));
  EXPECT_EQ(t->decode(Ids{4, 6, 7}).value(), " unable x");
}

}  // namespace
