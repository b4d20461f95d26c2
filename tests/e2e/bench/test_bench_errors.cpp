// eredu-bench on bad input: one line on stderr naming the problem, nothing on stdout, exit code 2.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_fixture.hpp"
#ifdef EREDU_HAVE_CUDA_BACKEND
#include "eredu/backends/cuda/device.hpp"
#endif

namespace eredu::testing {
namespace {

void expect_bad_input(const BenchRun& run, const std::string& needle) {
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  ASSERT_EQ(lines_of(run.err).size(), 1u) << run.err;
  EXPECT_NE(run.err.find("eredu-bench: error:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(needle), std::string::npos) << run.err;
}

TEST(BenchErrors, MissingModelFileIsOneLineNamingThePath) {
  EREDU_REQUIRE_BENCH_BINARY();
  const std::string missing = "/nonexistent/eredu-bench/model.gguf";
  expect_bad_input(run_bench({"-m", missing, "-p", "4", "-n", "2", "-r", "1"}), missing);
}

TEST(BenchErrors, FileThatIsNotAModelIsRejectedBeforeAnyMeasurement) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto path = std::filesystem::temp_directory_path() /
                    ("eredu-bench-garbage-" + std::to_string(::getpid()) + ".gguf");
  {
    std::ofstream out(path, std::ios::binary);
    out << "this is not a GGUF file, just some bytes that are long enough to be read";
  }
  // The good model comes first: the bad second file must fail before the first is measured.
  const BenchRun run =
      run_bench({"-m", stories_model().string(), "-m", path.string(), "-p", "4", "-n", "2"});
  std::filesystem::remove(path);
  expect_bad_input(run, path.filename().string());
  EXPECT_EQ(run.err.find("stories260K.gguf on cpu"), std::string::npos)
      << "no progress line: nothing was measured";
}

TEST(BenchErrors, BackendsNotBuiltIntoTheBenchAreRefusedByName) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  std::vector<std::string> not_built;
#if !defined(EREDU_HAVE_CUDA_BACKEND)
  not_built.push_back("cuda");
#endif
#if !defined(EREDU_HAVE_VULKAN_BACKEND)
  not_built.push_back("vulkan");
#endif
  if (not_built.empty()) GTEST_SKIP() << "every backend is built into this eredu-bench";
  for (const std::string& backend : not_built) {
    expect_bad_input(run_bench({"-m", stories_model().string(), "--backend", backend, "-p", "4",
                                "-n", "2", "-r", "1", "-q"}),
                     "backend " + backend + " is not built into eredu-bench");
  }
}

#ifdef EREDU_HAVE_CUDA_BACKEND
// Built with CUDA but run where no GPU or driver is: a bad-input exit naming the reason.
TEST(BenchErrors, CudaWithoutADeviceIsRefusedSayingSo) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  if (eredu::cuda::list_devices().has_value()) {
    GTEST_SKIP() << "this machine has a CUDA device: tests/e2e/cuda_backend benchmarks on it";
  }
  expect_bad_input(run_bench({"-m", stories_model().string(), "--backend", "cuda", "-p", "4", "-n",
                              "2", "-r", "1", "-q"}),
                   "no CUDA device");
}
#endif

TEST(BenchErrors, UsageErrorsExitWithCodeTwo) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const std::string model = stories_model().string();
  expect_bad_input(run_bench({"-p", "4"}), "-m FILE");
  expect_bad_input(run_bench({"-m", model, "-p", "0", "-n", "0"}), "nothing to measure");
  expect_bad_input(run_bench({"-m", model, "-t", "0"}), "-t");
  expect_bad_input(run_bench({"-m", model, "-r", "0"}), "-r");
  expect_bad_input(run_bench({"-m", model, "-o", "xml"}), "xml");
  expect_bad_input(run_bench({"-m", model, "--backend", "tpu"}), "tpu");
}

TEST(BenchErrors, PromptBeyondEredusContextLimitIsRefusedAtLoad) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  // Beyond eredu's context limit for llama models: refused at load, not crashed on.
  const BenchRun run =
      run_bench({"-m", stories_model().string(), "-p", "100000000", "-n", "0", "-r", "1", "-q"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(lines_of(run.err).size(), 1u) << run.err;
}

}  // namespace
}  // namespace eredu::testing
