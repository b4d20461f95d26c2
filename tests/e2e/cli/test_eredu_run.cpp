// eredu-run end to end: greedy --json output equals llama.cpp's tokens for the five reference
// prompts, and every bad input ends with one clear error line and exit code 2.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"
#ifdef EREDU_HAVE_CUDA_BACKEND
#include "eredu/backends/cuda/device.hpp"
#endif

namespace eredu::cli_tests {
namespace {

TEST(EreduRun, GreedyJsonMatchesLlamaCppTokensForAllFiveReferencePrompts) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  EREDU_REQUIRE_SHARED_PATH(eredu::testing::reference_dir() / "stories260K-F32-greedy.json");
  const auto cases = read_greedy_cases();
  ASSERT_EQ(cases.size(), 5u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prompt);
    const CommandResult r = run_eredu({"-m", stories_model().string(), "-p", c.prompt, "--json",
                                       "--temp", "0", "--ignore-eos", "-n", "128", "-t", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto out = nlohmann::json::parse(r.out);
    EXPECT_EQ(out.at("prompt_tokens").get<std::vector<std::uint32_t>>(), c.prompt_tokens);
    EXPECT_EQ(out.at("generated_tokens").get<std::vector<std::uint32_t>>(), c.generated_tokens);
    EXPECT_EQ(out.at("finish_reason"), "max_tokens");
    EXPECT_FALSE(out.at("text").get<std::string>().empty());
    EXPECT_GT(out.at("timings").at("generation_tokens_per_second").get<double>(), 0.0);
  }
}

TEST(EreduRun, StreamsThePromptAndTheStoryToStdoutAndSpeedToStderr) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const CommandResult r = run_eredu(
      {"-m", stories_model().string(), "-p", "Once upon a time", "-n", "32", "--temp", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  EXPECT_GT(r.out.size(), std::string("Once upon a time").size() + 20);
  EXPECT_NE(r.err.find("prompt: 5 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tokens/s"), std::string::npos) << r.err;
}

TEST(EreduRun, ReadsThePromptFromStdinWithDashF) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto prompt_file = scratch_dir() / "prompt.txt";
  std::ofstream(prompt_file) << "Once upon a time";
  const CommandResult r =
      run_eredu({"-m", stories_model().string(), "-f", "-", "-n", "4", "--temp", "0", "--json"},
                prompt_file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("prompt_tokens").size(), 5u);
}

TEST(EreduRun, RejectsAnEmptyPrompt) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  expect_one_error_line(run_eredu({"-m", stories_model().string(), "-p", ""}), "empty prompt");
}

TEST(EreduRun, RejectsEachInvalidSamplingParameterNamingIt) {
  EREDU_REQUIRE_EREDU_RUN();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--temp", "-1"},   {"--temp", "nan"}, {"--top-k", "-2"},        {"--top-p", "0"},
      {"--top-p", "1.5"}, {"--min-p", "2"},  {"--repeat-penalty", "0"}};
  for (const auto& [flag, value] : bad) {
    SCOPED_TRACE(flag + " " + value);
    expect_one_error_line(run_eredu({"-m", "unused.gguf", "-p", "x", flag, value}), flag);
  }
}

TEST(EreduRun, RejectsAPromptLongerThanTheContextBeforeGenerating) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto prompt_file = scratch_dir() / "long.txt";
  {
    std::ofstream out(prompt_file);
    for (int i = 0; i < 1500; ++i)
      out << "Once upon a time ";
  }
  const CommandResult r =
      run_eredu({"-m", stories_model().string(), "-f", prompt_file.string(), "--json"});
  expect_one_error_line(r, "2048");
}

TEST(EreduRun, RejectsABackendThatIsNotBuiltIn) {
  EREDU_REQUIRE_EREDU_RUN();
  // A built backend runs (tests/e2e/vulkan_backend, tests/e2e/cuda_backend).
  std::vector<std::string> not_built;
#ifndef EREDU_HAVE_VULKAN_BACKEND
  not_built.push_back("vulkan");
#endif
#ifndef EREDU_HAVE_CUDA_BACKEND
  not_built.push_back("cuda");
#endif
  for (const std::string& backend : not_built) {
    SCOPED_TRACE(backend);
    expect_one_error_line(run_eredu({"-m", "unused.gguf", "-p", "x", "--backend", backend}),
                          "backend '" + backend + "' is not built into this eredu-run");
  }
  expect_one_error_line(run_eredu({"-m", "unused.gguf", "-p", "x", "--backend", "tpu"}),
                        "--backend");
}

#ifdef EREDU_HAVE_CUDA_BACKEND
// Built with CUDA but run where no GPU or driver is: one line saying so, exit 2, no crash.
TEST(EreduRun, CudaWithoutADeviceFailsWithOneLineSayingSo) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  if (eredu::cuda::list_devices().has_value()) {
    GTEST_SKIP() << "this machine has a CUDA device: tests/e2e/cuda_backend runs eredu-run on it";
  }
  expect_one_error_line(
      run_eredu({"-m", stories_model().string(), "-p", "Once", "-n", "4", "--backend", "cuda"}),
      "no CUDA device");
}
#endif

