// The CPU backend through the library API (runtime::load_model), against two independent
// references:
//  - stories260K (F32): its logits agree with the float64 reference forward pass
//    (tests/support/reference_llama.hpp) at every generated position of all five prompts;
//  - the quantized stories260K files: teacher-forced log-probabilities against llama.cpp's
//    recordings (per-file tolerances, ../shared/reference/README.md), top-1 where the recording's
//    margin is clear, and logits against the float64 reference on the dequantized weights.
//
// Relative logit error, as used here: for one position, max_v |cpu_v - ref_v| / max_v |ref_v|
// over the whole vocabulary (a norm-wise error, insensitive to logits that happen to be near 0).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/runtime/load_model.hpp"
#include "reference_llama.hpp"
#include "shared_data.hpp"
#include "teacher_forced.hpp"

namespace {

using eredu::cpu::CpuBackend;
using eredu::cpu::CpuBackendOptions;
using eredu::cpu::CpuLoadOptions;
using eredu::testing::models_dir;
using eredu::testing::reference_dir;
using eredu::testing::reference::compare_teacher_forced;
using eredu::testing::reference::GreedyCase;
using eredu::testing::reference::load_greedy_cases;
using eredu::testing::reference::ReferenceLlama;

constexpr double kLogitRelativeTolerance = 1e-4;
constexpr std::uint32_t kContextLength = 256;  // > the longest prompt + 128 generated tokens

// One thread (the numbers do not depend on it: the kernels are bit-identical across thread counts,
// tests/unit/cpu_ops) and a KV cache sized for the longest case, to keep the test quick.
CpuLoadOptions load_options() {
  CpuLoadOptions options;
  options.context_length = kContextLength;
  return options;
}

// The CPU backend's logits, teacher-forced through `c`: the prompt in one prefill, then each
// generated token but the last in one decode. Row r holds the logits after input position r;
// rows before the prompt's last position are left empty (the prefill reports only its last).
template <typename Runtime>
std::vector<std::vector<float>> cpu_teacher_forced_logits(Runtime& runtime, const GreedyCase& c) {
  std::vector<std::vector<float>> rows(c.prompt_tokens.size() - 1);
  EXPECT_LE(c.prompt_tokens.size() + c.generated_tokens.size(), kContextLength);
  EXPECT_TRUE(runtime.session_mut().truncate(0).has_value());
  std::vector<std::uint32_t> prompt(c.prompt_tokens.begin(), c.prompt_tokens.end());
  auto sub = runtime.prefill(std::move(prompt));
  if (!sub) {
    ADD_FAILURE() << sub.error().what();
    return {};
  }
  auto logits = runtime.observe_output(sub->output);
  if (!logits) {
    ADD_FAILURE() << logits.error().what();
    return {};
  }
  rows.push_back(*logits);
  for (std::size_t i = 0; i + 1 < c.generated_tokens.size(); ++i) {
    auto step = runtime.decode(static_cast<std::uint32_t>(c.generated_tokens[i]));
    if (!step) {
      ADD_FAILURE() << "decode at generated position " << i << ": " << step.error().what();
      return {};
    }
    logits = runtime.observe_output(step->output);
    if (!logits) {
      ADD_FAILURE() << logits.error().what();
      return {};
    }
    rows.push_back(*logits);
  }
  return rows;
}

// max_v |actual_v - expected_v| / max_v |expected_v| for one position.
double relative_logit_error(const std::vector<float>& actual, const std::vector<double>& expected) {
  double max_diff = 0.0;
  double max_ref = 0.0;
  for (std::size_t v = 0; v < expected.size(); ++v) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(actual[v]) - expected[v]));
    max_ref = std::max(max_ref, std::abs(expected[v]));
  }
  return max_diff / max_ref;
}

TEST(CpuBackendVsFloat64Reference, Stories260KLogitsAgreeWithin1e4RelativeOnAllFivePrompts) {
  const auto model_path = models_dir() / "stories260K.gguf";
  const auto json_path = reference_dir() / "stories260K-F32-greedy.json";
  EREDU_REQUIRE_SHARED_PATH(model_path);
  EREDU_REQUIRE_SHARED_PATH(json_path);
  const ReferenceLlama reference = ReferenceLlama::load(model_path);
  const auto cases = load_greedy_cases(json_path);
  ASSERT_EQ(cases.size(), 5u);
  auto runtime =
      eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}), model_path, load_options());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();

  double worst = 0.0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prompt);
    const auto expected = reference.forward(c.teacher_forced_input());
    const auto actual = cpu_teacher_forced_logits(*runtime, c);
    ASSERT_EQ(actual.size(), c.prompt_tokens.size() - 1 + c.generated_tokens.size());
    std::size_t compared = 0;
    double case_worst = 0.0;
    for (std::size_t row = c.prompt_tokens.size() - 1; row < actual.size(); ++row) {
      ASSERT_EQ(actual[row].size(), expected[row].size()) << "at input position " << row;
      const double relative = relative_logit_error(actual[row], expected[row]);
      EXPECT_LE(relative, kLogitRelativeTolerance) << "at input position " << row;
      case_worst = std::max(case_worst, relative);
      ++compared;
    }
    EXPECT_EQ(compared, c.generated_tokens.size());
    worst = std::max(worst, case_worst);
    std::printf(
        "[ measured ] CPU backend vs float64 reference, '%s': max relative logit error "
        "%.3g over %zu positions\n",
        c.prompt.c_str(), case_worst, compared);
  }
  RecordProperty("max_relative_logit_error", std::to_string(worst));
}

