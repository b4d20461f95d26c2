// bench/gpu-decode-profile.sh --from (the GPU check's per-kernel summary of one decode step) on
// fixtures shaped like ncu's CSV: the program's own output and ncu's notes before the rows, kernel
// names with commas inside quotes, thousands separators in the values. Needs no GPU, no ncu and no
// built program, only bash and awk.

#include <gtest/gtest.h>

#include <string>

#include "bench_script_fixture.hpp"

namespace eredu::testing {
namespace {

using ProfileRun = ScriptRun;

class GpuDecodeProfile : public BenchScriptTest {
 protected:
  ProfileRun run(const std::string& csv) {
    return run_script("gpu-decode-profile.sh", {"--from", write("ncu.csv", csv)});
  }
};

const std::string kPreamble =
    "==PROF== Connected to process 23600 (/tmp/build/bin/eredu-bench)\n"
    "| model | size | params | backend | threads | test | t/s | GB/s | GFLOP/s |\n"
    "==PROF== Disconnected from process 23600\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
    "\"Metric Unit\",\"Metric Value\"\n";

// One launch of kernel `name` that took `ns` (as ncu writes it, e.g. "5,500").
std::string row(int id, const std::string& name, const std::string& ns) {
  return "\"" + std::to_string(id) + "\",\"23600\",\"eredu-bench\",\"127.0.0.1\",\"" + name +
         "\",\"1\",\"13\",\"(128, 1, 1)\",\"(512, 1, 1)\",\"0\",\"9.0\",\"Command line profiler "
         "metrics\",\"gpu__time_duration.sum\",\"ns\",\"" +
         ns + "\"\n";
}

const std::string kEmbed =
    "void unnamed>::embed_kernel<decode::Q4_0>(const unsigned char *, unsigned long, unsigned "
    "int, const unsigned int *, unsigned int, float *)";
const std::string kMatvec =
    "void unnamed>::matvec_quantized_kernel<dot::DotQ4_0, 1>(const unsigned char *, unsigned int, "
    "unsigned int, unsigned long, const dot::BlockQ8_1 *, unsigned int, float *)";
const std::string kNorm =
    "unnamed>::rms_norm_kernel(const float *, const float *, float *, unsigned int, float)";

TEST_F(GpuDecodeProfile, SummarizesTheLastStepPerKernelLargestFirst) {
  // A warm-up step (slow: it must not count), then the step the table describes.
  const ProfileRun r =
      run(kPreamble + row(0, kEmbed, "9,000") + row(1, kMatvec, "90,000") + row(2, kNorm, "9,000") +
          row(3, kEmbed, "3,000") + row(4, kMatvec, "5,000") + row(5, kNorm, "2,000") +
          row(6, kMatvec, "6,000"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| kernel | launches | total us | us each | share |"), std::string::npos);
  const auto matvec = r.out.find("| matvec_quantized_kernel | 2 | 11.0 | 5.50 | 68.8% |");
  const auto embed = r.out.find("| embed_kernel | 1 | 3.0 | 3.00 | 18.8% |");
  const auto norm = r.out.find("| rms_norm_kernel | 1 | 2.0 | 2.00 | 12.5% |");
  ASSERT_NE(matvec, std::string::npos) << r.out;
  ASSERT_NE(embed, std::string::npos) << r.out;
  ASSERT_NE(norm, std::string::npos) << r.out;
  EXPECT_LT(matvec, embed);
  EXPECT_LT(embed, norm);
  EXPECT_NE(r.out.find("one decode step: 4 launches, 16.0 us of kernel time"), std::string::npos)
      << r.out;
}

TEST_F(GpuDecodeProfile, RefusesAProfileWithoutADecodeStepOrWithoutNcuColumns) {
  const ProfileRun no_step = run(kPreamble + row(0, kMatvec, "5,000"));
  EXPECT_EQ(no_step.exit_code, 1);
  EXPECT_NE(no_step.err.find("no decode step"), std::string::npos) << no_step.err;
  const ProfileRun not_ncu = run("\"model\",\"test\"\n\"a\",\"b\"\n");
  EXPECT_EQ(not_ncu.exit_code, 1);
  EXPECT_NE(not_ncu.err.find("not an ncu CSV"), std::string::npos) << not_ncu.err;
}

}  // namespace
}  // namespace eredu::testing
