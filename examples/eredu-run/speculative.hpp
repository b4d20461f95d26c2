#pragma once
// eredu-run's speculative decoding: --draft MODEL [--draft-max K] (a draft model of the same
// backend and vocabulary) or --draft-ngram [N] (prompt lookup, no second model). The output is
// plain generation's (greedy output is identical to it; sampled output is distributed as it);
// stderr also reports the rounds, the acceptance rate (accepted / drafted) and tokens/s, and
// --json adds them under "speculative".

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/generation/speculative/external_drafter.hpp"
#include "eredu/generation/speculative/ngram_drafter.hpp"
#include "eredu/generation/speculative/speculative_generation.hpp"
#include "eredu/plan/realization.hpp"
#include "eredu/runtime/load_model.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "eredu/text/vocabulary_fingerprint.hpp"

namespace eredu_run {

struct SpeculativeOptions {
  std::optional<std::string> draft_model;  // --draft MODEL
  std::uint32_t draft_max = eredu::generation::speculative::SpeculativeOptions::kDefaultMaxDraft;
  std::optional<std::uint32_t> ngram_order;  // --draft-ngram [N]
  bool draft_fixed = false;                  // --draft-fixed: always --draft-max drafts
  [[nodiscard]] bool enabled() const { return draft_model.has_value() || ngram_order.has_value(); }
};

inline void add_speculative_options(CLI::App& app, SpeculativeOptions& options) {
  auto* draft = app.add_option("--draft", options.draft_model,
                               "speculative decoding with this draft model (same vocabulary)");
  auto* ngram = app.add_option("--draft-ngram", options.ngram_order,
                               "speculative decoding with prompt-lookup drafts: match the last N "
                               "tokens (default 3) in the history")
                    ->expected(0, 1)
                    ->default_str("3");
  draft->excludes(ngram);
  ngram->excludes(draft);
  app.add_option("--draft-max", options.draft_max,
                 "most draft tokens verified per round (default 8); each round drafts as many as "
                 "the measured acceptance and costs make worthwhile, 0 when drafting does not pay");
  app.add_flag("--draft-fixed", options.draft_fixed,
               "draft --draft-max tokens every round (no adaptive draft length)");
}

// An error message when the speculative options do not fit the rest of the command line.
inline std::optional<std::string> check_speculative_options(const SpeculativeOptions& options,
                                                            bool chat) {
  if (!options.enabled()) return std::nullopt;
  if (chat) return "--draft and --draft-ngram do not apply to --chat";
  if (options.draft_max == 0 ||
      options.draft_max > eredu::generation::speculative::SpeculativeOptions::kMaxDraft) {
    return "--draft-max: must be 1.." +
           std::to_string(eredu::generation::speculative::SpeculativeOptions::kMaxDraft);
  }
  return std::nullopt;
}

namespace detail {

inline int speculative_error(const std::string& message) {
  std::fprintf(stderr, "eredu-run: error: %s\n", message.c_str());
  return 2;
}

template <typename Backend, typename Drafter>
int generate(eredu::runtime::ModelRuntime<Backend>& runtime, Drafter& drafter,
             const std::string& drafter_name, const SpeculativeOptions& options,
             const eredu::text::Tokenizer& tokenizer,
             const eredu::generation::TextGenerationRequest& request, bool json,
             eredu::generation::CancellationToken& cancel) {
  using eredu::generation::TokenId;
  auto generation = eredu::generation::speculative::SpeculativeGeneration<Backend, Drafter>::create(
      runtime, drafter, request,
      {.max_draft = options.draft_max, .adaptive = !options.draft_fixed});
  if (!generation) return speculative_error(generation.error().what());
  const auto piece_of = [&](TokenId id) { return tokenizer.token_to_piece(id); };
  auto result = generation->run(cancel, piece_of, [&](std::string_view text) {
    if (json) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  });
  if (!result) return speculative_error(result.error().what());

  const auto& g = result->generation;
  const auto& s = result->statistics;
  const auto& t = g.timings;
  const double gen_tps = t.generation_tokens_per_second();
  if (json) {
    nlohmann::json out{
        {"prompt_tokens", request.prompt},
        {"generated_tokens", g.tokens},
        {"text", g.text},
        {"finish_reason", std::string(eredu::generation::to_string(g.finish_reason))},
        {"timings",
         {{"prompt_ms", t.prompt_seconds * 1000.0},
          {"prompt_tokens_per_second", t.prompt_tokens_per_second(g.prompt_tokens)},
          {"generation_ms", t.generation_seconds * 1000.0},
          {"decoded_tokens", t.decoded_tokens},
          {"generation_tokens_per_second", gen_tps}}},
        {"speculative",
         {{"drafter", drafter_name},
          {"draft_max", options.draft_max},
          {"rounds", s.rounds},
          {"drafted", s.drafted},
          {"accepted", s.accepted},
          {"plain_rounds", s.plain_rounds},
          {"adaptive", !options.draft_fixed},
          {"acceptance_rate", s.acceptance_rate()}}},
    };
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("\n");
  }
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "eredu-run: prompt: %lld tokens in %.2f ms (%.1f tokens/s)\n"
      "eredu-run: generation: %lld tokens in %.2f ms (%.1f tokens/s); finish: %s\n"
      "eredu-run: speculative (%s, up to %u drafts%s): %lld rounds (%lld without drafts), %lld "
      "drafted, %lld accepted (acceptance %.1f%%), %.2f tokens per round\n",
      static_cast<long long>(g.prompt_tokens), t.prompt_seconds * 1000.0,
      t.prompt_tokens_per_second(g.prompt_tokens), static_cast<long long>(g.tokens.size()),
      t.generation_seconds * 1000.0, gen_tps,
      std::string(eredu::generation::to_string(g.finish_reason)).c_str(), drafter_name.c_str(),
      options.draft_max, options.draft_fixed ? ", fixed" : "", static_cast<long long>(s.rounds),
      static_cast<long long>(s.plain_rounds), static_cast<long long>(s.drafted),
      static_cast<long long>(s.accepted), 100.0 * s.acceptance_rate(),
      s.rounds > 0 ? static_cast<double>(t.decoded_tokens) / static_cast<double>(s.rounds) : 0.0);
  return 0;
}

}  // namespace detail

