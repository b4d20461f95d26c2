// eredu-bench --bandwidth: the memory-read bandwidth table in every format, with positive figures
// and one pass per repetition. No threshold on the figure itself.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bench_process.hpp"

namespace eredu::testing {
namespace {

TEST(BenchBandwidth, JsonReportsEveryPassAndBestIsTheirMaximum) {
  EREDU_REQUIRE_BENCH_BINARY();
  const BenchRun run =
      run_bench({"--bandwidth", "--bandwidth-mib", "16", "-r", "3", "-t", "2", "-q", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto out = nlohmann::json::parse(run.out);
  EXPECT_EQ(out["threads"], 2);
  EXPECT_EQ(out["passes"], 3);
  EXPECT_GT(out["bytes"].get<std::uint64_t>(), 15u << 20);
  EXPECT_LE(out["bytes"].get<std::uint64_t>(), 16u << 20);
  const auto passes = out["pass_gb_per_s"].get<std::vector<double>>();
  ASSERT_EQ(passes.size(), 3u);
  double best = 0.0;
  for (double p : passes) {
    EXPECT_GT(p, 0.0);
    best = std::max(best, p);
  }
  EXPECT_EQ(out["best_gb_per_s"].get<double>(), best);
  EXPECT_LE(out["median_gb_per_s"].get<double>(), best);
}

TEST(BenchBandwidth, MarkdownAndCsvHaveOneRowWithPositiveFigures) {
  EREDU_REQUIRE_BENCH_BINARY();
  const BenchRun md =
      run_bench({"--bandwidth", "--bandwidth-mib", "8", "-r", "2", "-t", "1", "-q", "-o", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  const auto md_lines = lines_of(md.out);
  ASSERT_EQ(md_lines.size(), 3u) << md.out;
  EXPECT_NE(md_lines[0].find("best GB/s"), std::string::npos);
  const auto cells = split(md_lines[2], '|');
  ASSERT_EQ(cells.size(), 8u);
  EXPECT_GT(std::stod(trim(cells[5])), 0.0);

  const BenchRun csv =
      run_bench({"--bandwidth", "--bandwidth-mib", "8", "-r", "2", "-t", "1", "-q", "-o", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto csv_lines = lines_of(csv.out);
  ASSERT_EQ(csv_lines.size(), 2u);
  EXPECT_EQ(csv_lines[0], "test,method,threads,bytes,passes,best_gb_per_s,median_gb_per_s");
  const auto f = split(csv_lines[1], ',');
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[2], "1");
  EXPECT_EQ(f[4], "2");
  EXPECT_GT(std::stod(f[5]), 0.0);
}

TEST(BenchBandwidth, TooSmallBufferIsAUsageError) {
  EREDU_REQUIRE_BENCH_BINARY();
  const BenchRun run = run_bench({"--bandwidth", "--bandwidth-mib", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(lines_of(run.err).size(), 1u) << run.err;
}

}  // namespace
}  // namespace eredu::testing
