#pragma once
// Runs a binary with arguments and captures its exit code, stdout and stderr (through temporary
// files, so that neither pipe can fill up and block the child).

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

struct ProgramRun {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

inline std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::filesystem::path temp_path(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return std::filesystem::temp_directory_path() /
         ("eredu-tokenize-test-" + std::to_string(::getpid()) + "-" +
          std::to_string(counter.fetch_add(1)) + suffix);
}

inline ProgramRun run_program(const std::string& binary, const std::vector<std::string>& args) {
  const auto out_path = temp_path(".out");
  const auto err_path = temp_path(".err");
  std::vector<std::string> storage{binary};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ProgramRun run;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot start " << binary << ": error " << spawned;
    return run;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = read_file_bytes(out_path);
  run.err = read_file_bytes(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return run;
}

inline std::string tokenize_binary() {
  return EREDU_TOKENIZE_BINARY;
}

}  // namespace eredu::testing

#define EREDU_REQUIRE_TOKENIZE_BINARY()                                                       \
  do {                                                                                        \
    if (eredu::testing::tokenize_binary().empty()) {                                          \
      GTEST_SKIP() << "eredu-tokenize is not built (configure with EREDU_BUILD_EXAMPLES=ON)"; \
    }                                                                                         \
  } while (false)
