// eredu-bench on stories260K with tiny p / n / r: each output format parses, has one row per
// (model, test) with the right fields, and positive figures. No timing thresholds: only the
// relations between the columns that follow from the definitions are checked.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_fixture.hpp"

namespace eredu::testing {
namespace {

const std::vector<std::string> kCsvHeader{
    "model",     "model_file", "model_type",  "size_bytes",  "params", "backend",   "threads",
    "test",      "n_prompt",   "n_gen",       "repetitions", "avg_ts", "stddev_ts", "avg_ns",
    "stddev_ns", "gb_per_s",   "gflop_per_s", "samples_ts",  "n_depth"};

std::vector<std::string> tiny_run(const std::string& format) {
  return {"-m",  stories_model().string(), "-p", "8", "-n", "4", "-r", "2", "-t", "1", "-q", "-o",
          format};
}

TEST(BenchOutputs, MarkdownTableHasLlamaBenchColumnsAndOneRowPerTest) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const BenchRun run = run_bench(tiny_run("md"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "") << "-q keeps stderr empty";
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 4u) << run.out;  // header, separator, pp8, tg4
  std::vector<std::string> header;
  for (const auto& cell : split(lines[0], '|'))
    if (!trim(cell).empty()) header.push_back(trim(cell));
  EXPECT_EQ(header, (std::vector<std::string>{"model", "size", "params", "backend", "threads",
                                              "test", "t/s", "GB/s", "GFLOP/s"}));
  EXPECT_NE(lines[1].find("---:"), std::string::npos);

  for (std::size_t i = 2; i < 4; ++i) {
    const auto cells = split(lines[i], '|');
    ASSERT_EQ(cells.size(), 11u) << lines[i];  // empty before the first and after the last '|'
    EXPECT_EQ(trim(cells[1]), "stories260K");
    EXPECT_NE(trim(cells[2]).find("MiB"), std::string::npos);
    EXPECT_EQ(trim(cells[4]), "cpu");
    EXPECT_EQ(trim(cells[5]), "1");
    EXPECT_EQ(trim(cells[6]), i == 2 ? "pp8" : "tg4");
    const std::string ts = trim(cells[7]);
    const auto pm = ts.find(" ± ");
    ASSERT_NE(pm, std::string::npos) << ts;
    EXPECT_GT(std::stod(ts.substr(0, pm)), 0.0);
    EXPECT_GE(std::stod(ts.substr(pm + 4)), 0.0);
    const std::string gbs = trim(cells[8]), gflops = trim(cells[9]);
    if (i == 2) {
      EXPECT_EQ(gbs, "-");
      EXPECT_GT(std::stod(gflops), 0.0);
    } else {
      EXPECT_GT(std::stod(gbs), 0.0);
      EXPECT_EQ(gflops, "-");
    }
  }
}

TEST(BenchOutputs, CsvHasTheHeaderAndNumericFieldsForEveryPromptAndGenerationSize) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const BenchRun run = run_bench({"-m", stories_model().string(), "-p", "4,8", "-n", "3", "-r", "3",
                                  "-t", "1", "-q", "-o", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 4u) << run.out;
  EXPECT_EQ(split(lines[0], ','), kCsvHeader);
  const std::vector<std::string> tests{"pp4", "pp8", "tg3"};
  const ExpectedWork work = expected_work(stories_model());
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto f = split(lines[i], ',');
    ASSERT_EQ(f.size(), kCsvHeader.size()) << lines[i];
    EXPECT_EQ(f[0], "stories260K");
    EXPECT_EQ(f[1], stories_model().string());
    EXPECT_EQ(f[2], "llama F32");
    EXPECT_EQ(std::stoull(f[3]), work.tensor_bytes);
    EXPECT_EQ(std::stoull(f[4]), work.params);
    EXPECT_EQ(f[5], "cpu");
    EXPECT_EQ(f[6], "1");
    EXPECT_EQ(f[7], tests[i - 1]);
    EXPECT_EQ(f[10], "3");
    EXPECT_GT(std::stod(f[11]), 0.0);
    EXPECT_GE(std::stod(f[12]), 0.0);
    EXPECT_GT(std::stod(f[13]), 0.0);
    const bool pp = i < 3;
    EXPECT_EQ(f[15].empty(), pp) << "GB/s only for tg";
    EXPECT_EQ(f[16].empty(), !pp) << "GFLOP/s only for pp";
    EXPECT_EQ(split(f[17], ';').size(), 3u) << "one sample per repetition";
    EXPECT_EQ(f[18], "0") << "no -d: nothing cached before a test";
  }
}

