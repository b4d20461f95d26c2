// eredu-run --draft MODEL / --draft-ngram [N]: greedy speculative output is llama.cpp's greedy
// reference (the plain output), the acceptance rate, rounds and tokens/s are reported on stderr
// and in --json, and misuse is refused with one error line naming the flag.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace {

using eredu::cli_tests::CommandResult;
using eredu::cli_tests::expect_one_error_line;
using eredu::cli_tests::read_greedy_cases;
using eredu::cli_tests::run_eredu;
using eredu::cli_tests::stories_model;

std::string q4_model() {
  return (eredu::testing::models_dir() / "stories260K-Q4_0-ffndownF16.gguf").string();
}

TEST(EreduRunSpeculative, GreedyDraftingGivesLlamaCppTokensForAllFiveReferencePrompts) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  EREDU_REQUIRE_SHARED_PATH(q4_model());
  EREDU_REQUIRE_SHARED_PATH(eredu::testing::reference_dir() / "stories260K-F32-greedy.json");
  const std::vector<std::vector<std::string>> drafters{
      {"--draft", q4_model(), "--draft-max", "4"},
      {"--draft-ngram"},
      {"--draft-ngram", "1", "--draft-max", "12"},
  };
  for (const auto& c : read_greedy_cases()) {
    for (const auto& drafter : drafters) {
      SCOPED_TRACE(c.prompt + " with " + drafter.front() + " " +
                   (drafter.size() > 1 ? drafter[1] : ""));
      std::vector<std::string> args{
          "-m", stories_model().string(), "-p", c.prompt, "--json", "--temp",
          "0",  "--ignore-eos",           "-n", "128",    "-t",     "2"};
      args.insert(args.end(), drafter.begin(), drafter.end());
      const CommandResult r = run_eredu(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto out = nlohmann::json::parse(r.out);
      EXPECT_EQ(out.at("prompt_tokens").get<std::vector<std::uint32_t>>(), c.prompt_tokens);
      EXPECT_EQ(out.at("generated_tokens").get<std::vector<std::uint32_t>>(), c.generated_tokens);
      EXPECT_EQ(out.at("finish_reason"), "max_tokens");
      const auto& s = out.at("speculative");
      EXPECT_GT(s.at("rounds").get<std::int64_t>(), 0);
      EXPECT_LE(s.at("accepted").get<std::int64_t>(), s.at("drafted").get<std::int64_t>());
      // Every round commits at least one token; 127 tokens follow the first.
      EXPECT_LE(s.at("rounds").get<std::int64_t>(), 127);
    }
  }
}

TEST(EreduRunSpeculative, ReportsAcceptanceRoundsAndSpeedOnStderr) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  EREDU_REQUIRE_SHARED_PATH(q4_model());
  const CommandResult r = run_eredu({"-m", stories_model().string(), "-p", "Once upon a time", "-n",
                                     "64", "--temp", "0", "--draft", q4_model()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("speculative (draft model, up to 8 drafts)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("accepted (acceptance "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tokens/s"), std::string::npos) << r.err;

  // The same output as without a drafter.
  const CommandResult plain = run_eredu(
      {"-m", stories_model().string(), "-p", "Once upon a time", "-n", "64", "--temp", "0"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(r.out, plain.out);
}

TEST(EreduRunSpeculative, SampledDraftingKeepsTheBudget) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const CommandResult r =
      run_eredu({"-m", stories_model().string(), "-p", "Once upon a time", "-n", "50", "--temp",
                 "0.8", "--seed", "7", "--ignore-eos", "--json", "--draft-ngram", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("generated_tokens").size(), 50u);
}

TEST(EreduRunSpeculative, RefusesMisuseNamingTheFlag) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const std::string model = stories_model().string();
  expect_one_error_line(run_eredu({"-m", model, "-p", "x", "--draft-ngram", "--draft-max", "0"}),
                        "--draft-max");
  expect_one_error_line(run_eredu({"-m", model, "-p", "x", "--draft-ngram", "0", "--json"}),
                        "--draft-ngram");
  expect_one_error_line(run_eredu({"-m", model, "-p", "x", "--draft", model, "--draft-ngram"}),
                        "--draft");
  expect_one_error_line(run_eredu({"-m", model, "--chat", "-p", "x", "--draft-ngram"}), "--chat");
  expect_one_error_line(
      run_eredu({"-m", model, "-p", "x", "--json", "--draft", "/nonexistent/draft.gguf"}),
      "--draft");
}

}  // namespace
