// eredu-bench --backend vulkan (where the Vulkan backend is built): the same rows as on the CPU,
// labelled vulkan, with positive figures. On a machine with no Vulkan device the run must fail
// with one clear line (exit 2), and the test skips saying so.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bench_fixture.hpp"

namespace eredu::testing {
namespace {

TEST(BenchVulkan, VulkanRowsCarryTheBackendNameAndPositiveThroughput) {
#if !defined(EREDU_HAVE_VULKAN_BACKEND)
  GTEST_SKIP() << "the Vulkan backend is not built";
#else
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const BenchRun run = run_bench({"-m", stories_model().string(), "--backend", "vulkan", "-p", "4",
                                  "-n", "2", "-r", "1", "-q", "-o", "json"});
  const bool no_device = run.err.find("no Vulkan device") != std::string::npos ||
                         run.err.find("Vulkan loader is missing") != std::string::npos ||
                         run.err.find("no device supports Vulkan") != std::string::npos;
  if (run.exit_code == 2 && no_device) {
    GTEST_SKIP() << "no usable Vulkan device here: " << run.err;
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 2u) << run.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("backend"), "vulkan");
    EXPECT_GT(row.at("avg_ts").get<double>(), 0.0);
  }
#endif
}

}  // namespace
}  // namespace eredu::testing
