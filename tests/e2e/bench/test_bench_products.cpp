// eredu-bench --products: a token's matrix products alone, interleaved with the read test. The
// matrices and their bytes are the ones a decoded token reads, as the GGUF tensor shapes give them
// (bench_fixture.hpp, not eredu-bench); every round has positive figures and the medians are the
// rounds'. No threshold on the figures themselves.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_fixture.hpp"

namespace eredu::testing {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

TEST(BenchProducts, JsonTimesEveryMatrixATokenReadsInEveryRound) {
  EREDU_REQUIRE_BENCH_BINARY();
  const auto model = stories_model();
  EREDU_REQUIRE_SHARED_PATH(model);
  const BenchRun run = run_bench({"--products", "-m", model.string(), "--bandwidth-mib", "16", "-r",
                                  "3", "-t", "2", "-q", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto out = nlohmann::json::parse(run.out);
  const ExpectedWork work = expected_work(model);
  EXPECT_EQ(out["model_filename"], "stories260K.gguf");
  EXPECT_EQ(out["threads"], 2);
  EXPECT_EQ(out["matrices"], 7 * work.layers + 1);  // Q, K, V, O, gate, up, down; the logits
  EXPECT_EQ(out["matrix_bytes"].get<std::uint64_t>(), work.matrix_bytes);
  EXPECT_GE(out["passes_per_round"].get<std::uint64_t>(), 4u);
  const auto& rounds = out["rounds"];
  ASSERT_EQ(rounds.size(), 3u);
  std::vector<double> read, products, ratio;
  for (const auto& r : rounds) {
    read.push_back(r["read_gb_per_s"].get<double>());
    products.push_back(r["products_gb_per_s"].get<double>());
    ratio.push_back(r["products_over_read"].get<double>());
    EXPECT_GT(read.back(), 0.0);
    EXPECT_GT(products.back(), 0.0);
    EXPECT_DOUBLE_EQ(ratio.back(), products.back() / read.back());
  }
  EXPECT_DOUBLE_EQ(out["median_read_gb_per_s"].get<double>(), median(read));
  EXPECT_DOUBLE_EQ(out["median_products_gb_per_s"].get<double>(), median(products));
  EXPECT_DOUBLE_EQ(out["median_products_over_read"].get<double>(), median(ratio));
}

TEST(BenchProducts, MarkdownHasARowPerRoundAndAMedianRow) {
  EREDU_REQUIRE_BENCH_BINARY();
  const auto model = stories_model();
  EREDU_REQUIRE_SHARED_PATH(model);
  const BenchRun run = run_bench(
      {"--products", "-m", model.string(), "--bandwidth-mib", "8", "-r", "2", "-t", "1", "-q"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 7u) << run.out;  // title, blank, header, rule, 2 rounds, median
  EXPECT_NE(lines[0].find("36 matrices"), std::string::npos) << lines[0];
  EXPECT_NE(lines[2].find("products / read"), std::string::npos);
  EXPECT_EQ(trim(split(lines[6], '|')[1]), "median");
}

TEST(BenchProducts, OtherBackendsAndSeveralModelsAreUsageErrors) {
  EREDU_REQUIRE_BENCH_BINARY();
  const auto model = stories_model();
  EREDU_REQUIRE_SHARED_PATH(model);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--products", "-m", model.string(), "--backend", "vulkan"},
        std::vector<std::string>{"--products", "-m", model.string(), "-m", model.string()},
        std::vector<std::string>{"--products"}}) {
    const BenchRun run = run_bench(args);
    EXPECT_EQ(run.exit_code, 2) << args.size();
    EXPECT_EQ(lines_of(run.err).size(), 1u) << run.err;
  }
}

}  // namespace
}  // namespace eredu::testing
