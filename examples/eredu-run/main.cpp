// eredu-run: generate text with a GGUF model.
//
//   eredu-run -m MODEL (-p PROMPT | -f FILE | -f -) [-n N] [--temp T] [--top-k K] [--top-p P]
//             [--min-p P] [--repeat-penalty R] [--seed S] [--ignore-eos] [-t THREADS]
//             [--backend cpu|vulkan|cuda|auto] [--device D] [-c N] [--kv-type f16|f32]
//             [--memory-budget SIZE] [--plan auto|FILE] [--print-plan]
//             [--json] [--chat|-cnv [--chat-template-file FILE] [--system TEXT]]
//             [--draft MODEL [--draft-max K] | --draft-ngram [N]]   (speculative.hpp)
//
// --plan auto (the default) plans the run from the model's headers and the device's memory: the
// context is -c when given (it must fit), else min(model context, what fits the memory budget,
// 4096); the KV cache is --kv-type (default f16); the budget is --memory-budget (e.g. 8GiB) or the
// device's free memory less 10%. A model that does not fit is rejected before any weight byte is
// read, with the numbers. The chosen context and why go to stderr. --plan FILE runs a saved plan
// (schema 1 or 2); -c / --kv-type / --memory-budget are then the plan's to say. A prompt plus -n
// tokens that would not fit the context is rejected before the weights load.
//
// --backend auto runs on the CPU (the Vulkan backend's per-element shaders are not faster than
// the CPU kernels yet, so auto never silently picks it). --backend vulkan runs on the device that
// --device selects (index or name substring; default: a discrete GPU before integrated, virtual
// and CPU devices such as llvmpipe). --backend cuda runs on the NVIDIA GPU --device selects (index
// or name substring; default: device 0).
// The prompt and the generated text stream to stdout; load progress and the prompt / generation
// speed (tokens/s) go to stderr. --json prints one JSON object instead (prompt_tokens,
// generated_tokens, text, finish_reason, timings). --print-plan prints the execution plan as JSON
// and its report (every decision, warning and rejection) as one JSON object {"plan", "report"}
// and exits without reading any weight. Ctrl-C stops generation after the current token.
// Exit codes: 0 success, 2 bad input (arguments, prompt, plan, model file) or a failed run.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/cpu_plan_factory.hpp"
#ifdef EREDU_HAVE_VULKAN_BACKEND
#include "eredu/backends/vulkan/vulkan_plan_factory.hpp"
#endif
#ifdef EREDU_HAVE_CUDA_BACKEND
#include "eredu/backends/cuda/cuda_plan_factory.hpp"
#include "eredu/backends/cuda/device.hpp"
#endif
#include "chat.hpp"
#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/generation/text_generation.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/execution_plan_json.hpp"
#include "eredu/plan/planner.hpp"
#include "eredu/plan/request_admission.hpp"
#include "eredu/runtime/load_model.hpp"
#include "eredu/runtime/plan_realization.hpp"
#include "eredu/text/gguf_tokenizer.hpp"
#include "speculative.hpp"

