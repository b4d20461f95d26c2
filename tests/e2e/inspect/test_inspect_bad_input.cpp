// eredu-inspect on malformed and missing inputs and on bad command lines: exit code 2, exactly
// one line on stderr naming the problem and the file, nothing on stdout, never a crash.

#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/safetensors_writer.hpp"
#include "inspect_runner.hpp"

namespace eredu::testing {
namespace {

using checkpoint::GgufValue;
using checkpoint::GgufWriter;

// Exit 2, one line on stderr containing every one of `needles`, and no report on stdout.
void expect_one_line_failure(const InspectRun& run, std::initializer_list<std::string> needles) {
  EXPECT_EQ(run.signal, 0);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_EQ(line_count(run.err), 1u) << run.err;
  EXPECT_EQ(run.out, "");
  for (const std::string& needle : needles) {
    EXPECT_NE(run.err.find(needle), std::string::npos)
        << "missing '" << needle << "' in: " << run.err;
  }
}

std::vector<std::byte> valid_gguf_bytes() {
  GgufWriter w;
  w.add_metadata("general.architecture", GgufValue("llama"));
  const std::vector<std::uint64_t> shape{64};
  EXPECT_TRUE(w.add_tensor("w", DType::kF32, shape, std::vector<std::byte>(256)).has_value());
  auto image = w.build();
  EXPECT_TRUE(image.has_value());
  return image->bytes;
}

void write(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  ASSERT_TRUE(checkpoint::write_bytes_to_file(path, bytes).has_value());
}

TEST(InspectBadInput, TruncatedGgufIsOneLineNamingTheFile) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("truncated");
  auto bytes = valid_gguf_bytes();
  bytes.resize(bytes.size() - 100);  // cuts into the tensor data
  write(dir / "cut.gguf", bytes);
  expect_one_line_failure(run_inspect({(dir / "cut.gguf").string()}),
                          {(dir / "cut.gguf").string(), "'w'"});
  bytes.resize(30);  // cuts into the first metadata entry
  write(dir / "cut2.gguf", bytes);
  expect_one_line_failure(run_inspect({(dir / "cut2.gguf").string(), "--json"}),
                          {(dir / "cut2.gguf").string(), "at byte"});
  std::filesystem::remove_all(dir);
}

TEST(InspectBadInput, BadGgufMagicIsOneLineAtByteZero) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("magic");
  auto bytes = valid_gguf_bytes();
  bytes[0] = std::byte{'X'};
  write(dir / "bad.gguf", bytes);
  expect_one_line_failure(run_inspect({(dir / "bad.gguf").string()}),
                          {(dir / "bad.gguf").string(), "magic", "at byte 0"});
  std::filesystem::remove_all(dir);
}

TEST(InspectBadInput, SafetensorsHeaderLargerThanTheLimitIsOneLine) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("st-large");
  const auto bytes = checkpoint::raw_safetensors_bytes("{}", {}, std::uint64_t{200'000'000});
  ASSERT_TRUE(checkpoint::write_safetensors_bytes(dir / "big.safetensors", bytes).has_value());
  expect_one_line_failure(run_inspect({(dir / "big.safetensors").string()}),
                          {(dir / "big.safetensors").string(), "100000000"});
  std::filesystem::remove_all(dir);
}

TEST(InspectBadInput, IndexPointingOutsideTheDirectoryIsOneLineNamingTheShard) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto root = fresh_temp_dir("escape");
  const auto model = root / "model";
  std::filesystem::create_directories(model);
  checkpoint::SafetensorsWriter w;
  ASSERT_TRUE(w.add("w", DType::kF32, {2}, std::vector<std::byte>(8)).has_value());
  ASSERT_TRUE(w.write_file(root / "outside.safetensors").has_value());
  const auto index = checkpoint::safetensors_index_json({{"w", "../outside.safetensors"}});
  ASSERT_TRUE(index.has_value());
  ASSERT_TRUE(checkpoint::write_safetensors_bytes(model / "model.safetensors.index.json",
                                                  std::as_bytes(std::span(*index)))
                  .has_value());
  expect_one_line_failure(run_inspect({model.string()}), {"../outside.safetensors"});
  std::filesystem::remove_all(root);
}

TEST(InspectBadInput, MissingPathIsOneLineNotFound) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("missing");
  const auto path = dir / "nothing-here.gguf";
  expect_one_line_failure(run_inspect({path.string()}), {"not found", path.string()});
  expect_one_line_failure(run_inspect({path.string(), "--json"}), {"not found"});
  std::filesystem::remove_all(dir);
}

TEST(InspectBadInput, UnrecognizedFileIsOneLineNamingBothFormats) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const auto dir = fresh_temp_dir("unknown");
  const std::string text = "hello, this is not a model\nsecond line\n";
  write(dir / "notes.txt", std::as_bytes(std::span(text)));
  write(dir / "empty.bin", {});
  expect_one_line_failure(run_inspect({(dir / "notes.txt").string()}), {"GGUF", "SafeTensors"});
  expect_one_line_failure(run_inspect({(dir / "empty.bin").string()}), {"empty.bin"});
  // An empty directory is a SafeTensors model directory without any model file in it.
  std::filesystem::create_directories(dir / "empty-dir");
  expect_one_line_failure(run_inspect({(dir / "empty-dir").string()}), {"empty-dir"});
  std::filesystem::remove_all(dir);
}

TEST(InspectBadInput, UsageErrorsExitWithCodeTwoAndOneLine) {
  EREDU_REQUIRE_INSPECT_BINARY();
  expect_one_line_failure(run_inspect({}), {"usage error", "path"});
  expect_one_line_failure(run_inspect({"x.gguf", "--no-such-option"}), {"usage error"});
  expect_one_line_failure(run_inspect({"x.gguf", "--max-array", "-1"}), {"usage error"});
  expect_one_line_failure(run_inspect({"x.gguf", "--max-array", "many"}), {"usage error"});
  expect_one_line_failure(run_inspect({"a.gguf", "b.gguf"}), {"usage error"});
}

TEST(InspectBadInput, HelpExitsZeroWithUsageOnStdout) {
  EREDU_REQUIRE_INSPECT_BINARY();
  const InspectRun run = run_inspect({"--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.err, "");
  EXPECT_NE(run.out.find("--json"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--max-array"), std::string::npos);
}

}  // namespace
}  // namespace eredu::testing
