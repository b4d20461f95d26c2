// eredu-tokenizer-bench MODEL.gguf TEXT_FILE [REPEATS] [IDS_OUT]
//
// Loads the tokenizer of MODEL.gguf, encodes TEXT_FILE's bytes (no BOS, no special parsing)
// REPEATS times (default 5) on this thread, and prints one JSON line: bytes, tokens, the best and
// median seconds, and MB/s of the best run. With IDS_OUT, writes the ids space-separated there
// (compare_hf.py checks them against Hugging Face's). Exit 2 with one stderr line on bad input.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/core/log.hpp"
#include "eredu/text/gguf_tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fputs("usage: eredu-tokenizer-bench MODEL.gguf TEXT_FILE [REPEATS] [IDS_OUT]\n", stderr);
    return 2;
  }
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "eredu-tokenizer-bench: cannot open '%s'\n", argv[2]);
    return 2;
  }
  const std::string text(std::istreambuf_iterator<char>(in), {});
  eredu::log::set_level(eredu::log::Level::kError);
  const auto file = eredu::checkpoint::GgufFile::open(argv[1]);
  if (!file) {
    std::fprintf(stderr, "eredu-tokenizer-bench: %s\n", file.error().what().c_str());
    return 2;
  }
  const auto tokenizer = eredu::text::make_tokenizer_from_gguf(file->contents());
  if (!tokenizer) {
    std::fprintf(stderr, "eredu-tokenizer-bench: %s\n", tokenizer.error().what().c_str());
    return 2;
  }
  std::vector<double> seconds;
  std::vector<eredu::text::TokenId> ids;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto result = (*tokenizer)->encode(text, {.add_bos = false, .add_eos = false});
    const auto stop = std::chrono::steady_clock::now();
    if (!result) {
      std::fprintf(stderr, "eredu-tokenizer-bench: %s\n", result.error().what().c_str());
      return 2;
    }
    ids = std::move(*result);
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double best = sorted.front();
  const double median = sorted[sorted.size() / 2];
  std::printf(
      "{\"bytes\": %zu, \"tokens\": %zu, \"repeats\": %d, \"best_s\": %.6f, \"median_s\": %.6f, "
      "\"mb_per_s\": %.3f}\n",
      text.size(), ids.size(), repeats, best, median,
      static_cast<double>(text.size()) / best / 1e6);
  if (argc > 4) {
    std::ofstream out(argv[4]);
    for (std::size_t i = 0; i < ids.size(); ++i)
      out << (i ? " " : "") << ids[i];
    out << "\n";
  }
  return 0;
}
