#pragma once
// Runs the eredu-inspect binary with arguments and captures its exit code, stdout and stderr
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

struct InspectRun {
  int exit_code = -1;  // -1: did not exit normally (killed by a signal)
  int signal = 0;
  std::string out;
  std::string err;
};

inline std::filesystem::path inspect_binary() {
  return EREDU_INSPECT_BINARY;
}

inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline InspectRun run_inspect(const std::vector<std::string>& args) {
  static std::atomic<int> counter{0};
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string stem = "eredu-inspect-run-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter.fetch_add(1));
  const std::filesystem::path out_path = dir / (stem + ".out");
  const std::filesystem::path err_path = dir / (stem + ".err");

  std::vector<std::string> argv_storage{inspect_binary().string()};
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
  InspectRun run;
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
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.out = read_text_file(out_path);
  run.err = read_text_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return run;
}

// The number of lines in `text` (a final line without a newline counts).
inline std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text)
    lines += c == '\n' ? 1 : 0;
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// A fresh empty directory under the system temp directory.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("eredu-inspect-test-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace eredu::testing

// Skips when the binary is not part of this build.
#define EREDU_REQUIRE_INSPECT_BINARY()                                                       \
  do {                                                                                       \
    if (eredu::testing::inspect_binary().empty()) {                                          \
      GTEST_SKIP() << "eredu-inspect is not built (configure with EREDU_BUILD_EXAMPLES=ON)"; \
    }                                                                                        \
  } while (false)
