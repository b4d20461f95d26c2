// eredu-bench: prompt-processing (pp) and text-generation (tg) throughput of GGUF models, measured
// as llama.cpp's llama-bench measures them, and the machine's memory-read bandwidth.
//
//   eredu-bench -m FILE [-m FILE...] [-p 128] [-n 64] [-r 3] [-t 2] [--backend cpu|vulkan|cuda]
//               [--device D] [--kv-type f16|f32] [-o md|csv|json]
//   eredu-bench --bandwidth [-t 2] [--bandwidth-mib 1024] [-r 10] [-o md|csv|json]
//   eredu-bench --products -m FILE [-t 2] [-r 8] [--bandwidth-mib 1024] [-o md|csv|json]
//               (a token's matrix products alone, interleaved with the read test; products.hpp)
//   eredu-bench --speculative -m TARGET [-m ...] [--draft FILE | --draft-ngram N] [--draft-max 8]
//               [-n 128] [-r 3] [-t T] [--spec-prompt TEXT] [-o md|json]   (CPU; speculative_bench)
//
// -p, -n and -t take comma-separated lists (one test / run per value). The table goes to stdout,
// progress to stderr. Exit codes: 0 success, 2 bad input (arguments, a missing or malformed model
// file) or a failed run, with one line on stderr.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "bandwidth.hpp"
#include "bench_runner.hpp"
#include "eredu/backends/cpu/cpu_backend.hpp"
#if defined(EREDU_HAVE_VULKAN_BACKEND)
#include "eredu/backends/vulkan/vulkan_backend.hpp"
#endif
#if defined(EREDU_HAVE_CUDA_BACKEND)
#include "eredu/backends/cuda/cuda_backend.hpp"
#endif
#include "eredu/core/log.hpp"
#include "eredu/runtime/load_model.hpp"
#include "model_facts.hpp"
#include "products.hpp"
#include "report.hpp"
#include "speculative_bench.hpp"

