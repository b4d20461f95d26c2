#pragma once
// The quantized models' teacher-forced comparison, written once and instantiated per device
// backend: the quantized stories260K files (mixed per-tensor encodings: F16, Q8_0, Q4_0, Q5_0,
// K-quants), fed the reference tokens (prompt, then each recorded token), give each reference
// token a log-probability within the CPU test's tolerance of llama.cpp's
// (tests/e2e/llama/test_quantized_teacher_forced.cpp), and the same top-1 wherever llama.cpp's
// top-1/top-2 margin is clear (> 0.5). The backend is described as for family_greedy_suite.hpp:
//
//   struct MyBackend {
//     static std::string unavailable();                 // non-empty: skip with this reason
//     static auto load(const std::filesystem::path&, eredu::KvCacheType);  // Result<ModelRuntime>
//     static void after_case() {}                       // e.g. fail on validation messages
//   };
//   EREDU_QUANTIZED_TEACHER_FORCED_SUITE(MyBackendName, MyBackend)

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "eredu/core/kv_cache_type.hpp"
#include "logit_math.hpp"
#include "shared_data.hpp"
#include "teacher_forced.hpp"

namespace eredu::testing::quantized_teacher_forced {

struct Param {
  const char* model;
  double tolerance;  // the CPU backend test's
};

inline const Param kModels[] = {Param{"stories260K-Q8_0-ffndownF16", 0.12},
                                Param{"stories260K-Q4_0-ffndownF16", 0.3},
                                Param{"stories260K-Q6_K", 0.3}, Param{"stories260K-Q4_K_M", 0.3}};

inline std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string n = info.param.model;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

template <typename Backend>
void run(const Param& param) {
  const std::string reason = Backend::unavailable();
  if (!reason.empty()) GTEST_SKIP() << reason;
  const std::string name = param.model;
  const auto model_path = models_dir() / (name + ".gguf");
  const auto reference_path = reference_dir() / (name + "-greedy.json");
  EREDU_REQUIRE_SHARED_PATH(model_path);
  EREDU_REQUIRE_SHARED_PATH(reference_path);
  const auto cases = reference::load_greedy_cases(reference_path);
  auto runtime = Backend::load(model_path, KvCacheType::kF32);
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.prompt);
    ASSERT_TRUE(runtime->session_mut().truncate(0).has_value());
    auto sub = runtime->prefill(
        std::vector<std::uint32_t>(c.prompt_tokens.begin(), c.prompt_tokens.end()));
    ASSERT_TRUE(sub.has_value()) << sub.error().what();
    auto logits = runtime->observe_output(sub->output);
    ASSERT_TRUE(logits.has_value()) << logits.error().what();
    double worst = 0.0;
    int top1_disagreements = 0;
    for (std::size_t i = 0; i < c.generated_tokens.size() && i < c.top5.size(); ++i) {
      const auto lp = log_softmax(*logits);
      const auto& ref = c.top5[i];
      for (const auto& e : ref) {
        if (e.id != c.generated_tokens[i]) continue;
        worst = std::max(worst, std::abs(lp[static_cast<std::size_t>(e.id)] - e.logprob));
      }
      if (ref.size() >= 2 && ref[0].logprob - ref[1].logprob > 0.5 &&
          static_cast<int>(argmax(*logits)) != ref[0].id) {
        ++top1_disagreements;
      }
      if (i + 1 == c.generated_tokens.size()) break;
      auto step = runtime->decode(static_cast<std::uint32_t>(c.generated_tokens[i]));
      ASSERT_TRUE(step.has_value()) << step.error().what();
      logits = runtime->observe_output(step->output);
      ASSERT_TRUE(logits.has_value()) << logits.error().what();
    }
    EXPECT_LE(worst, param.tolerance);
    EXPECT_EQ(top1_disagreements, 0);
  }
  Backend::after_case();
}

}  // namespace eredu::testing::quantized_teacher_forced

#define EREDU_QUANTIZED_TEACHER_FORCED_SUITE(Name, Backend)                                    \
  class Name##QuantizedTeacherForced                                                           \
      : public ::testing::TestWithParam<::eredu::testing::quantized_teacher_forced::Param> {}; \
  TEST_P(Name##QuantizedTeacherForced,                                                         \
         ReferenceTokensGetLlamaCppLogProbabilitiesWithinTolerance) {                          \
    ::eredu::testing::quantized_teacher_forced::run<Backend>(GetParam());                      \
  }                                                                                            \
  INSTANTIATE_TEST_SUITE_P(                                                                    \
      Models, Name##QuantizedTeacherForced,                                                    \
      ::testing::ValuesIn(::eredu::testing::quantized_teacher_forced::kModels),                \
      ::eredu::testing::quantized_teacher_forced::param_name);