// The draft model of --draft PATH prepared for `backend` (headers only: nothing is read but its
// metadata and tokenizer), with the proof that its tokenizer is the target's. The plan's
// realize_drafting then materializes it on the target's device.
template <typename Backend>
eredu::Result<eredu::plan::ExternalDraftArtifact<typename Backend::model_config>>
prepare_draft_artifact(const std::string& path, const Backend& backend,
                       const eredu::text::Tokenizer& tokenizer,
                       const typename Backend::load_options& load_options) {
  EREDU_TRY(auto gguf, eredu::checkpoint::GgufCheckpointSource::open(path));
  EREDU_TRY(auto draft_tokenizer, eredu::text::make_tokenizer_from_gguf(gguf.primary()));
  auto proof = eredu::text::prove_tokenizer_compatibility(tokenizer, *draft_tokenizer);
  if (!proof) return eredu::fail(std::move(proof).error().with_path(path));
  EREDU_TRY(auto inspection, eredu::runtime::inspect_artifact(path));
  auto config = eredu::runtime::plan_inspected_model(backend, inspection, load_options);
  if (!config) return eredu::fail(std::move(config).error());
  return eredu::plan::ExternalDraftArtifact<typename Backend::model_config>{
      std::move(config).value(), std::move(proof).value()};
}

// Generates `request` speculatively on `runtime` (the target) with the drafting the plan realized:
// prompt lookup, or the draft model's runtime (with the tokenizer proof it was prepared with).
template <typename Backend>
int run_speculative(const SpeculativeOptions& options,
                    eredu::runtime::ModelRuntime<Backend>& runtime,
                    const eredu::text::Tokenizer& tokenizer,
                    const eredu::generation::TextGenerationRequest& request,
                    eredu::plan::RealizedDrafting<eredu::runtime::ModelRuntime<Backend>>&& realized,
                    const std::optional<eredu::plan::TokenizerCompatibilityProof>& proof, bool json,
                    eredu::generation::CancellationToken& cancel) {
  namespace spec = eredu::generation::speculative;
  if (realized.kind() == eredu::plan::DraftingPlan::Kind::kNgram) {
    auto drafter = spec::NgramDrafter::create(realized.ngram_size());
    if (!drafter) return detail::speculative_error("--draft-ngram: " + drafter.error().message());
    return detail::generate(runtime, *drafter, "n-gram " + std::to_string(realized.ngram_size()),
                            options, tokenizer, request, json, cancel);
  }
  if (realized.drafter() == nullptr || !proof) {
    return detail::speculative_error("the plan realized no draft model");
  }
  auto drafter = spec::ExternalDrafter<Backend>::create(std::move(*realized.drafter()), *proof,
                                                        request.sampling);
  if (!drafter) return detail::speculative_error("--draft: " + drafter.error().what());
  return detail::generate(runtime, *drafter, "draft model", options, tokenizer, request, json,
                          cancel);
}

}  // namespace eredu_run