namespace {

constexpr int kExitBadInput = 2;

struct Options {
  std::vector<std::string> models;
  std::vector<std::uint32_t> n_prompt{128};
  std::vector<std::uint32_t> n_gen{64};
  std::vector<std::uint32_t> n_depth{0};
  std::uint32_t repetitions = 3;
  std::vector<std::size_t> threads;
  std::string backend = "cpu";
  std::string device;  // --device for the Vulkan or CUDA backend (index or name substring)
  std::string kv_type = "f16";
  std::string output = "md";
  bool bandwidth = false;
  bool products = false;
  std::uint64_t bandwidth_mib = 1024;
  bool quiet = false;
  bool speculative = false;
  eredu::bench::SpeculativeBenchOptions spec;
};

int error_exit(const std::string& message) {
  std::string line = "eredu-bench: error: " + message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  return kExitBadInput;
}

eredu::bench::OutputFormat output_format(const std::string& name) {
  if (name == "csv") return eredu::bench::OutputFormat::kCsv;
  if (name == "json") return eredu::bench::OutputFormat::kJson;
  return eredu::bench::OutputFormat::kMarkdown;
}

std::size_t default_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

// Loads `inspection` on the named backend with `threads` threads and runs the tests.
eredu::Result<std::vector<eredu::bench::TestResult>> run_on_backend(
    const Options& options, std::size_t threads, const eredu::ArtifactInspection& inspection,
    const eredu::bench::ModelFacts& facts, const eredu::bench::RunOptions& run) {
  const std::uint32_t context = eredu::bench::context_needed(run);
  if (options.backend == "cpu") {
    eredu::cpu::CpuLoadOptions load;
    load.context_length = context;
    load.kv_cache_type =
        options.kv_type == "f32" ? eredu::cpu::KvCacheType::kF32 : eredu::cpu::KvCacheType::kF16;
    return eredu::bench::run_model(eredu::cpu::CpuBackend(eredu::cpu::CpuBackendOptions{threads}),
                                   load, inspection, facts, "cpu", threads, run);
  }
#if defined(EREDU_HAVE_VULKAN_BACKEND)
  if (options.backend == "vulkan") {
    // run_model waits on each submission's completion, so the device's time is fully counted.
    eredu::vulkan::VulkanBackendOptions backend_options;
    backend_options.device = options.device;
    EREDU_TRY(auto vk, eredu::vulkan::VulkanBackend::create(std::move(backend_options)));
    eredu::vulkan::VulkanLoadOptions load;
    load.context_length = context;
    load.kv_cache_type = options.kv_type == "f32" ? eredu::vulkan::KvCacheType::kF32
                                                  : eredu::vulkan::KvCacheType::kF16;
    return eredu::bench::run_model(std::move(vk), load, inspection, facts, "vulkan", threads, run);
  }
#endif
#if defined(EREDU_HAVE_CUDA_BACKEND)
  if (options.backend == "cuda") {
    // As for Vulkan: each submission's completion is waited on, so the GPU's time is counted.
    eredu::cuda::CudaBackendOptions backend_options;
    backend_options.device = options.device;
    EREDU_TRY(auto gpu, eredu::cuda::CudaBackend::create(backend_options));
    eredu::cuda::CudaLoadOptions load;
    load.context_length = context;
    load.kv_cache_type =
        options.kv_type == "f32" ? eredu::cuda::KvCacheType::kF32 : eredu::cuda::KvCacheType::kF16;
    return eredu::bench::run_model(std::move(gpu), load, inspection, facts, "cuda", threads, run);
  }
#endif
  // A backend that loads through eredu::runtime (same concepts as CpuBackend) plugs in as above.
  std::string why = "backend " + options.backend + " is not built into eredu-bench";
  why += "; available: cpu";
#if defined(EREDU_HAVE_VULKAN_BACKEND)
  why += ", vulkan";
#endif
#if defined(EREDU_HAVE_CUDA_BACKEND)
  why += ", cuda";
#endif
  return eredu::fail(eredu::Error(eredu::ErrorCode::kUnsupported, why).with_subject("--backend"));
}

int run_bandwidth(const Options& options) {
  eredu::bench::BandwidthOptions bw;
  bw.threads = options.threads.empty() ? default_threads() : options.threads.front();
  bw.bytes = options.bandwidth_mib << 20;
  bw.passes = options.repetitions;
  if (!options.quiet) {
    std::fprintf(stderr, "eredu-bench: reading %llu MiB %zu times with %zu threads\n",
                 static_cast<unsigned long long>(options.bandwidth_mib), bw.passes, bw.threads);
  }
  auto result = eredu::bench::measure_read_bandwidth(bw);
  if (!result) return error_exit(result.error().what());
  const std::string text = eredu::bench::render_bandwidth(*result, output_format(options.output));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int run_products(const Options& options) {
  if (options.backend != "cpu") return error_exit("--products: only with --backend cpu");
  if (options.models.size() != 1) return error_exit("--products: one model, -m FILE");
  eredu::bench::ProductsOptions products;
  products.model = options.models.front();
  products.threads = options.threads.front();
  products.rounds = options.repetitions;
  products.read_bytes = options.bandwidth_mib << 20;
  products.quiet = options.quiet;
  auto result = eredu::bench::measure_decode_products(products);
  if (!result) return error_exit(std::move(result).error().with_path(products.model).what());
  const std::string text = eredu::bench::render_products(*result, output_format(options.output));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int run(Options options) {
  if (options.threads.empty()) options.threads.push_back(default_threads());
  for (std::size_t t : options.threads) {
    if (t == 0 || t > 4096) return error_exit("-t: thread counts must be in 1..4096");
  }
  if (options.repetitions == 0) return error_exit("-r: at least one repetition is needed");
  if (options.bandwidth_mib == 0 || options.bandwidth_mib > (std::uint64_t{1} << 20)) {
    return error_exit("--bandwidth-mib: must be in 1..1048576");
  }
  if (options.bandwidth) return run_bandwidth(options);
  if (options.products) return run_products(options);
  if (options.models.empty()) return error_exit("a model is required: -m FILE (or --bandwidth)");
  if (options.speculative) {
    if (options.backend != "cpu") return error_exit("--speculative: only with --backend cpu");
    if (options.output == "csv") return error_exit("--speculative: -o md or json");
    options.spec.models = options.models;
    options.spec.n_gen = options.n_gen.front();
    options.spec.repetitions = options.repetitions;
    options.spec.threads = options.threads.front();
    options.spec.json = options.output == "json";
    options.spec.quiet = options.quiet;
    return eredu::bench::run_speculative_bench(options.spec);
  }

  eredu::bench::RunOptions run;
  run.n_prompt = options.n_prompt;
  run.n_gen = options.n_gen;
  run.n_depth = options.n_depth;
  run.repetitions = options.repetitions;
  bool any_test = false;
  for (std::uint32_t v : run.n_prompt)
    any_test = any_test || v > 0;
  for (std::uint32_t v : run.n_gen)
    any_test = any_test || v > 0;
  if (!any_test) return error_exit("nothing to measure: -p and -n are all 0");

  // Every model is checked (headers only) before the first one is measured, so a typo in the
  // last -m fails at once instead of after minutes of benchmarking.
  std::vector<eredu::ArtifactInspection> inspections;
  std::vector<eredu::bench::ModelFacts> facts;
  for (const std::string& path : options.models) {
    auto inspection = eredu::runtime::inspect_artifact(path);
    if (!inspection) return error_exit(std::move(inspection).error().with_path(path).what());
    auto model = eredu::bench::model_facts(path, inspection->architecture, *inspection->tensors);
    if (!model) return error_exit(model.error().what());
    inspections.push_back(std::move(inspection).value());
    facts.push_back(std::move(model).value());
  }

  std::vector<eredu::bench::TestResult> rows;
  for (std::size_t m = 0; m < inspections.size(); ++m) {
    for (std::size_t threads : options.threads) {
      if (!options.quiet) {
        std::fprintf(stderr, "eredu-bench: %s on %s, %zu threads\n", facts[m].file.c_str(),
                     options.backend.c_str(), threads);
      }
      auto results = run_on_backend(options, threads, inspections[m], facts[m], run);
      if (!results) return error_exit(std::move(results).error().with_path(facts[m].file).what());
      for (auto& row : *results)
        rows.push_back(std::move(row));
    }
  }
  const std::string text = eredu::bench::render_results(rows, output_format(options.output));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "eredu-bench: prompt processing (pp) and text generation (tg) speed of GGUF models, as "
      "llama-bench measures them; --bandwidth: the memory-read bandwidth of this machine",
      "eredu-bench"};
  app.add_option("-m,--model", options.models, "GGUF model file (repeatable)");
  app.add_option("-p,--n-prompt", options.n_prompt, "prompt tokens per pp test (list; 0: no pp)")
      ->delimiter(',');
  app.add_option("-n,--n-gen", options.n_gen, "tokens generated per tg test (list; 0: no tg)")
      ->delimiter(',');
  app.add_option("-d,--n-depth", options.n_depth,
                 "tokens already in the cache when each test starts (list; llama-bench's -d)")
      ->delimiter(',');
  app.add_option("-r,--repetitions", options.repetitions,
                 "repetitions of each test (--bandwidth: read passes, default 10)");
  app.add_option("-t,--threads", options.threads, "CPU threads (list; default: all)")
      ->delimiter(',');
  app.add_option("--backend", options.backend, "cpu, vulkan or cuda")
      ->check(CLI::IsMember({"cpu", "vulkan", "cuda"}));
  app.add_option("--device", options.device,
                 "Vulkan or CUDA device: index or name substring (default: Vulkan's discrete GPU "
                 "first, CUDA device 0)");
  app.add_option("--kv-type", options.kv_type, "KV cache element type (llama-bench: f16)")
      ->check(CLI::IsMember({"f16", "f32"}));
  app.add_option("-o,--output", options.output, "md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  app.add_flag("--bandwidth", options.bandwidth,
               "measure the memory-read bandwidth (with the first -t) instead of models");
  app.add_option("--bandwidth-mib", options.bandwidth_mib,
                 "bandwidth buffer size (MiB; also --products' read test)");
  app.add_flag("--products", options.products,
               "one model's one-token matrix products alone, interleaved with the read test "
               "(CPU, first -t; -r rounds, default 8)");
  app.add_flag("-q,--quiet", options.quiet, "no progress lines on stderr");
  app.add_flag("--speculative", options.speculative,
               "speculative decoding vs plain decoding (greedy, first -n and -t)");
  app.add_option("--draft", options.spec.draft_model, "--speculative: draft model");
  app.add_option("--draft-ngram", options.spec.ngram_order,
                 "--speculative: n-gram drafter order (default 3; without --draft)");
  app.add_option("--draft-max", options.spec.draft_max, "--speculative: drafts per round");
  options.spec.prompt =
      "Monday: wash the car, buy milk, call Anna. Tuesday: wash the car, buy milk, call Anna. "
      "Wednesday: wash the car, buy milk, call Anna. Thursday:";
  app.add_option("--spec-prompt", options.spec.prompt,
                 "--speculative: prompt (default: a repetitive list)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error_exit(e.what());
  }
  if (options.bandwidth && app.count("-r") == 0) options.repetitions = 10;  // passes
  if (options.products && app.count("-r") == 0) options.repetitions = 8;    // rounds
  // The library's own log lines (load warnings) stay off the table's stderr neighbour.
  eredu::log::set_level(eredu::log::Level::kError);
  try {
    return run(std::move(options));
  } catch (const std::bad_alloc&) {
    return error_exit("out of memory");
  } catch (const std::exception& e) {
    return error_exit(std::string("internal error: ") + e.what());
  }
}
