// eredu-synth: writes a synthetic Llama-architecture GGUF file.
//
//   eredu-synth --preset smol135m --type Q8_0 --seed 1 -o smol-q8_0.gguf
//   eredu-synth --hidden 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --vocab 320
//               --type Q4_0 -o tiny.gguf
//
// Weights are N(0, 0.02) from a portable generator seeded by --seed (same seed, same bytes, on
// any thread count), norms are 1, the output matrix is separate from the embedding, and the
// vocabulary is a synthesized SentencePiece one (see synth_vocabulary.hpp). Matrices are encoded
// as --type; a matrix whose row length is not a multiple of the type's block size keeps F16 (a
// warning on stderr names it; K-quant blocks are 256 long). Types eredu cannot quantize (IQ*) are
// refused.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "synth_model.hpp"
#include "synth_spec.hpp"

namespace {

using eredu::synth::ModelShape;
using eredu::synth::SynthSpec;

int report_error(const std::string& what) {
  std::fprintf(stderr, "eredu-synth: error: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a synthetic Llama-architecture GGUF model (random weights)", "eredu-synth"};
  std::string preset;
  ModelShape given;  // the explicit shape options (applied over the preset)
  std::string type_name = "F16";
  std::uint64_t seed = 1;
  std::string name;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::string out;
  bool quiet = false;

  app.add_option("--preset", preset, "Model shape preset")
      ->check(CLI::IsMember({"smol135m", "llama1b"}));
  CLI::Option* hidden = app.add_option("--hidden", given.hidden, "Embedding length");
  CLI::Option* layers = app.add_option("--layers", given.layers, "Number of blocks");
  CLI::Option* heads = app.add_option("--heads", given.heads, "Attention heads");
  CLI::Option* kv_heads =
      app.add_option("--kv-heads", given.kv_heads, "Key/value heads (default: --heads)");
  CLI::Option* head_dim =
      app.add_option("--head-dim", given.head_dim, "Head size (default: hidden / heads)");
  CLI::Option* ffn = app.add_option("--ffn", given.ffn, "Feed-forward length");
  CLI::Option* vocab = app.add_option("--vocab", given.vocab, "Vocabulary size (at least 259)");
  CLI::Option* context =
      app.add_option("--context", given.context, "Context length (default 2048)");
  CLI::Option* rope_base =
      app.add_option("--rope-base", given.rope_base, "RoPE frequency base (default 10000)");
  CLI::Option* rms_eps =
      app.add_option("--rms-eps", given.rms_eps, "RMS norm epsilon (default 1e-5)");
  app.add_option("--type", type_name,
                 "Matrix encoding: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, "
                 "Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, Q4_K_M, Q5_K_M (llama-quantize's medium "
                 "mixtures; other mixture names such as Q3_K_S mean their base type; IQ4_XS rows "
                 "that are not whole super-blocks are IQ4_NL; default F16)");
  app.add_option("--seed", seed, "Random seed (default 1)");
  app.add_option("--name", name, "general.name (default: the preset or 'synthetic-llama')");
  app.add_option("-t,--threads", threads, "Generation threads (the output does not depend on it)")
      ->check(CLI::PositiveNumber);
  app.add_option("-o,--output", out, "Output GGUF file")->required();
  app.add_flag("-q,--quiet", quiet, "Print nothing on success");
  CLI11_PARSE(app, argc, argv);

  const auto set = [](const CLI::Option* option) { return option->count() > 0; };
  ModelShape shape;
  if (!preset.empty()) {
    shape = *eredu::synth::preset_shape(preset);
  } else {
    for (const CLI::Option* option : {hidden, layers, heads, ffn, vocab}) {
      if (!set(option)) {
        return report_error(option->get_name() + " is required without --preset");
      }
    }
    shape.context = 2048;
  }
  // Explicit options override the preset's values.
  if (set(hidden)) shape.hidden = given.hidden;
  if (set(layers)) shape.layers = given.layers;
  if (set(heads)) shape.heads = given.heads;
  if (set(ffn)) shape.ffn = given.ffn;
  if (set(vocab)) shape.vocab = given.vocab;
  if (set(context)) shape.context = given.context;
  if (set(rope_base)) shape.rope_base = given.rope_base;
  if (set(rms_eps)) shape.rms_eps = given.rms_eps;
  if (set(kv_heads)) {
    shape.kv_heads = given.kv_heads;
  } else if (preset.empty()) {
    shape.kv_heads = shape.heads;
  }
  if (set(head_dim)) {
    shape.head_dim = given.head_dim;
  } else if (preset.empty()) {
    if (shape.heads == 0 || shape.hidden % shape.heads != 0) {
      return report_error("--hidden is not a multiple of --heads: give --head-dim");
    }
    shape.head_dim = shape.hidden / shape.heads;
  }
  if (auto valid = eredu::synth::validate(shape); !valid) {
    return report_error("--" + valid.error().subject() + ": " + valid.error().message());
  }

  auto encoding = eredu::synth::parse_encoding(type_name);
  if (!encoding) return report_error("--type " + type_name + ": " + encoding.error().message());

  SynthSpec spec;
  spec.shape = shape;
  spec.encoding = *encoding;
  spec.mixture = eredu::synth::parse_mixture(type_name);
  spec.seed = seed;
  spec.name = !name.empty() ? name : (!preset.empty() ? preset : "synthetic-llama");
  spec.threads = threads;

  const auto start = std::chrono::steady_clock::now();
  auto report = eredu::synth::write_synthetic_model(spec, out, [](std::string_view message) {
    std::fprintf(stderr, "eredu-synth: warning: %.*s\n", static_cast<int>(message.size()),
                 message.data());
  });
  if (!report) return report_error(report.error().what());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet) {
    std::printf("wrote %s: %s, %llu parameters, %llu bytes (%.1f MiB) in %.2f s\n", out.c_str(),
                std::string(eredu::to_string(spec.encoding)).c_str(),
                static_cast<unsigned long long>(report->parameters),
                static_cast<unsigned long long>(report->file_bytes),
                static_cast<double>(report->file_bytes) / (1024.0 * 1024.0), seconds);
  }
  return 0;
}