TEST(EreduRun, RejectsATruncatedModelFile) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const std::string bytes = read_text(stories_model());
  const auto truncated = scratch_dir() / "truncated.gguf";
  std::ofstream(truncated, std::ios::binary).write(bytes.data(), bytes.size() / 2);
  const CommandResult r = run_eredu({"-m", truncated.string(), "-p", "Once", "-n", "4"});
  expect_one_error_line(r, truncated.string());
}

TEST(EreduRun, PrintsTheAutomaticPlanWithAReportThatExplainsIt) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const CommandResult printed = run_eredu({"-m", stories_model().string(), "--print-plan"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const auto doc = nlohmann::json::parse(printed.out);
  const auto& plan = doc.at("plan");
  EXPECT_EQ(plan.at("schema_version"), 2);
  EXPECT_EQ(plan.at("device").at("backend"), "cpu");
  // stories260K is trained for 2048 positions (llama.context_length), under the 4096 cap.
  EXPECT_EQ(plan.at("session").at("context_length"), 2048);
  EXPECT_EQ(plan.at("session").at("kv_cache_type"), "f16");
  const auto& report = doc.at("report");
  // 5 layers x 4 KV heads x 8 dims (n_embd 64 / 8 heads), K and V, 2 bytes.
  EXPECT_EQ(report.at("requirements").at("kv_bytes_per_position").at("f16"), 2 * 5 * 4 * 8 * 2);
  EXPECT_EQ(report.at("memory").at("kv_cache"), 2048 * 2 * 5 * 4 * 8 * 2);
  EXPECT_FALSE(report.at("decisions").empty());
  EXPECT_TRUE(report.at("budget").at("bytes").is_number());
}

TEST(EreduRun, AContextThatDoesNotFitTheBudgetIsRejectedBeforeLoadingWithTheNumbers) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  // 100000 positions x 640 B of f16 KV cache alone are 61 MiB.
  const CommandResult r = run_eredu(
      {"-m", stories_model().string(), "-p", "Once", "-c", "100000", "--memory-budget", "8MiB"});
  expect_one_error_line(r, "budget is 8.00 MiB");
  EXPECT_NE(r.err.find("KV cache of 100000 positions 61.0 MiB"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("materializing"), std::string::npos) << r.err;
}

TEST(EreduRun, AnUnaskedContextShrinksToWhatFitsTheBudgetAndSaysSoOnStderr) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const CommandResult r = run_eredu({"-m", stories_model().string(), "-p", "Once", "-n", "4",
                                     "--memory-budget", "3MiB", "-t", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("fits the budget (wanted 2048)"), std::string::npos) << r.err;
  // 256 positions: 1171200 B weights + 163840 B KV + 4 x (256 x 1220 + 256 + 512) B scratch fit
  // 3 MiB; 512 positions need 4001536 B.
  EXPECT_NE(r.err.find("context 256 positions"), std::string::npos) << r.err;
}

TEST(EreduRun, APromptPlusRequestedTokensBeyondTheContextIsRejectedBeforeLoading) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const CommandResult r =
      run_eredu({"-m", stories_model().string(), "-p", "Once upon", "-c", "64", "-n", "100"});
  expect_one_error_line(r, "exceed the context of 64");
  EXPECT_NE(r.err.find("-n:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("materializing"), std::string::npos) << r.err;
}

TEST(EreduRun, RunsASavedPlanWithItsContextAndRejectsPlanningFlagsBesideIt) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto plan_file = scratch_dir() / "ctx-plan.json";
  std::ofstream(plan_file)
      << R"({"schema_version": 2, "device": {"backend": "cpu", "device": "cpu:0"},
      "session": {"context_length": 96, "kv_cache_type": "f32"}})";
  const CommandResult r = run_eredu(
      {"-m", stories_model().string(), "-p", "Once", "-n", "4", "--plan", plan_file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(context 96 positions)"), std::string::npos) << r.err;
  expect_one_error_line(run_eredu({"-m", stories_model().string(), "-p", "Once", "-c", "64",
                                   "--plan", plan_file.string()}),
                        "with --plan FILE");
}

TEST(EreduRun, RejectsAPlanForAnotherBackendAndAMalformedPlan) {
  EREDU_REQUIRE_EREDU_RUN();

  const auto plan_file = scratch_dir() / "cuda-plan.json";
  std::ofstream(plan_file)
      << R"({"schema_version": 1, "device": {"backend": "cuda", "device": "cuda:0"}})";
  expect_one_error_line(run_eredu({"-m", "unused.gguf", "-p", "x", "--plan", plan_file.string()}),
                        "names backend 'cuda'");
  const auto bad_file = scratch_dir() / "bad-plan.json";
  std::ofstream(bad_file)
      << R"({"schema_version": 1, "device": {"backend": "cpu", "device": "cpu:0"},
            "drafting": {"kind": "sideways"}})";
  expect_one_error_line(run_eredu({"-m", "unused.gguf", "-p", "x", "--plan", bad_file.string()}),
                        "drafting.kind");
}

}  // namespace
}  // namespace eredu::cli_tests
