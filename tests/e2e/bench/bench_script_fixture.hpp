#pragma once
// A fixture for the tests of the bench/ shell scripts (gpu-summary.sh, gpu-decode-profile.sh): a
// scratch folder for the inputs and outputs, removed after each test, and a run of a script under
// /bin/bash with its exit code, stdout and stderr. Needs no GPU and no built program.

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_process.hpp"

namespace eredu::testing {

struct ScriptRun {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

class BenchScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/bin/bash")) GTEST_SKIP() << "no /bin/bash";
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::temp_directory_path() /
           ("eredu-bench-script-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter.fetch_add(1)));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  // Writes `text` to the scratch file `name` and returns its path.
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }

  // Runs bench/`script` with `args` (each single-quoted).
  ScriptRun run_script(const std::string& script, const std::vector<std::string>& args) {
    std::string command =
        "/bin/bash '" + (std::filesystem::path(EREDU_SOURCE_DIR) / "bench" / script).string() + "'";
    for (const std::string& arg : args)
      command += " '" + arg + "'";
    command += " > '" + (dir_ / "out").string() + "' 2> '" + (dir_ / "err").string() + "'";
    const int status = std::system(command.c_str());
    ScriptRun result;
    if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    result.out = slurp(dir_ / "out");
    result.err = slurp(dir_ / "err");
    return result;
  }

  std::filesystem::path dir_;
};

}  // namespace eredu::testing