// -d runs every test once per depth, after that many tokens were put in the cache untimed, as
// llama-bench's -d does: the rows say the depth in their name and n_depth field, and a run at
// depth 16 still times only its own 8 prompt or 4 generated tokens.
TEST(BenchOutputs, DepthRunsEveryTestOncePerDepthAndNamesTheDepth) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const BenchRun run = run_bench({"-m", stories_model().string(), "-p", "8", "-n", "4", "-d",
                                  "0,16", "-r", "1", "-t", "1", "-q", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 4u) << run.out;
  const std::vector<std::string> names{"pp8", "tg4", "pp8 @ d16", "tg4 @ d16"};
  const std::vector<int> depths{0, 0, 16, 16}, prompts{8, 0, 8, 0}, gens{0, 4, 0, 4};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["test"], names[i]);
    EXPECT_EQ(rows[i]["n_depth"], depths[i]);
    EXPECT_EQ(rows[i]["n_prompt"], prompts[i]);
    EXPECT_EQ(rows[i]["n_gen"], gens[i]);
    EXPECT_GT(rows[i]["avg_ts"].get<double>(), 0.0);
  }
}

TEST(BenchOutputs, JsonRowsDeriveGbPerSecondAndGflopsFromTheTensorShapes) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const BenchRun run = run_bench(tiny_run("json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 2u);
  const ExpectedWork work = expected_work(stories_model());
  ASSERT_GT(work.layers, 0u);

  const auto& pp = rows[0];
  EXPECT_EQ(pp["test"], "pp8");
  EXPECT_EQ(pp["n_prompt"], 8);
  EXPECT_EQ(pp["n_gen"], 0);
  EXPECT_EQ(pp["backend"], "cpu");
  EXPECT_EQ(pp["threads"], 1);
  EXPECT_EQ(pp["repetitions"], 2);
  EXPECT_EQ(pp["samples_ts"].size(), 2u);
  EXPECT_GT(pp["avg_ts"].get<double>(), 0.0);
  EXPECT_TRUE(pp["gb_per_s"].is_null());
  // GFLOP/s = flops of an 8-token prefill / mean seconds.
  const double pp_seconds = pp["avg_ns"].get<double>() / 1e9;
  EXPECT_NEAR(pp["gflop_per_s"].get<double>(), work.prefill_flops(8) / pp_seconds / 1e9,
              1e-6 * pp["gflop_per_s"].get<double>());
  // avg_ts is the mean of the per-repetition rates.
  const auto samples = pp["samples_ts"].get<std::vector<double>>();
  EXPECT_NEAR(pp["avg_ts"].get<double>(), (samples[0] + samples[1]) / 2.0, 1e-6 * samples[0]);

  const auto& tg = rows[1];
  EXPECT_EQ(tg["test"], "tg4");
  EXPECT_EQ(tg["n_prompt"], 0);
  EXPECT_EQ(tg["n_gen"], 4);
  EXPECT_TRUE(tg["gflop_per_s"].is_null());
  EXPECT_EQ(tg["matrix_bytes"].get<std::uint64_t>(), work.matrix_bytes);
  // GB/s = matrix bytes per token x tokens per second.
  EXPECT_NEAR(tg["gb_per_s"].get<double>(),
              static_cast<double>(work.matrix_bytes) * tg["avg_ts"].get<double>() / 1e9,
              1e-6 * tg["gb_per_s"].get<double>());
}

TEST(BenchOutputs, EveryModelGivenGetsItsOwnRows) {
  EREDU_REQUIRE_BENCH_BINARY();
  EREDU_REQUIRE_SHARED_PATH(stories_model());
  const auto q8 = models_dir() / "stories260K-Q8_0-ffndownF16.gguf";
  EREDU_REQUIRE_SHARED_PATH(q8);
  const BenchRun run = run_bench({"-m", stories_model().string(), "-m", q8.string(), "-p", "4",
                                  "-n", "2", "-r", "1", "-t", "1", "-q", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["model"], "stories260K");
  EXPECT_EQ(rows[1]["model"], "stories260K");
  EXPECT_EQ(rows[2]["model"], "stories260K-Q8_0-ffndownF16");
  EXPECT_EQ(rows[3]["model"], "stories260K-Q8_0-ffndownF16");
  EXPECT_EQ(rows[2]["model_type"], "llama Q8_0");
  EXPECT_LT(rows[2]["size_bytes"].get<std::uint64_t>(), rows[0]["size_bytes"].get<std::uint64_t>());
  for (const auto& row : rows)
    EXPECT_EQ(row["stddev_ts"].get<double>(), 0.0) << "one repetition has no spread";
}

}  // namespace
}  // namespace eredu::testing
