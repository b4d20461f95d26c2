#pragma once
// The measurement loop, written once for any backend that loads models through
// eredu::runtime (the CpuBackend today; VulkanBackend / a CUDA backend plug in through main.cpp).
//
// As llama-bench does it:
//   pp<p>: one prefill of p tokens into a fresh sequence (the cache truncated to 0 first);
//          warm-up: one such prefill.
//   tg<n>: n tokens decoded one by one, starting from an empty sequence; warm-up: one token.
//   ... @ d<d> (-d): the same, after a prefix of d tokens already in the cache: the prefix is
//          prefilled once per test, untimed, and every repetition truncates back to it (llama-bench
//          restores a saved state instead), so attention reads d more positions per token.
// Each repetition is timed from its first submission to the completion of its last one. Tokens
// are random ids in [3, n_vocab) from a fixed seed, so every run and every backend sees the same
// ids.

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_result.hpp"
#include "eredu/core/result.hpp"
#include "eredu/runtime/bindings.hpp"
#include "eredu/runtime/load_model.hpp"
#include "model_facts.hpp"

namespace eredu::bench {

struct RunOptions {
  std::vector<std::uint32_t> n_prompt{128};  // one pp test per value (0 = none)
  std::vector<std::uint32_t> n_gen{64};      // one tg test per value (0 = none)
  std::vector<std::uint32_t> n_depth{0};     // every test once per value: tokens already cached
  std::uint32_t repetitions = 3;
  std::uint64_t seed = 1234;
};

// The KV positions a model needs for these tests (the longest one).
[[nodiscard]] inline std::uint32_t context_needed(const RunOptions& options) {
  std::uint32_t most = 1;
  for (std::uint32_t p : options.n_prompt)
    most = std::max(most, p);
  for (std::uint32_t n : options.n_gen)
    most = std::max(most, n);
  std::uint32_t deepest = 0;
  for (std::uint32_t d : options.n_depth)
    deepest = std::max(deepest, d);
  return deepest + most;
}

// `count` random token ids in [3, n_vocab) (ids 0..2 are unk, bos, eos in the llama vocabulary).
[[nodiscard]] inline std::vector<std::uint32_t> random_tokens(std::mt19937_64& rng,
                                                              std::uint32_t n_vocab,
                                                              std::uint32_t count) {
  const std::uint32_t low = n_vocab > 3 ? 3 : 0;
  std::uniform_int_distribution<std::uint32_t> pick(low, n_vocab - 1);
  std::vector<std::uint32_t> tokens(count);
  for (auto& t : tokens)
    t = pick(rng);
  return tokens;
}

namespace detail {

// Waits for a submission and turns any backend error into an eredu::Error naming `what`.
template <typename SubmissionResult>
[[nodiscard]] Result<void> finish(SubmissionResult&& submitted, const std::string& what) {
  if (!submitted) {
    return fail(runtime::to_eredu_error(std::move(submitted).error()).with_subject(what));
  }
  auto done = submitted->completion.wait();
  if (!done) return fail(runtime::to_eredu_error(std::move(done).error()).with_subject(what));
  return ok();
}

// Back to the first `depth` cached tokens (0: an empty sequence).
template <typename Runtime>
[[nodiscard]] Result<void> reset(Runtime& rt, std::uint32_t depth) {
  auto truncated = rt.session_mut().truncate(depth);
  if (!truncated) return fail(runtime::to_eredu_error(std::move(truncated).error()));
  return ok();
}

template <typename Runtime>
[[nodiscard]] Result<void> run_prompt(Runtime& rt, std::uint32_t depth,
                                      const std::vector<std::uint32_t>& tokens) {
  EREDU_TRY_VOID(reset(rt, depth));
  std::vector<std::uint32_t> batch = tokens;
  return finish(rt.prefill(std::move(batch)), "prefill");
}

template <typename Runtime>
[[nodiscard]] Result<void> run_generation(Runtime& rt, std::uint32_t depth,
                                          const std::vector<std::uint32_t>& tokens) {
  EREDU_TRY_VOID(reset(rt, depth));
  for (std::uint32_t token : tokens) {
    std::uint32_t next = token;
    EREDU_TRY_VOID(finish(rt.decode(std::move(next)), "decode"));
  }
  return ok();
}

}  // namespace detail

// Loads the inspected model on `backend` and runs every test of `options` on it.
template <typename Backend>
[[nodiscard]] Result<std::vector<TestResult>> run_model(
    Backend backend, const typename Backend::load_options& load_options,
    const ArtifactInspection& inspection, const ModelFacts& facts, const std::string& backend_name,
    std::size_t threads, const RunOptions& options) {
  auto loaded = runtime::prepare_inspected_model(std::move(backend), inspection, load_options);
  if (!loaded) return fail(std::move(loaded).error());
  auto& rt = *loaded;

  std::mt19937_64 rng(options.seed);
  std::vector<TestResult> rows;
  auto measure = [&](TestKind kind, std::uint32_t count, std::uint32_t depth) -> Result<void> {
    TestResult row;
    row.model = facts;
    row.backend = backend_name;
    row.threads = threads;
    row.kind = kind;
    (kind == TestKind::kPrompt ? row.n_prompt : row.n_gen) = count;
    row.n_depth = depth;
    if (depth > 0) {  // the cached prefix, untimed; every run below truncates back to it
      EREDU_TRY_VOID(detail::run_prompt(rt, 0, random_tokens(rng, facts.n_vocab, depth)));
    }
    const std::vector<std::uint32_t> tokens = random_tokens(rng, facts.n_vocab, count);
    auto once = [&](const std::vector<std::uint32_t>& ids) {
      return kind == TestKind::kPrompt ? detail::run_prompt(rt, depth, ids)
                                       : detail::run_generation(rt, depth, ids);
    };
    // Warm-up: the whole batch for pp, one token for tg (as llama-bench).
    EREDU_TRY_VOID(
        once(kind == TestKind::kPrompt ? tokens : std::vector<std::uint32_t>{tokens[0]}));
    for (std::uint32_t rep = 0; rep < options.repetitions; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      EREDU_TRY_VOID(once(tokens));
      row.seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    rows.push_back(std::move(row));
    return ok();
  };
  for (std::uint32_t d : options.n_depth) {
    for (std::uint32_t p : options.n_prompt) {
      if (p > 0) EREDU_TRY_VOID(measure(TestKind::kPrompt, p, d));
    }
    for (std::uint32_t n : options.n_gen) {
      if (n > 0) EREDU_TRY_VOID(measure(TestKind::kGeneration, n, d));
    }
  }
  return rows;
}

}  // namespace eredu::bench
