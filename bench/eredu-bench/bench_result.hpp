#pragma once
// One row of eredu-bench's table: a test (pp or tg) of one model on one backend, its repetitions'
// timings and the statistics printed from them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model_facts.hpp"

namespace eredu::bench {

enum class TestKind { kPrompt, kGeneration };

struct TestResult {
  ModelFacts model;
  std::string backend;
  std::size_t threads = 0;
  TestKind kind = TestKind::kPrompt;
  std::uint32_t n_prompt = 0;   // pp: tokens of the one batch; tg: 0
  std::uint32_t n_gen = 0;      // tg: tokens decoded one by one; pp: 0
  std::uint32_t n_depth = 0;    // tokens already in the cache when the test starts (-d)
  std::vector<double> seconds;  // wall time of each repetition

  // "pp128" / "tg64", "pp128 @ d512" after a cached prefix, as llama-bench names its tests.
  [[nodiscard]] std::string test_name() const;
  // Tokens one repetition processes.
  [[nodiscard]] std::uint32_t tokens() const noexcept {
    return kind == TestKind::kPrompt ? n_prompt : n_gen;
  }
  // Tokens per second of each repetition, their mean and sample standard deviation (n - 1; 0 for
  // one repetition), as llama-bench computes avg_ts and stddev_ts.
  [[nodiscard]] std::vector<double> samples_ts() const;
  [[nodiscard]] double avg_ts() const;
  [[nodiscard]] double stddev_ts() const;
  [[nodiscard]] double avg_seconds() const;
  [[nodiscard]] double stddev_seconds() const;
  // tg: matrix weight bytes read per second (model.matrix_bytes x avg_ts / 1e9). pp: absent.
  [[nodiscard]] std::optional<double> gb_per_s() const;
  // pp: model.prefill_flops(n_prompt) / mean seconds / 1e9. tg: absent.
  [[nodiscard]] std::optional<double> gflop_per_s() const;
};

[[nodiscard]] double mean(const std::vector<double>& values);
[[nodiscard]] double sample_stddev(const std::vector<double>& values);

}  // namespace eredu::bench
