// examples/simple, built and run as a user would: on stories260K it prints each reference
// prompt followed by llama.cpp's greedy text for it (../shared/reference), and a file that is no
// model gives one error line naming the file, exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "shared_data.hpp"

namespace {

struct Output {
  int exit_code = -1;
  std::string out;
};

[[maybe_unused]] std::string quote(const std::string& arg) {
  std::string q = "'";
  for (const char c : arg)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Output run_simple([[maybe_unused]] const std::vector<std::string>& args) {
  Output result;
#ifdef EREDU_SIMPLE_PATH
  std::string command = quote(EREDU_SIMPLE_PATH);
  for (const auto& arg : args)
    command += " " + quote(arg);
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
  return result;
}

#ifdef EREDU_SIMPLE_PATH
#define REQUIRE_SIMPLE() (void)0
#else
#define REQUIRE_SIMPLE() \
  GTEST_SKIP() << "examples/simple is not built (configure with -DEREDU_BUILD_EXAMPLES=ON)"
#endif

TEST(SimpleExample, PrintsLlamaCppsGreedyTextForEachReferencePrompt) {
  REQUIRE_SIMPLE();
  const auto model = eredu::testing::models_dir() / "stories260K.gguf";
  const auto reference = eredu::testing::reference_dir() / "stories260K-F32-greedy.json";
  EREDU_REQUIRE_SHARED_PATH(model);
  EREDU_REQUIRE_SHARED_PATH(reference);
  std::ifstream in(reference);
  const auto json = nlohmann::json::parse(in);
  const auto n_predict = json.at("n_predict").get<int>();
  for (const auto& c : json.at("cases")) {
    const auto prompt = c.at("prompt").get<std::string>();
    const auto r = run_simple({model.string(), prompt, std::to_string(n_predict)});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string expected = prompt + c.at("generated_text").get<std::string>() + "\n";
    ASSERT_EQ(r.out.substr(0, expected.size()), expected) << "prompt: " << prompt;
    EXPECT_NE(r.out.find("simple: " + std::to_string(n_predict) + " tokens at "), std::string::npos)
        << r.out;
  }
}

TEST(SimpleExample, AFileThatIsNoModelIsOneErrorLineNamingIt) {
  REQUIRE_SIMPLE();
  const auto vocab =
      eredu::testing::shared_dir() / "testdata" / "vocab" / "ggml-vocab-llama-spm.gguf";
  EREDU_REQUIRE_SHARED_PATH(vocab);
  const auto r = run_simple({vocab.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.rfind("simple: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(vocab.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("token_embd.weight"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
}

}  // namespace
