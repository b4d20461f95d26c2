// `eredu-run --backend vulkan -m stories260K.gguf` prints the same story as `--backend cpu`, with
// greedy decoding and with the default sampler under the same seed; `--device` selects by index
// or name, and an unknown device is one clear error line (exit 2), never an abort.
#include <gtest/gtest.h>

#ifdef EREDU_HAVE_VULKAN_BACKEND
#include <cstdlib>
#include <string>
#include <vector>

#include "../cli/cli_support.hpp"
#include "vulkan_backend_fixture.hpp"

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
  const auto vk = run_eredu(story_args("vulkan", extra));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(vk.exit_code, 0) << vk.err;
  EXPECT_GT(cpu.out.size(), std::string("Once upon a time").size() + 20);
  EXPECT_EQ(vk.out, cpu.out);
  EXPECT_NE(vk.err.find("on vulkan:"), std::string::npos) << vk.err;
}

TEST(VulkanEreduRun, GreedyStoryIsTheCpuBackendsStory) {
  EREDU_REQUIRE_VULKAN();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  expect_same_story({"--temp", "0"});
}

TEST(VulkanEreduRun, DefaultSamplingWithTheSameSeedIsTheCpuBackendsStory) {
  EREDU_REQUIRE_VULKAN();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  expect_same_story({"--seed", "1234"});
}

TEST(VulkanEreduRun, DeviceSelectsByIndexAndAnUnknownDeviceIsOneErrorLine) {
  EREDU_REQUIRE_VULKAN();
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const std::string index =
      std::to_string(eredu::testing::VulkanTestContext::get().device()->info().index);
  const auto chosen = run_eredu(story_args("vulkan", {"--temp", "0", "--device", index}, "4"));
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_NE(chosen.err.find("on vulkan:" + index), std::string::npos) << chosen.err;
  const auto missing = run_eredu(story_args("vulkan", {"--device", "no-such-gpu"}));
  eredu::cli_tests::expect_one_error_line(missing, "no-such-gpu");
}

// With the loader pointed at no driver, --backend vulkan is one clear error line (exit 2).
TEST(VulkanEreduRun, NoVulkanDriverIsOneClearErrorLine) {
  EREDU_REQUIRE_EREDU_RUN();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  ::setenv("VK_ICD_FILENAMES", "/nonexistent/eredu-no-driver.json", 1);
  ::setenv("VK_DRIVER_FILES", "/nonexistent/eredu-no-driver.json", 1);
  const auto r = run_eredu(story_args("vulkan", {}, "4"));
  ::unsetenv("VK_ICD_FILENAMES");
  ::unsetenv("VK_DRIVER_FILES");
  eredu::cli_tests::expect_one_error_line(r, "vulkan");
  EXPECT_NE(r.err.find("driver"), std::string::npos) << r.err;
}

}  // namespace
#endif  // EREDU_HAVE_VULKAN_BACKEND
