// The float64 reference on the dequantized weights of each quantized stories260K against
// llama.cpp's recordings for the same files, teacher-forced (../shared/reference/README.md).
// llama.cpp rounds activations to 8 bits (or F16) inside its quantized dot products and the
// reference does not, so the log-probabilities drift apart by an amount that grows with the
// coarseness of the weights. The tolerances below follow the README's guidance, widened where the
// measured deviation (printed as "[ measured ]") requires it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "reference_llama.hpp"
#include "shared_data.hpp"
#include "teacher_forced.hpp"

namespace {

using eredu::testing::models_dir;
using eredu::testing::reference_dir;
using eredu::testing::reference::compare_teacher_forced;
using eredu::testing::reference::load_greedy_cases;
using eredu::testing::reference::ReferenceLlama;

struct QuantizedCase {
  const char* name;          // model file stem; the recording is <stem>-greedy.json
  double logprob_tolerance;  // on the recorded greedy token's log-probability
};

// The README: "about 0.05 for Q8_0, 0.3 for Q4_0". The reference keeps activations exact where
// llama.cpp rounds them to 8 bits, which costs more than the README's 0.05 on the 8-bit files:
// measured max deviations of the greedy token's log-probability over 5 x 128 positions are
// Q8_0 0.077, Q4_0 0.082, Q4_K_M 0.087, Q6_K 0.077 (the F32 pass itself is off by up to 0.0036).
// Q6_K falls back mostly to Q8_0, Q4_K_M to a mix of Q5_0, Q8_0 and F16.
const QuantizedCase kCases[] = {
    {"stories260K-Q8_0-ffndownF16", 0.1},
    {"stories260K-Q4_0-ffndownF16", 0.3},
    {"stories260K-Q4_K_M", 0.15},
    {"stories260K-Q6_K", 0.1},
};
// top-1 must agree where the recording's top-1/top-2 gap is at least this (README).
constexpr double kClearMargin = 0.5;

class ReferenceOnQuantizedWeights : public ::testing::TestWithParam<QuantizedCase> {};

TEST_P(ReferenceOnQuantizedWeights, StaysWithinThePerFileToleranceOfLlamaCppTeacherForced) {
  const QuantizedCase& q = GetParam();
  const auto model_path = models_dir() / (std::string(q.name) + ".gguf");
  const auto json_path = reference_dir() / (std::string(q.name) + "-greedy.json");
  EREDU_REQUIRE_SHARED_PATH(model_path);
  EREDU_REQUIRE_SHARED_PATH(json_path);
  const ReferenceLlama model = ReferenceLlama::load(model_path);
  const auto cases = load_greedy_cases(json_path);
  ASSERT_EQ(cases.size(), 5u);

  double worst_chosen = 0.0;
  double worst_top5 = 0.0;
  std::size_t clear = 0;
  std::size_t disagreements = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prompt);
    const auto logits = model.forward(c.teacher_forced_input());
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
      "[ measured ] reference vs llama.cpp %s: max |dlogprob| chosen %.4g, top5 %.4g; "
      "top1 agrees at %zu/%zu clear-margin positions\n",
      q.name, worst_chosen, worst_top5, clear - disagreements, clear);
}

INSTANTIATE_TEST_SUITE_P(Stories260K, ReferenceOnQuantizedWeights, ::testing::ValuesIn(kCases),
                         [](const auto& param_info) {
                           std::string name = param_info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
