#pragma once
// eredu-bench --speculative: the speed-up of speculative decoding over plain decoding on the CPU
// backend. For each target model, a greedy generation of n tokens from one prompt runs plainly
// and speculatively (n-gram drafter or a draft model), r times each, alternating; the table gives
// generation tokens/s for both (mean over the repetitions), the speed-up, the acceptance rate,
// tokens per verification round, and whether the two outputs are token-identical (they must be
// for greedy decoding; a "no" is a finding, not a rounding matter to hide).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eredu::bench {

struct SpeculativeBenchOptions {
  std::vector<std::string> models;  // targets
  std::optional<std::string> draft_model;
  std::uint32_t ngram_order = 3;  // used when there is no draft model
  std::uint32_t draft_max = 8;
  std::uint32_t n_gen = 128;
  std::uint32_t repetitions = 3;
  std::size_t threads = 1;
  std::string prompt;
  bool json = false;
  bool quiet = false;
};

// Runs the comparison and prints the table (markdown, or JSON) on stdout; returns the exit code
// (2 with one error line on stderr on failure).
int run_speculative_bench(const SpeculativeBenchOptions& options);

}  // namespace eredu::bench