namespace {

constexpr int kExitBadInput = 2;

struct Options {
  std::string model;
  std::optional<std::string> prompt;
  std::optional<std::string> prompt_file;
  std::int64_t n_predict = -1;
  eredu::generation::SamplingConfig sampling;
  bool ignore_eos = false;
  std::size_t threads = 0;
  std::string backend = "auto";
  std::string device;
  std::string plan = "auto";   // "auto" or a plan file
  std::uint32_t ctx_size = 0;  // -c; 0: the planner's choice
  std::string kv_type;         // --kv-type; empty: the planner's choice (f16)
  std::string memory_budget;   // --memory-budget; empty: the device's free memory less headroom
  bool print_plan = false;
  bool json = false;
  bool chat = false;
  std::optional<std::string> chat_template_file;
  std::string system;
  eredu_run::SpeculativeOptions speculative;
};

int error_exit(const std::string& message) {
  std::fprintf(stderr, "eredu-run: error: %s\n", message.c_str());
  return kExitBadInput;
}

// The CLI flag a SamplingConfig field is set by (validation names the field).
std::string flag_of(const std::string& field) {
  if (field == "temperature") return "--temp";
  if (field == "top_k") return "--top-k";
  if (field == "top_p") return "--top-p";
  if (field == "min_p") return "--min-p";
  if (field == "repeat_penalty") return "--repeat-penalty";
  return field;
}

std::atomic<eredu::generation::CancellationToken*> g_cancel{nullptr};
extern "C" void on_interrupt(int /*signal*/) {
  if (auto* cancel = g_cancel.load()) cancel->request_stop();
}

eredu::Result<std::string> read_prompt(const Options& options) {
  if (options.prompt) return *options.prompt;
  std::string text;
  if (*options.prompt_file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return text;
  }
  std::ifstream in(*options.prompt_file, std::ios::binary);
  if (!in) {
    return eredu::fail(eredu::Error(eredu::ErrorCode::kIo, "cannot read the prompt file")
                           .with_path(*options.prompt_file));
  }
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return text;
}

// The backend this binary runs for --backend (auto: the CPU; see the header comment).
eredu::Result<std::string> resolve_backend(const std::string& requested) {
  if (requested == "auto" || requested == "cpu") return std::string("cpu");
#ifdef EREDU_HAVE_VULKAN_BACKEND
  if (requested == "vulkan") return std::string("vulkan");
#endif
#ifdef EREDU_HAVE_CUDA_BACKEND
  if (requested == "cuda") return std::string("cuda");
#endif
  std::string why = "backend '" + requested + "' is not built into this eredu-run";
#ifndef EREDU_HAVE_CUDA_BACKEND
  if (requested == "cuda") why += " (configure with -DEREDU_WITH_CUDA=ON and the CUDA toolkit)";
#endif
#ifndef EREDU_HAVE_VULKAN_BACKEND
  if (requested == "vulkan") why += " (configure with -DEREDU_WITH_VULKAN=ON)";
#endif
  why += "; available: cpu";
#ifdef EREDU_HAVE_VULKAN_BACKEND
  why += ", vulkan";
#endif
#ifdef EREDU_HAVE_CUDA_BACKEND
  why += ", cuda";
#endif
  why += ", auto";
  return eredu::fail(eredu::Error(eredu::ErrorCode::kUnsupported, why).with_subject("--backend"));
}

// "8GiB", "512MiB", "2G", "1500000000": bytes, with an optional binary suffix (K/M/G/T, with or
// without "iB"/"B").
eredu::Result<std::uint64_t> parse_size(const std::string& text) {
  std::size_t end = 0;
  std::uint64_t value = 0;
  try {
    value = std::stoull(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  std::string suffix = text.substr(end);
  for (char& c : suffix)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.ends_with("IB"))
    suffix.resize(suffix.size() - 2);
  else if (suffix.ends_with("B"))
    suffix.resize(suffix.size() - 1);
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K") shift = 10;
  if (suffix == "M") shift = 20;
  if (suffix == "G") shift = 30;
  if (suffix == "T") shift = 40;
  if (end == 0 || shift < 0 || value == 0 || value > (~std::uint64_t{0} >> shift)) {
    return eredu::fail(eredu::Error(eredu::ErrorCode::kInvalidArgument,
                                    "'" + text + "' is not a positive size (e.g. 8GiB, 512M)")
                           .with_subject("--memory-budget"));
  }
  return value << shift;
}

// The plan for this run and, when it was planned here, its report.
struct RunPlan {
  eredu::plan::ExecutionPlan plan;
  std::optional<eredu::plan::PlanReport> report;
};

template <typename Factory>
eredu::Result<RunPlan> make_plan(const Options& options, const Factory& factory,
                                 const eredu::ArtifactInspection* inspection) {
  if (options.plan != "auto") {
    EREDU_TRY(auto plan, eredu::plan::read_execution_plan_file(options.plan));
    return RunPlan{std::move(plan), std::nullopt};
  }
  eredu::plan::PlanRequest request;
  if (options.ctx_size != 0) request.context_length = options.ctx_size;
  if (!options.kv_type.empty()) request.kv_cache_type = eredu::parse_kv_cache_type(options.kv_type);
  if (!options.memory_budget.empty()) {
    EREDU_TRY(request.memory_budget_bytes, parse_size(options.memory_budget));
  }
  request.threads = static_cast<std::uint32_t>(options.threads);
  const eredu_run::SpeculativeOptions& spec = options.speculative;
  if (spec.ngram_order) {
    auto ngram = eredu::plan::DraftingPlan::ngram(*spec.ngram_order);
    if (!ngram) {
      return eredu::fail(
          eredu::Error(ngram.error().code(), "--draft-ngram: " + ngram.error().message())
              .with_subject("--draft-ngram"));
    }
    request.drafting = std::move(ngram).value();
  } else if (spec.draft_model) {
    EREDU_TRY(request.drafting, eredu::plan::DraftingPlan::external(*spec.draft_model));
    // The drafter's weights and cache count against the budget too (its headers only).
    auto draft = eredu::runtime::inspect_artifact(*spec.draft_model);
    if (!draft) return eredu::fail(std::move(draft).error().with_subject("--draft"));
    EREDU_TRY(request.draft_model, eredu::plan::inspect_model_requirements(*draft));
  }
  EREDU_TRY(auto planned, eredu::plan::plan_automatically(factory, *inspection, request));
  return RunPlan{std::move(planned.plan), std::move(planned.report)};
}

double ms(double seconds) {
  return seconds * 1000.0;
}

// What the load line says about where the model runs.
std::string placement(const eredu::cpu::CpuBackend& backend) {
  return " (" + std::to_string(backend.threads()) + " threads)";
}
#ifdef EREDU_HAVE_VULKAN_BACKEND
std::string placement(const eredu::vulkan::VulkanBackend& backend) {
  return " (" + backend.device().info().name + ")";
}
#endif
#ifdef EREDU_HAVE_CUDA_BACKEND
std::string placement(const eredu::cuda::CudaBackend& backend) {
  std::string where = " (cuda:" + std::to_string(backend.device_index());
  if (auto devices = eredu::cuda::list_devices()) {
    for (const auto& d : *devices) {
      if (d.index == backend.device_index()) where += " " + d.name;
    }
  }
  return where + ")";
}
#endif

// Loads and generates on the factory's backend (the same path for every backend).
template <typename Factory>
int run_on(const Options& options, const Factory& factory) {
  using eredu::generation::TokenId;
  using Backend = typename Factory::backend;
  // The plan is made from headers alone and checked against the backend (id, device,
  // capabilities, drafting, memory) before any weight byte is read; the realized backend and load
  // options then load the model. A saved plan is checked before the model is even opened.
  std::optional<eredu::ArtifactInspection> inspection;
  if (options.plan == "auto") {
    auto inspected = eredu::runtime::inspect_artifact(options.model);
    if (!inspected) return error_exit(inspected.error().what());
    inspection = std::move(inspected).value();
  }
  auto plan = make_plan(options, factory, inspection ? &*inspection : nullptr);
  if (!plan) {
    return error_exit(plan.error().what() +
                      (options.plan != "auto" ? " (plan " + options.plan + ")" : std::string()));
  }
  auto target = eredu::runtime::realize_execution_plan_target(factory, plan->plan);
  if (!target) {
    return error_exit(target.error().what() +
                      (options.plan != "auto" ? " (plan " + options.plan + ")" : std::string()));
  }
  Backend& backend = target->backend;
  if (options.print_plan) {
    nlohmann::json printed{{"plan", eredu::plan::execution_plan_to_json(plan->plan)},
                           {"report", nullptr}};
    if (plan->report) {
      printed = eredu::plan::planned_execution_to_json({plan->plan, *plan->report});
    }
    std::printf("%s\n", printed.dump(2).c_str());
    return 0;
  }
  if (plan->report) {
    for (const std::string& line : plan->report->decisions) {
      std::fprintf(stderr, "eredu-run: plan: %s\n", line.c_str());
    }
    for (const std::string& line : plan->report->warnings) {
      std::fprintf(stderr, "eredu-run: plan: warning: %s\n", line.c_str());
    }
  }

  std::optional<std::string> prompt_text;
  if (options.prompt || options.prompt_file) {
    auto text = read_prompt(options);
    if (!text) return error_exit(text.error().what());
    if (text->empty()) return error_exit("invalid argument: empty prompt");
    prompt_text = std::move(text).value();
  }

  const auto load_start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "eredu-run: loading %s on %s%s\n", options.model.c_str(),
               plan->plan.device().device().c_str(), placement(backend).c_str());
  if (!inspection) {
    auto inspected = eredu::runtime::inspect_artifact(options.model);
    if (!inspected) return error_exit(inspected.error().what());
    inspection = std::move(inspected).value();
  }
  auto gguf = eredu::checkpoint::GgufCheckpointSource::open(options.model);
  if (!gguf) return error_exit(gguf.error().what());
  auto tokenizer = eredu::text::make_tokenizer_from_gguf(gguf->primary());
  if (!tokenizer) return error_exit(tokenizer.error().what());

  // The model is admitted once (headers only); the request is checked against that admission
  // (positions, state memory) before any weight is read, and the same admission is loaded.
  auto config = eredu::runtime::plan_inspected_model(backend, *inspection, target->load_options);
  if (!config) return error_exit(config.error().what());
  std::vector<TokenId> prompt;
  if (!options.chat) {
    auto encoded = (*tokenizer)->encode(*prompt_text, {.add_bos = true});
    if (!encoded) return error_exit(encoded.error().what());
    prompt = std::move(encoded).value();
    // The planner's report already holds the requirements; a saved plan has no report.
    auto requirements =
        plan->report ? eredu::Result<eredu::plan::ModelRequirements>(plan->report->requirements)
                     : eredu::plan::inspect_model_requirements(*inspection);
    if (!requirements) return error_exit(requirements.error().what());
    const std::uint32_t context = config->selected.admission.max_positions;
    eredu::plan::SessionShape session{context, static_cast<std::uint32_t>(options.threads), {}};
    if (auto devices = backend.devices(); devices && !devices->empty()) {
      session.free_memory_bytes = devices->front().descriptor.free_memory_bytes;
    }
    auto admitted =
        eredu::plan::admit_request({prompt.size(), options.n_predict}, session, *requirements);
    if (!admitted) {
      const eredu::Error& e = admitted.error();
      return error_exit(e.subject() == "max_tokens" ? "-n: " + e.message() : e.what());
    }
  }
  std::fprintf(stderr, "eredu-run: tokenizer: %zu tokens; materializing weights\n",
               (*tokenizer)->vocab_size());
  auto runtime =
      eredu::runtime::ModelRuntime<Backend>::prepare(std::move(backend), std::move(*config));
  if (!runtime) {
    return error_exit(eredu::runtime::to_eredu_error(std::move(runtime).error())
                          .with_path(inspection->path.string())
                          .what());
  }
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::fprintf(stderr, "eredu-run: loaded in %.1f ms (context %u positions)\n", ms(load_seconds),
               runtime->session().max_positions());

  // The plan's drafting, realized by the backend's factory: prompt lookup, or the draft model
  // materialized on the target's device after its tokenizer is proven to be the target's.
  std::optional<eredu::plan::RealizedDrafting<eredu::runtime::ModelRuntime<Backend>>>
      realized_drafting;
  std::optional<eredu::plan::TokenizerCompatibilityProof> proof;
  if (plan->plan.drafting().kind() != eredu::plan::DraftingPlan::Kind::kDisabled) {
    std::optional<eredu::plan::ExternalDraftArtifact<typename Backend::model_config>> artifact;
    if (plan->plan.drafting().is_external()) {
      const std::string& draft_path = plan->plan.drafting().external_model();
      auto prepared = eredu_run::prepare_draft_artifact(draft_path, runtime->backend(), **tokenizer,
                                                        target->load_options);
      if (!prepared) return error_exit("--draft " + draft_path + ": " + prepared.error().what());
      proof = prepared->tokenizer;
      artifact = std::move(prepared).value();
    }
    const auto draft_start = std::chrono::steady_clock::now();
    auto realized = eredu::runtime::realize_execution_plan_drafting(factory, plan->plan, *runtime,
                                                                    std::move(artifact));
    if (!realized) return error_exit(realized.error().what());
    realized_drafting = std::move(realized).value();
    if (proof) {
      std::fprintf(stderr, "eredu-run: draft model %s loaded in %.1f ms\n",
                   plan->plan.drafting().external_model().c_str(),
                   ms(std::chrono::duration<double>(std::chrono::steady_clock::now() - draft_start)
                          .count()));
    }
  }

  if (options.chat) {
    eredu_run::ChatOptions chat;
    chat.template_file = options.chat_template_file;
    chat.system = options.system;
    chat.single_turn = prompt_text;
    chat.sampling = options.sampling;
    chat.max_tokens = options.n_predict;
    return eredu_run::run_chat(chat, *runtime, *tokenizer, gguf->primary());
  }

  eredu::generation::TextGenerationRequest request;
  request.prompt = prompt;
  request.sampling = options.sampling;
  request.ignore_eos = options.ignore_eos;
  request.max_tokens = options.n_predict;
  // Every end-of-generation token of the vocabulary (eos, eot, eom and the end-of-turn
  // markers such as <|im_end|> or <|eot_id|>).
  const auto eog = (*tokenizer)->eog_tokens();
  request.eos_ids.assign(eog.begin(), eog.end());
  auto generation = eredu::generation::TextGeneration<Backend>::create(*runtime, request);
  if (!generation) {
    const std::string subject = generation.error().subject();
    return error_exit(subject == "prompt" || subject.empty()
                          ? generation.error().what()
                          : flag_of(subject) + ": " + generation.error().message());
  }

  eredu::generation::CancellationToken cancel;
  g_cancel.store(&cancel);
  std::signal(SIGINT, on_interrupt);
  if (!options.json) {
    std::fwrite(prompt_text->data(), 1, prompt_text->size(), stdout);
    std::fflush(stdout);
  }
  if (realized_drafting) {
    const int code =
        eredu_run::run_speculative(options.speculative, *runtime, **tokenizer, request,
                                   std::move(*realized_drafting), proof, options.json, cancel);
    std::signal(SIGINT, SIG_DFL);
    g_cancel.store(nullptr);
    return code;
  }
  const auto piece_of = [&](TokenId id) { return (*tokenizer)->token_to_piece(id); };
  auto result = generation->run(cancel, piece_of, [&](std::string_view text) {
    if (options.json) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  });
  std::signal(SIGINT, SIG_DFL);
  g_cancel.store(nullptr);
  if (!result) return error_exit(result.error().what());

  const auto& t = result->timings;
  const double prompt_tps = t.prompt_tokens_per_second(result->prompt_tokens);
  const double gen_tps = t.generation_tokens_per_second();
  if (options.json) {
    nlohmann::json out{
        {"prompt_tokens", prompt},
        {"generated_tokens", result->tokens},
        {"text", result->text},
        {"finish_reason", std::string(eredu::generation::to_string(result->finish_reason))},
        {"timings",
         {{"load_ms", ms(load_seconds)},
          {"prompt_ms", ms(t.prompt_seconds)},
          {"prompt_tokens_per_second", prompt_tps},
          {"generation_ms", ms(t.generation_seconds)},
          {"decoded_tokens", t.decoded_tokens},
          {"generation_tokens_per_second", gen_tps}}},
    };
    // Invalid UTF-8 cannot occur (the stream guard replaces it), but never let dump() throw.
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    // End the text's line and flush it before the speed lines go to stderr, so the two streams
    // never run together on a terminal (stdout may be fully buffered when piped).
    std::printf("\n");
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "eredu-run: prompt: %lld tokens in %.2f ms (%.1f tokens/s)\n"
               "eredu-run: generation: %lld tokens in %.2f ms (%.1f tokens/s); finish: %s\n",
               static_cast<long long>(result->prompt_tokens), ms(t.prompt_seconds), prompt_tps,
               static_cast<long long>(result->tokens.size()), ms(t.generation_seconds), gen_tps,
               std::string(eredu::generation::to_string(result->finish_reason)).c_str());
  return 0;
}

int run(const Options& options) {
  auto backend_name = resolve_backend(options.backend);
  if (!backend_name) return error_exit(backend_name.error().what());
  if (options.threads > 4096) return error_exit("-t: thread count must be at most 4096");
  if (options.n_predict < -1) {
    return error_exit("-n: must be -1 (until the context is full) or a count >= 0, got " +
                      std::to_string(options.n_predict));
  }
  if (options.plan != "auto" && (options.ctx_size != 0 || !options.kv_type.empty() ||
                                 !options.memory_budget.empty() || options.speculative.enabled())) {
    return error_exit(
        "-c, --kv-type, --memory-budget, --draft and --draft-ngram plan a run; with --plan FILE "
        "the plan sets them");
  }
  if (auto valid = options.sampling.validate(); !valid) {
    return error_exit(flag_of(valid.error().subject()) + ": " + valid.error().message());
  }
#ifdef EREDU_HAVE_VULKAN_BACKEND
  if (*backend_name == "vulkan") {
    eredu::vulkan::VulkanBackendOptions backend_options;
    backend_options.device = options.device;
    return run_on(options, eredu::vulkan::VulkanPlanFactory(backend_options));
  }
#endif
#ifdef EREDU_HAVE_CUDA_BACKEND
  if (*backend_name == "cuda") {
    eredu::cuda::CudaBackendOptions backend_options;
    backend_options.device = options.device;
    return run_on(options, eredu::cuda::CudaPlanFactory(backend_options));
  }
#endif
  if (!options.device.empty()) return error_exit("--device: only with --backend vulkan or cuda");
  return run_on(options,
                eredu::cpu::CpuPlanFactory(eredu::cpu::CpuBackendOptions{options.threads}));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"eredu-run: generate text with a GGUF model"};
  app.add_option("-m,--model", options.model, "GGUF model file")->required();
  auto* prompt = app.add_option("-p,--prompt", options.prompt, "prompt text");
  auto* file =
      app.add_option("-f,--file", options.prompt_file, "read the prompt from FILE (- = stdin)");
  prompt->excludes(file);
  file->excludes(prompt);
  app.add_option("-n,--n-predict", options.n_predict,
                 "tokens to generate (-1: until the context is full)");
  app.add_option("--temp", options.sampling.temperature, "temperature (0: greedy)");
  app.add_option("--top-k", options.sampling.top_k, "top-k (0: off)");
  app.add_option("--top-p", options.sampling.top_p, "top-p (1: off)");
  app.add_option("--min-p", options.sampling.min_p, "min-p (0: off)");
  app.add_option("--repeat-penalty", options.sampling.repeat_penalty,
                 "repetition penalty (1: off)");
  app.add_option("--seed", options.sampling.seed, "sampler seed");
  app.add_flag("--ignore-eos", options.ignore_eos, "keep generating after end-of-sequence");
  app.add_option("-t,--threads", options.threads, "CPU threads (0: all)");
  app.add_option("--backend", options.backend, "cpu, vulkan, cuda or auto")
      ->check(CLI::IsMember({"cpu", "vulkan", "cuda", "auto"}));
  app.add_option(
      "--device", options.device,
      "Vulkan or CUDA device: index or name substring (default: Vulkan prefers a discrete GPU, "
      "CUDA device 0)");
  app.add_option("-c,--ctx-size", options.ctx_size,
                 "context length in positions (0: min(model context, what fits, 4096))");
  app.add_option("--kv-type", options.kv_type, "KV cache element type (default f16)")
      ->check(CLI::IsMember({"f16", "f32"}));
  app.add_option("--memory-budget", options.memory_budget,
                 "memory the plan must fit (e.g. 8GiB; default: free memory less 10%)");
  app.add_option("--plan", options.plan,
                 "auto (plan from the model and the device) or an execution plan file (JSON, "
                 "schema 1 or 2)");
  app.add_flag("--print-plan", options.print_plan,
               "print the execution plan and its report as JSON and exit");
  app.add_flag("--json", options.json, "print one JSON object instead of streaming text");
  app.add_flag("--chat", options.chat,
               "chat with the model's template (also -cnv): one user turn per input line (Ctrl-D "
               "ends); "
               "with -p, answer that turn and exit");
  app.add_option("--chat-template-file", options.chat_template_file,
                 "chat template (Jinja) to use instead of the model's tokenizer.chat_template");
  app.add_option("--system", options.system, "system message that opens the chat");
  eredu_run::add_speculative_options(app, options.speculative);
  // llama.cpp's spelling of --chat; CLI11 takes only one-letter names after a single dash.
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto& arg : args) {
    if (arg == "-cnv") arg = "--chat";
  }
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error_exit(e.what());
  }
  if (!options.chat && (options.chat_template_file || !options.system.empty())) {
    return error_exit("--chat-template-file and --system need --chat");
  }
  if (options.chat && options.json) return error_exit("--json does not apply to --chat");
  if (auto why = eredu_run::check_speculative_options(options.speculative, options.chat)) {
    return error_exit(*why);
  }
  if (!options.print_plan && !options.chat && !options.prompt && !options.prompt_file) {
    return error_exit("a prompt is required: -p PROMPT, -f FILE or -f -");
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    return error_exit(e.what());
  }
}
