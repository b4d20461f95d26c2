// bench/gpu-summary.sh (the GPU check's summary table) on fixtures: eredu-cuda-probe's metric
// lines and eredu-bench's CSV, as the programs write them. Needs no GPU and no built program, only
// bash and awk: the percentages, the targets' verdicts and the refusals of incomplete input.

#include <gtest/gtest.h>

#include <string>

#include "bench_script_fixture.hpp"

namespace eredu::testing {
namespace {

namespace fs = std::filesystem;

using SummaryRun = ScriptRun;

class GpuSummary : public BenchScriptTest {
 protected:
  SummaryRun run(const std::string& probe_log, const std::string& bench_csv) {
    return run_script("gpu-summary.sh",
                      {write("probe.log", probe_log), write("bench.csv", bench_csv)});
  }
};

// The probe's human tables come first; only the "metric" lines matter.
const std::string kProbe =
    "device 0: NVIDIA H200, compute capability 9.0, 132 SMs, 139.8 GiB; runtime 12080, driver "
    "12080\n"
    "\n"
    "measurement               best ms    read GB/s   write GB/s   total GB/s    Gelem/s\n"
    "D2D copy 1024 MiB           0.537       2000.0       2000.0       4000.0          -\n"
    "(best of 10 runs each)\n"
    "\n"
    "metric d2d_copy_bytes 1073741824\n"
    "metric d2d_copy_gb_per_s 4000.000\n"
    "metric d2d_copy_read_gb_per_s 2000.000\n"
    "metric cublas_gemm_tokens 512\n"
    "metric cublas_gemm_gflop_per_s 600000.000\n";

const std::string kHeader =
    "model,model_file,model_type,size_bytes,params,backend,threads,test,n_prompt,n_gen,"
    "repetitions,avg_ts,stddev_ts,avg_ns,stddev_ns,gb_per_s,gflop_per_s,samples_ts\n";

// One pp512 and one tg128 row of a model, in eredu-bench's CSV (pp first, as it runs them).
std::string rows(const std::string& file, const std::string& type, const std::string& pp_ts,
                 const std::string& gflops, const std::string& tg_ts, const std::string& gbs) {
  std::string stem = fs::path(file).stem().string();
  return stem + "," + file + ",llama " + type + ",2200000000,1100000000,cuda,16,pp512,512,0,2," +
         pp_ts + ",1.000,17000000,100000,," + gflops + "," + pp_ts + ";" + pp_ts + "\n" + stem +
         "," + file + ",llama " + type + ",2200000000,1100000000,cuda,16,tg128,0,128,2," + tg_ts +
         ",1.000,85000000,100000," + gbs + ",," + tg_ts + ";" + tg_ts + "\n";
}

const std::string kBench =
    kHeader +
    rows("/m/llama1b-F16.gguf", "F16", "30000.000", "310000.000", "1500.000", "3300.000") +
    rows("/m/llama1b-Q8_0.gguf", "Q8_0", "25000.000", "258000.000", "2500.000", "2760.000") +
    rows("/m/llama1b-Q4_0.gguf", "Q4_0", "20000.000", "206000.000", "4000.000", "2400.000") +
    rows("/m/llama1b-Q4_K.gguf", "Q4_K", "18000.000", "185000.000", "4200.000", "2520.000");

// The table line of `file`, or "" when there is none.
std::string line_of(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| " + file + " ", 0) == 0) return line;
  }
  return "";
}

TEST_F(GpuSummary, OneRowPerFileWithPercentagesOfCopyAndCublas) {
  const SummaryRun r = run(kProbe, kBench);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("tg128 t/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pp512 t/s"), std::string::npos) << r.out;
  // F16: 3300 / 4000 = 82.5 % of copy; 310000 / 600000 = 51.7 % of cuBLAS.
  EXPECT_EQ(line_of(r.out, "llama1b-F16.gguf"),
            "| llama1b-F16.gguf         |    1500.00 |    3300.0 |    82.5 |   30000.00 |   "
            "310000.0 |      51.7 |")
      << r.out;
  // Q4_0: 2400 / 4000 = 60 %; 206000 / 600000 = 34.3 %.
  EXPECT_NE(line_of(r.out, "llama1b-Q4_0.gguf").find("|    60.0 |"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "llama1b-Q4_0.gguf").find("|      34.3 |"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "llama1b-Q8_0.gguf").find("|    69.0 |"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "llama1b-Q4_K.gguf").find("|    63.0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decode F16 >= 80% of copy        82.5%  met"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decode Q4_0 >= 65% of copy       60.0%  MISSED"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("prefill F16 >= 50% of cuBLAS     51.7%  met"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4000.0 GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("600000.0 GFLOP/s"), std::string::npos) << r.out;
}

TEST_F(GpuSummary, AMissingModelIsNamedInTheTargetsNotFailed) {
  const SummaryRun r =
      run(kProbe, kHeader + rows("/m/llama1b-Q8_0.gguf", "Q8_0", "1", "2", "3", "4"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("no F16 model in the table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no Q4_0 model in the table"), std::string::npos) << r.out;
}

TEST_F(GpuSummary, QuotedCsvFieldsAreParsed) {
  // eredu-bench quotes a field holding a comma or a quote (RFC 4180).
  const std::string bench =
      kHeader +
      "\"a,b\",\"/m/a,b.gguf\",llama F16,1,1,cuda,16,pp512,512,0,2,1.000,0.000,1,0,,300000.000,"
      "1.000;1.000\n"
      "\"a,b\",\"/m/a,b.gguf\",llama F16,1,1,cuda,16,tg128,0,128,2,2.000,0.000,1,0,2000.000,,"
      "2.000;2.000\n";
  const SummaryRun r = run(kProbe, bench);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(line_of(r.out, "a,b.gguf").find("|    50.0 |"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "a,b.gguf").find("|      50.0 |"), std::string::npos) << r.out;
}

TEST_F(GpuSummary, RefusesAProbeLogWithoutTheCublasFigure) {
  std::string probe = kProbe;
  probe.erase(probe.find("metric cublas_gemm_gflop_per_s"));
  const SummaryRun r = run(probe, kBench);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("cublas_gemm_gflop_per_s"), std::string::npos) << r.err;
}

TEST_F(GpuSummary, RefusesAProbeLogWithoutTheCopyFigure) {
  const SummaryRun r = run("no CUDA device: cudaErrorNoDevice\n", kBench);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("d2d_copy_gb_per_s"), std::string::npos) << r.err;
}

TEST_F(GpuSummary, RefusesACsvWithoutAColumnOrRowsOrATest) {
  std::string no_column = kHeader;
  no_column.replace(no_column.find("gb_per_s,"), 9, "x,");
  SummaryRun r = run(kProbe, no_column + "a,b,c\n");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("no gb_per_s column"), std::string::npos) << r.err;

  r = run(kProbe, kHeader);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("no result rows"), std::string::npos) << r.err;

  // Only the pp row of a model: no tg figure for it.
  const std::string both = rows("/m/x.gguf", "F16", "1", "2", "3", "4");
  r = run(kProbe, kHeader + both.substr(0, both.find('\n') + 1));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("x.gguf: no tg result"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace eredu::testing
