// Writes the seed corpus of every fuzzer: ROOT/<fuzzer name>/<seed>. Seeds are valid inputs (the
// fuzzer mutates from there), written through the project's own writers where there is one, so
// the seeds follow the writers as the formats grow. Run by ctest as the fixture `fuzz.seeds`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "fuzz_support.hpp"

namespace fs = std::filesystem;

namespace {

bool write_file(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "eredu_fuzz_seeds: cannot write %s\n", path.string().c_str());
    return false;
  }
  return true;
}

// JSON documents shaped like the ones eredu reads: SafeTensors headers, a sharded index,
// a config, plus the awkward corners of the grammar (escapes, surrogates, big numbers).
bool write_json_seeds(const fs::path& dir) {
  constexpr std::string_view kSeeds[] = {
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})",
      R"({"a":{"dtype":"BF16","shape":[],"data_offsets":[0,2]},"b":{"dtype":"I64","shape":[1],"data_offsets":[2,10]}})",
      R"({"metadata":{"total_size":48},"weight_map":{"x":"model-00001-of-00002.safetensors","y":"model-00002-of-00002.safetensors"}})",
      R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,"rms_norm_eps":1e-05,"tie_word_embeddings":false,"rope_scaling":null})",
      R"(["\u00e9\ud83d\ude00\n\t\"\\",-0,1.5e308,18446744073709551615,-9223372036854775808,true,false,null])",
      R"({"nested":[[[[{"k":[1,2,{"z":[]}]}]]]],"empty":{}})",
      "{\"padded\":1}        ",
  };
  int index = 0;
  for (std::string_view seed : kSeeds) {
    if (!write_file(dir / ("seed-" + std::to_string(index++) + ".json"), seed)) return false;
  }
  return true;
}

struct SeedSet {
  const char* fuzzer;
  bool (*write)(const fs::path& dir);
};

constexpr SeedSet kSeedSets[] = {
    {"json", write_json_seeds},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  eredu::fuzz::silence_library_logging();
  const fs::path root = argv[1];
  int failures = 0;
  for (const SeedSet& set : kSeedSets) {
    const fs::path dir = root / set.fuzzer;
    std::error_code error;
    fs::remove_all(dir, error);
    fs::create_directories(dir, error);
    if (error || !set.write(dir)) {
      std::fprintf(stderr, "eredu_fuzz_seeds: failed to write the %s seeds into %s\n", set.fuzzer,
                   dir.string().c_str());
      ++failures;
      continue;
    }
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir))
      ++count;
    std::printf("eredu_fuzz_seeds: %zu %s seeds in %s\n", count, set.fuzzer, dir.string().c_str());
  }
  return failures == 0 ? 0 : 1;
}
