#include "speculative_bench.hpp"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/generation/speculative/external_drafter.hpp"
#include "eredu/generation/speculative/ngram_drafter.hpp"
#include "eredu/generation/speculative/speculative_generation.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/runtime/load_model.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "eredu/text/vocabulary_fingerprint.hpp"

namespace eredu::bench {
namespace {

using Cpu = cpu::CpuBackend;
using Runtime = runtime::ModelRuntime<Cpu>;
namespace spec = generation::speculative;

int bench_error(const std::string& message) {
  std::string line = "eredu-bench: error: " + message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  return 2;
}

struct Row {
  std::string model;
  std::string drafter;
  double plain_tps = 0.0;
  double speculative_tps = 0.0;  // k drafts every round
  double acceptance = 0.0;
  double tokens_per_round = 0.0;
  double adaptive_tps = 0.0;  // the adaptive draft length (DraftLengthPolicy), up to k
  double adaptive_acceptance = 0.0;
  double adaptive_drafts_per_round = 0.0;
  bool identical = true;
};

Result<std::shared_ptr<const text::Tokenizer>> tokenizer_of(const std::string& path) {
  EREDU_TRY(auto gguf, checkpoint::GgufCheckpointSource::open(path));
  return text::make_tokenizer_from_gguf(gguf.primary());
}

Result<Runtime> load(const SpeculativeBenchOptions& options, const std::string& path,
                     std::uint32_t context) {
  cpu::CpuLoadOptions load_options;
  load_options.context_length = context;
  auto runtime =
      runtime::load_model(Cpu(cpu::CpuBackendOptions{options.threads}), path, load_options);
  if (!runtime) return fail(std::move(runtime).error());
  return std::move(runtime).value();
}

template <typename D>
Result<Row> measure(const SpeculativeBenchOptions& options, Runtime& target, D& drafter,
                    const text::Tokenizer& tokenizer,
                    const generation::TextGenerationRequest& request) {
  Row row;
  const auto piece_of = [&](generation::TokenId id) { return tokenizer.token_to_piece(id); };
  const auto ignore = [](std::string_view) {};
  generation::CancellationToken cancel;
  double plain_tps = 0.0;
  double spec_tps = 0.0;
  double adaptive_tps = 0.0;
  std::int64_t drafted = 0, accepted = 0, rounds = 0, decoded = 0;
  std::int64_t adaptive_drafted = 0, adaptive_accepted = 0, adaptive_rounds = 0;
  // One warm-up of each (first-touch of the weights and caches), then the measured runs.
  for (std::uint32_t r = 0; r <= options.repetitions; ++r) {
    EREDU_TRY(auto plain, generation::TextGeneration<Cpu>::create(target, request));
    EREDU_TRY(auto plain_result, plain.run(cancel, piece_of, ignore));
    EREDU_TRY(auto speculative,
              (spec::SpeculativeGeneration<Cpu, D>::create(
                  target, drafter, request, {.max_draft = options.draft_max, .adaptive = false})));
    EREDU_TRY(auto spec_result, speculative.run(cancel, piece_of, ignore));
    EREDU_TRY(auto adaptive,
              (spec::SpeculativeGeneration<Cpu, D>::create(
                  target, drafter, request, {.max_draft = options.draft_max, .adaptive = true})));
    EREDU_TRY(auto adaptive_result, adaptive.run(cancel, piece_of, ignore));
    if (spec_result.generation.tokens != plain_result.tokens) row.identical = false;
    if (adaptive_result.generation.tokens != plain_result.tokens) row.identical = false;
    if (r == 0) continue;
    adaptive_tps += adaptive_result.generation.timings.generation_tokens_per_second();
    adaptive_drafted += adaptive_result.statistics.drafted;
    adaptive_accepted += adaptive_result.statistics.accepted;
    adaptive_rounds += adaptive_result.statistics.rounds;
    plain_tps += plain_result.timings.generation_tokens_per_second();
    spec_tps += spec_result.generation.timings.generation_tokens_per_second();
    drafted += spec_result.statistics.drafted;
    accepted += spec_result.statistics.accepted;
    rounds += spec_result.statistics.rounds;
    decoded += spec_result.generation.timings.decoded_tokens;
  }
  row.plain_tps = plain_tps / options.repetitions;
  row.speculative_tps = spec_tps / options.repetitions;
  row.acceptance = drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0;
  row.tokens_per_round =
      rounds > 0 ? static_cast<double>(decoded) / static_cast<double>(rounds) : 0;
  row.adaptive_tps = adaptive_tps / options.repetitions;
  row.adaptive_acceptance = adaptive_drafted > 0 ? static_cast<double>(adaptive_accepted) /
                                                       static_cast<double>(adaptive_drafted)
                                                 : 0;
  row.adaptive_drafts_per_round = adaptive_rounds > 0 ? static_cast<double>(adaptive_drafted) /
                                                            static_cast<double>(adaptive_rounds)
                                                      : 0;
  return row;
}

Result<Row> bench_model(const SpeculativeBenchOptions& options, const std::string& path) {
  EREDU_TRY(auto tokenizer, tokenizer_of(path));
  generation::TextGenerationRequest request;
  EREDU_TRY(request.prompt, tokenizer->encode(options.prompt, {.add_bos = true}));
  request.sampling = generation::SamplingConfig::greedy();
  request.ignore_eos = true;
  request.max_tokens = options.n_gen;
  const auto context =
      static_cast<std::uint32_t>(request.prompt.size() + options.n_gen + options.draft_max + 8);
  EREDU_TRY(Runtime target, load(options, path, context));
  Row row;
  if (options.draft_model) {
    EREDU_TRY(auto draft_tokenizer, tokenizer_of(*options.draft_model));
    EREDU_TRY(auto proof, text::prove_tokenizer_compatibility(*tokenizer, *draft_tokenizer));
    EREDU_TRY(Runtime draft, load(options, *options.draft_model, context));
    EREDU_TRY(auto drafter, spec::ExternalDrafter<Cpu>::create(std::move(draft), proof));
    EREDU_TRY(row, measure(options, target, drafter, *tokenizer, request));
    row.drafter = "draft " + *options.draft_model;
  } else {
    EREDU_TRY(auto drafter, spec::NgramDrafter::create(options.ngram_order));
    EREDU_TRY(row, measure(options, target, drafter, *tokenizer, request));
    row.drafter = "n-gram " + std::to_string(options.ngram_order);
  }
  row.model = path;
  return row;
}

}  // namespace

int run_speculative_bench(const SpeculativeBenchOptions& options) {
  if (options.models.empty()) return bench_error("a target model is required: -m FILE");
  if (options.n_gen < 2) return bench_error("-n: at least 2 tokens are needed");
  if (options.draft_max == 0 || options.draft_max > spec::SpeculativeOptions::kMaxDraft) {
    return bench_error("--draft-max: must be 1.." +
                       std::to_string(spec::SpeculativeOptions::kMaxDraft));
  }
  if (options.prompt.empty()) return bench_error("--spec-prompt: empty prompt");
  std::vector<Row> rows;
  for (const std::string& path : options.models) {
    if (!options.quiet) {
      std::fprintf(stderr, "eredu-bench: speculative, %s, %zu threads\n", path.c_str(),
                   options.threads);
    }
    auto row = bench_model(options, path);
    if (!row) return bench_error(std::move(row).error().with_path(path).what());
    rows.push_back(std::move(row).value());
  }
  if (options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      out.push_back({{"model", r.model},
                     {"drafter", r.drafter},
                     {"draft_max", options.draft_max},
                     {"n_gen", options.n_gen},
                     {"threads", options.threads},
                     {"plain_tokens_per_second", r.plain_tps},
                     {"speculative_tokens_per_second", r.speculative_tps},
                     {"speedup", r.plain_tps > 0 ? r.speculative_tps / r.plain_tps : 0.0},
                     {"acceptance_rate", r.acceptance},
                     {"tokens_per_round", r.tokens_per_round},
                     {"adaptive_tokens_per_second", r.adaptive_tps},
                     {"adaptive_speedup", r.plain_tps > 0 ? r.adaptive_tps / r.plain_tps : 0.0},
                     {"adaptive_acceptance_rate", r.adaptive_acceptance},
                     {"adaptive_drafts_per_round", r.adaptive_drafts_per_round},
                     {"identical", r.identical}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf(
      "| model | drafter | k | n | threads | plain t/s | fixed-k t/s | speed-up | acceptance | "
      "tokens/round | adaptive t/s | speed-up | acceptance | drafts/round | identical |\n"
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
      "---: | --- |\n");
  for (const Row& r : rows) {
    const auto ratio = [&](double tps) { return r.plain_tps > 0 ? tps / r.plain_tps : 0.0; };
    std::printf(
        "| %s | %s | %u | %u | %zu | %.2f | %.2f | %.2fx | %.1f%% | %.2f | %.2f | %.2fx | %.1f%% | "
        "%.2f | %s |\n",
        r.model.c_str(), r.drafter.c_str(), options.draft_max, options.n_gen, options.threads,
        r.plain_tps, r.speculative_tps, ratio(r.speculative_tps), 100.0 * r.acceptance,
        r.tokens_per_round, r.adaptive_tps, ratio(r.adaptive_tps), 100.0 * r.adaptive_acceptance,
        r.adaptive_drafts_per_round, r.identical ? "yes" : "no");
  }
  return 0;
}

}  // namespace eredu::bench
