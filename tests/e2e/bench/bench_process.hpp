#pragma once
// Runs the eredu-bench binary with arguments and captures its exit code, stdout and stderr
// (through temporary files, so that neither pipe can fill up and block the child).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace eredu::testing {

struct BenchRun {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

inline std::filesystem::path bench_binary() {
  return EREDU_BENCH_BINARY;
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline BenchRun run_bench(const std::vector<std::string>& args) {
  static std::atomic<int> counter{0};
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string stem =
      "eredu-bench-run-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  const std::filesystem::path out_path = dir / (stem + ".out");
  const std::filesystem::path err_path = dir / (stem + ".err");

  std::vector<std::string> argv_storage{bench_binary().string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  BenchRun run;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": error " << spawned;
    return run;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return run;
}

// Lines of `text` without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

// Fields of a CSV line without quotes (eredu-bench quotes nothing in these tests' outputs).
inline std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::string field;
  for (char c : line) {
    if (c == sep) {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

}  // namespace eredu::testing

#define EREDU_REQUIRE_BENCH_BINARY()                                                      \
  do {                                                                                    \
    if (eredu::testing::bench_binary().empty()) {                                         \
      GTEST_SKIP() << "eredu-bench is not built (configure with -DEREDU_BUILD_BENCH=ON)"; \
    }                                                                                     \
  } while (false)
