// Every pre-tokenizer name without a vector file against llama.cpp: the GPT-2 vocabulary with
// tokenizer.ggml.pre set to each name must encode the tricky strings of
// tests/reference/bpe-pretokenizers/golden.json to the ids llama-tokenize produced
// (make_golden.py there regenerates it).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/text/bpe_tokenizer.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "shared_data.hpp"

namespace {

using eredu::text::TokenId;

TEST(PretokenizerGolden, EveryPreNameEncodesTheTrickyStringsAsLlamaCppDoes) {
  const auto gguf = eredu::testing::testdata_dir() / "vocab" / "ggml-vocab-gpt-2.gguf";
  EREDU_REQUIRE_SHARED_PATH(gguf);
  std::ifstream in(std::string(EREDU_SOURCE_DIR) +
                   "/tests/reference/bpe-pretokenizers/golden.json");
  ASSERT_TRUE(in.good());
  const auto golden = nlohmann::json::parse(in);
  const auto file = eredu::checkpoint::GgufFile::open(gguf);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  const auto base = eredu::text::read_bpe_vocabulary(file->contents());
  ASSERT_TRUE(base.has_value()) << base.error().what();

  std::map<std::string, std::shared_ptr<const eredu::text::BpeTokenizer>> by_pre;
  std::size_t checked = 0;
  for (const auto& c : golden.at("cases")) {
    const auto pre = c.at("pre").get<std::string>();
    auto& tokenizer = by_pre[pre];
    if (!tokenizer) {
      auto vocab = *base;
      vocab.pre = pre;
      vocab.ignore_merges = eredu::text::bpe_pre_defaults(pre).ignore_merges;  // as llama.cpp
      auto made = eredu::text::BpeTokenizer::create(std::move(vocab));
      ASSERT_TRUE(made.has_value()) << pre << ": " << made.error().what();
      tokenizer = *made;
    }
    const auto text = c.at("text").get<std::string>();
    const auto ids = tokenizer->encode(text, {.add_bos = false, .add_eos = false});
    ASSERT_TRUE(ids.has_value()) << ids.error().what();
    EXPECT_EQ(*ids, c.at("ids").get<std::vector<TokenId>>())
        << "pre " << pre << ": '" << text << "'";
    ++checked;
  }
  EXPECT_GE(checked, 150U);
  EXPECT_GE(by_pre.size(), 16U);
}

}  // namespace
