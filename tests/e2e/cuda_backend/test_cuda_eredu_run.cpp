// `eredu-run --backend cuda -m stories260K.gguf` prints the same story as `--backend cpu`, with
// greedy decoding and with the default sampler under the same seed; `--device` selects by index,
// and an unknown device -- or a machine whose devices are all hidden -- is one clear error line
// (exit 2), never an abort.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_CUDA_BACKEND
#include <cstdlib>
#include <string>
#include <vector>

#include "../cli/cli_support.hpp"
#include "cuda_backend_fixture.hpp"

namespace {

using eredu::cli_tests::run_eredu;
using eredu::cli_tests::stories_model;

std::vector<std::string> story_args(const std::string& backend, std::vector<std::string> extra,
                                    const std::string& n_predict = "48") {
  std::vector<std::string> args = {
      "--backend",        backend, "-m",     stories_model().string(), "-p",
      "Once upon a time", "-n",    n_predict};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void expect_same_story(const std::vector<std::string>& extra) {
  const auto cpu = run_eredu(story_args("cpu", extra));
  const auto cuda = run_eredu(story_args("cuda", extra));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_GT(cpu.out.size(), std::string("Once upon a time").size() + 20);
  EXPECT_EQ(cuda.out, cpu.out);
  EXPECT_NE(cuda.err.find("on cuda:"), std::string::npos) << cuda.err;
}

TEST(CudaEreduRun, GreedyStoryIsTheCpuBackendsStory) {
  EREDU_REQUIRE_CUDA();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  expect_same_story({"--temp", "0"});
}

TEST(CudaEreduRun, DefaultSamplingWithTheSameSeedIsTheCpuBackendsStory) {
  EREDU_REQUIRE_CUDA();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  expect_same_story({"--seed", "1234"});
}

TEST(CudaEreduRun, GreedyStoryWithAnF32KvCacheIsTheCpuBackendsStory) {
  EREDU_REQUIRE_CUDA();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  expect_same_story({"--temp", "0", "--kv-type", "f32"});
}

TEST(CudaEreduRun, DeviceSelectsByIndexAndAnUnknownDeviceIsOneErrorLine) {
  EREDU_REQUIRE_CUDA();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto chosen = run_eredu(story_args("cuda", {"--temp", "0", "--device", "0"}, "4"));
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_NE(chosen.err.find("on cuda:0"), std::string::npos) << chosen.err;
  const auto missing = run_eredu(story_args("cuda", {"--device", "no-such-gpu"}));
  eredu::cli_tests::expect_one_error_line(missing, "no-such-gpu");
}

// Runs on every machine: with every device hidden from the CUDA runtime (no device, or no driver
// at all), --backend cuda is one clear error line (exit 2).
TEST(CudaEreduRun, NoVisibleCudaDeviceIsOneClearErrorLine) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const char* previous = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = previous != nullptr ? previous : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  const auto r = run_eredu(story_args("cuda", {}, "4"));
  if (previous != nullptr) {
    ::setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  eredu::cli_tests::expect_one_error_line(r, "no CUDA device");
}

}  // namespace
#endif  // EREDU_HAVE_CUDA_BACKEND
