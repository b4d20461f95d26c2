#pragma once
// Helpers for the eredu-run tests: run the built binary, capture stdout, stderr and the exit code;
// read the stories260K greedy reference; make scratch files.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shared_data.hpp"

namespace eredu::cli_tests {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string quote(const std::string& arg) {
  std::string q = "'";
  for (const char c : arg) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

// This process's scratch directory, removed with what it holds when the process exits (ctest runs
// each test in a process of its own, and every one used to leave its directory behind).
inline std::filesystem::path scratch_dir() {
  struct RemovedAtExit {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("eredu-cli-tests-" + std::to_string(::getpid()));
    ~RemovedAtExit() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const RemovedAtExit dir;
  std::filesystem::create_directories(dir.path);
  return dir.path;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs eredu-run with `args` (stdin from /dev/null unless `stdin_file` is given).
inline CommandResult run_eredu(const std::vector<std::string>& args,
                               const std::string& stdin_file = "/dev/null") {
  CommandResult result;
#ifdef EREDU_RUN_PATH
  const auto err_path = scratch_dir() / "stderr.txt";
  std::string command = quote(EREDU_RUN_PATH);
  for (const auto& arg : args)
    command += " " + quote(arg);
  command += " <" + quote(stdin_file) + " 2>" + quote(err_path.string());
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path);
#else
  (void)args;
  (void)stdin_file;
#endif
  return result;
}

#ifdef EREDU_RUN_PATH
#define EREDU_REQUIRE_EREDU_RUN() (void)0
#else
#define EREDU_REQUIRE_EREDU_RUN() \
  GTEST_SKIP() << "eredu-run is not built (configure with -DEREDU_BUILD_EXAMPLES=ON)"
#endif

inline std::filesystem::path stories_model() {
  return eredu::testing::models_dir() / "stories260K.gguf";
}

struct GreedyCase {
  std::string prompt;
  std::vector<std::uint32_t> prompt_tokens;
  std::vector<std::uint32_t> generated_tokens;
};

inline std::vector<GreedyCase> read_greedy_cases() {
  std::ifstream in(eredu::testing::reference_dir() / "stories260K-F32-greedy.json");
  const auto json = nlohmann::json::parse(in);
  std::vector<GreedyCase> cases;
  for (const auto& c : json.at("cases")) {
    cases.push_back(GreedyCase{c.at("prompt").get<std::string>(),
                               c.at("prompt_tokens").get<std::vector<std::uint32_t>>(),
                               c.at("generated_tokens").get<std::vector<std::uint32_t>>()});
  }
  return cases;
}

// Exit code 2 and exactly one error line, the last line on stderr ("eredu-run: error: ..."),
// containing `fragment`; load progress lines may precede it. Nothing on stdout.
inline void expect_one_error_line(const CommandResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::string marker = "eredu-run: error: ";
  const auto first = r.err.find(marker);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_TRUE(first == 0 || r.err[first - 1] == '\n') << r.err;
  EXPECT_EQ(r.err.find(marker, first + 1), std::string::npos) << "two error lines: " << r.err;
  EXPECT_EQ(r.err.find('\n', first), r.err.size() - 1) << "error is not one last line: " << r.err;
  EXPECT_NE(r.err.find(fragment, first), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace eredu::cli_tests
