#pragma once
// Runs the eredu-synth program and reads what it wrote.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"

namespace eredu::synth::testing {

namespace fs = std::filesystem;

// The shape most tests use: every row length (64, 128) is whole blocks of 32.
inline const std::string kTinyShape =
    "--hidden 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --vocab 320 --context 256";

// The encodings eredu-synth writes.
inline const std::vector<std::string> kEncodings = {"F32",  "F16",  "BF16", "Q8_0",
                                                    "Q4_0", "Q4_1", "Q5_0", "Q5_1"};

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh directory per test, removed afterwards; skips when the program was not built.
class SynthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(EREDU_SYNTH_EXE).empty()) {
      GTEST_SKIP() << "eredu-synth is not built (EREDU_BUILD_EXAMPLES=OFF)";
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("eredu-synth-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Runs `eredu-synth ARGS` with stdout and stderr captured.
  RunResult run(const std::string& args) const {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string command = std::string("'") + EREDU_SYNTH_EXE + "' " + args + " >'" +
                                out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }

  // Writes the tiny model as `type` with `seed` (plus `extra` options) and returns its path;
  // `tag` tells files with the same type and seed apart.
  fs::path write_tiny(const std::string& type, std::uint64_t seed = 1,
                      const std::string& extra = "", const std::string& tag = "") const {
    const fs::path path = dir_ / ("tiny-" + type + "-" + std::to_string(seed) + tag + ".gguf");
    const RunResult r = run(kTinyShape + " --type " + type + " --seed " + std::to_string(seed) +
                            " " + extra + " -q -o '" + path.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  fs::path dir_;
};

inline std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace eredu::synth::testing
