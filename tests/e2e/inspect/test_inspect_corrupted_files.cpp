// eredu-inspect never crashes: files written by the writers, with bytes of their headers
// overwritten at random (a fixed seed, so every run tests the same files), either inspect
// cleanly (exit 0, nothing on stderr) or fail with exit code 2 and exactly one stderr line.

#include <random>

#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/safetensors_writer.hpp"
#include "inspect_runner.hpp"

namespace eredu::testing {
namespace {

using checkpoint::GgufValue;

std::vector<std::byte> small_gguf() {
  checkpoint::GgufWriter w;
  w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata("llama.block_count", GgufValue(std::uint32_t{2}));
  w.add_metadata("tokenizer.ggml.tokens",
                 GgufValue(checkpoint::GgufArray::of_strings({"<unk>", "<s>", "</s>", "a"})));
  const std::vector<std::uint64_t> shape{2, 32};
  EXPECT_TRUE(w.add_tensor("a", DType::kQ8_0, shape, std::vector<std::byte>(68)).has_value());
  EXPECT_TRUE(w.add_tensor("b", DType::kF16, shape, std::vector<std::byte>(128)).has_value());
  return w.build().value().bytes;
}

std::vector<std::byte> small_safetensors() {
  checkpoint::SafetensorsWriter w;
  EXPECT_TRUE(w.add("a", DType::kF32, {2, 3}, std::vector<std::byte>(24)).has_value());
  EXPECT_TRUE(w.add("b", DType::kBF16, {4}, std::vector<std::byte>(8)).has_value());
  w.set_metadata("format", "pt");
  return w.serialize().value();
}

// Overwrites 1..4 random bytes within the first `span` bytes of `bytes` (the header region).
std::vector<std::byte> mutate(std::vector<std::byte> bytes, std::size_t span, std::mt19937& rng) {
  const std::size_t limit = std::min(span, bytes.size());
  const int count = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int i = 0; i < count; ++i) {
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, limit - 1)(rng);
    bytes[at] = static_cast<std::byte>(std::uniform_int_distribution<int>(0, 255)(rng));
  }
  return bytes;
}

void expect_clean_outcome(const std::filesystem::path& path, const std::string& flag) {
  const InspectRun run = run_inspect({path.string(), flag});
  ASSERT_EQ(run.signal, 0) << path;
  if (run.exit_code == 0) {
    EXPECT_EQ(run.err, "") << path;
    EXPECT_FALSE(run.out.empty()) << path;
  } else {
    EXPECT_EQ(run.exit_code, 2) << path;
    EXPECT_EQ(line_count(run.err), 1u) << run.err;
  }
}

TEST(InspectCorruptedFiles, MutatedHeadersExitZeroOrTwoWithOneLineNeverCrash) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("mutated");
  std::mt19937 rng(20261129);
  const std::vector<std::byte> gguf = small_gguf();
  const std::vector<std::byte> st = small_safetensors();
  std::size_t failures = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string flag = i % 2 == 0 ? "--json" : "--tensors";
    const auto g = dir / ("m" + std::to_string(i) + ".gguf");
    ASSERT_TRUE(checkpoint::write_bytes_to_file(g, mutate(gguf, 256, rng)).has_value());
    expect_clean_outcome(g, flag);
    const auto s = dir / ("m" + std::to_string(i) + ".safetensors");
    ASSERT_TRUE(checkpoint::write_bytes_to_file(s, mutate(st, 160, rng)).has_value());
    expect_clean_outcome(s, flag);
    failures += run_inspect({g.string()}).exit_code == 2 ? 1 : 0;
  }
  // The mutations are not all harmless: the test really exercises the error path.
  EXPECT_GT(failures, 10u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eredu::testing