struct QuantizedCase {
  const char* name;          // model file stem; the recording is <stem>-greedy.json
  double logprob_tolerance;  // on the recorded greedy token's log-probability
};

// README guidance: about 0.05 for Q8_0, 0.3 for Q4_0. Measured (max over 5 x 128 positions of the
// greedy token's log-probability): Q8_0 0.104, Q4_0 0.120, Q4_K_M 0.114, Q6_K 0.104. The 8-bit
// files exceed the README's 0.05: the backend rounds activations for its quantized products, but
// not bit-for-bit as llama.cpp does (the float64 reference, with exact activations, is closer to
// llama.cpp: 0.077), so the tolerances here are the measured values with about 1.5x headroom.
const QuantizedCase kQuantizedCases[] = {
    {"stories260K-Q8_0-ffndownF16", 0.15},
    {"stories260K-Q4_0-ffndownF16", 0.3},
    {"stories260K-Q4_K_M", 0.15},
    {"stories260K-Q6_K", 0.15},
};
// The backend's logits against the float64 reference on the same dequantized weights, relative
// as defined at the top: only the backend's activation rounding separates them (measured 0.019 to
// 0.023); a mis-decoded block or scale is an error of order 1.
constexpr double kQuantizedLogitRelativeTolerance = 0.05;
constexpr double kClearMargin = 0.5;

class CpuBackendOnQuantizedModels : public ::testing::TestWithParam<QuantizedCase> {};

TEST_P(CpuBackendOnQuantizedModels, TeacherForcedLogprobsMatchLlamaCppAndLogitsMatchTheReference) {
  const QuantizedCase& q = GetParam();
  const auto model_path = models_dir() / (std::string(q.name) + ".gguf");
  const auto json_path = reference_dir() / (std::string(q.name) + "-greedy.json");
  EREDU_REQUIRE_SHARED_PATH(model_path);
  EREDU_REQUIRE_SHARED_PATH(json_path);
  const auto cases = load_greedy_cases(json_path);
  ASSERT_EQ(cases.size(), 5u);
  auto runtime =
      eredu::runtime::load_model(CpuBackend(CpuBackendOptions{1}), model_path, load_options());
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();

  const ReferenceLlama reference = ReferenceLlama::load(model_path);

  double worst_chosen = 0.0;
  double worst_top5 = 0.0;
  double worst_vs_reference = 0.0;
  std::size_t clear = 0;
  std::size_t disagreements = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prompt);
    const auto logits = cpu_teacher_forced_logits(*runtime, c);
    ASSERT_EQ(logits.size(), c.prompt_tokens.size() - 1 + c.generated_tokens.size());
    const auto expected = reference.forward(c.teacher_forced_input());
    double case_vs_reference = 0.0;
    for (std::size_t row = c.prompt_tokens.size() - 1; row < logits.size(); ++row) {
      case_vs_reference =
          std::max(case_vs_reference, relative_logit_error(logits[row], expected[row]));
    }
    EXPECT_LE(case_vs_reference, kQuantizedLogitRelativeTolerance);
    worst_vs_reference = std::max(worst_vs_reference, case_vs_reference);
    const auto stats = compare_teacher_forced(c, logits, kClearMargin);
    EXPECT_LE(stats.max_abs_chosen, q.logprob_tolerance)
        << "at generated position " << stats.worst_position;
    EXPECT_EQ(stats.top1_disagreements, 0u);
    worst_chosen = std::max(worst_chosen, stats.max_abs_chosen);
    worst_top5 = std::max(worst_top5, stats.max_abs_top5);
    clear += stats.clear_margin_positions;
    disagreements += stats.top1_disagreements;
  }
  std::printf(
      "[ measured ] CPU backend vs llama.cpp %s: max |dlogprob| chosen %.4g, top5 %.4g; "
      "top1 agrees at %zu/%zu clear-margin positions; relative logit error vs the "
      "float64 reference on the dequantized weights %.3g\n",
      q.name, worst_chosen, worst_top5, clear - disagreements, clear, worst_vs_reference);
}

INSTANTIATE_TEST_SUITE_P(Stories260K, CpuBackendOnQuantizedModels,
                         ::testing::ValuesIn(kQuantizedCases), [](const auto& param_info) {
                           std::string name = param_info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
