// eredu-tokenize end to end: ids against llama.cpp's tokenizer test vectors (Hugging Face ids),
// output format and ids against llama.cpp's llama-tokenize where the peer binary is present, and
// bad input as one stderr line with exit code 2.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "shared_data.hpp"
#include "tokenize_runner.hpp"

namespace {

using eredu::testing::run_program;
using eredu::testing::tokenize_binary;

std::filesystem::path vocab(const std::string& name) {
  return eredu::testing::testdata_dir() / "vocab" / ("ggml-vocab-" + name + ".gguf");
}

std::filesystem::path llama_tokenize() {
  return eredu::testing::shared_dir() / "peer" / "bin" / "llama-tokenize";
}

std::vector<std::string> split_inputs(const std::string& text) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  std::size_t last = 0;
  for (std::size_t pos = text.find(sep); pos != std::string::npos; pos = text.find(sep, last)) {
    inputs.push_back(text.substr(last, pos - last));
    last = pos + sep.size();
  }
  return inputs;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// "[1, 2, 3]" (llama-tokenize --ids) as "1 2 3".
std::string from_python_list(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == '\n') continue;
    if (c == ',') continue;
    out += c;
  }
  return out;
}

std::string write_temp(const std::string& bytes) {
  const auto path = eredu::testing::temp_path(".txt");
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

class TokenizeVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizeVectors, IdsOfEachInputFileEqualTheVectorLine) {
  EREDU_REQUIRE_TOKENIZE_BINARY();
  const auto gguf = vocab(GetParam());
  EREDU_REQUIRE_SHARED_PATH(gguf);
  const auto inputs = split_inputs(eredu::testing::read_file_bytes(gguf.string() + ".inp"));
  const auto outputs = lines_of(eredu::testing::read_file_bytes(gguf.string() + ".out"));
  ASSERT_EQ(inputs.size(), outputs.size());
  // Every third input keeps the test quick (each run loads the vocabulary); the library test
  // covers every line.
  for (std::size_t i = 0; i < inputs.size(); i += 3) {
    const std::string file = write_temp(inputs[i]);
    const auto run =
        run_program(tokenize_binary(), {"-m", gguf.string(), "-f", file, "--ids", "--no-bos"});
    std::filesystem::remove(file);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::string expected = outputs[i];
    while (!expected.empty() && expected.front() == ' ')
      expected.erase(0, 1);
    EXPECT_EQ(run.out, expected + "\n") << "line " << i + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedVocabularies, TokenizeVectors,
                         ::testing::Values("gpt-2", "deepseek-coder", "mpt", "starcoder", "refact",
                                           "bert-bge"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(Tokenize, FileBytesAreTokenizedExactlyFinalNewlineIncluded) {
  EREDU_REQUIRE_TOKENIZE_BINARY();
  EREDU_REQUIRE_SHARED_PATH(vocab("gpt-2"));
  const std::string file = write_temp("Hello\n");
  const auto run =
      run_program(tokenize_binary(), {"-m", vocab("gpt-2").string(), "-f", file, "--ids"});
  std::filesystem::remove(file);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "15496 198\n");  // "Hello", "Ċ" (GPT-2's ids)
}

TEST(Tokenize, DefaultOutputAndIdsMatchLlamaTokenize) {
  EREDU_REQUIRE_TOKENIZE_BINARY();
  EREDU_REQUIRE_SHARED_PATH(llama_tokenize());
  for (const std::string name : {"gpt-2", "starcoder", "bert-bge"}) {
    EREDU_REQUIRE_SHARED_PATH(vocab(name));
    for (const std::string text : {"Hello world", " 3.14 is pi!", "def f(x):\n    return x"}) {
      const auto ours = run_program(tokenize_binary(), {"-m", vocab(name).string(), "-p", text});
      const auto peer = run_program(llama_tokenize().string(),
                                    {"-m", vocab(name).string(), "-p", text, "--log-disable"});
      ASSERT_EQ(ours.exit_code, 0) << ours.err;
      ASSERT_EQ(peer.exit_code, 0) << peer.err;
      EXPECT_EQ(ours.out, peer.out) << name << ": '" << text << "'";
      const auto ours_ids =
          run_program(tokenize_binary(), {"-m", vocab(name).string(), "-p", text, "--ids"});
      const auto peer_ids =
          run_program(llama_tokenize().string(),
                      {"-m", vocab(name).string(), "-p", text, "--ids", "--log-disable"});
      EXPECT_EQ(ours_ids.out, from_python_list(peer_ids.out) + "\n") << name << ": " << text;
    }
  }
}

TEST(Tokenize, PiecesPrintsOnePiecePerLine) {
  EREDU_REQUIRE_TOKENIZE_BINARY();
  EREDU_REQUIRE_SHARED_PATH(vocab("gpt-2"));
  const auto run = run_program(tokenize_binary(),
                               {"-m", vocab("gpt-2").string(), "-p", "Hello world", "--pieces"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "Hello\n world\n");
}

TEST(Tokenize, ParseSpecialTurnsControlTokenTextIntoTheToken) {
  EREDU_REQUIRE_TOKENIZE_BINARY();
  EREDU_REQUIRE_SHARED_PATH(vocab("gpt-2"));
  const auto plain = run_program(tokenize_binary(),
                                 {"-m", vocab("gpt-2").string(), "-p", "<|endoftext|>", "--ids"});
  const auto special = run_program(
      tokenize_binary(),
      {"-m", vocab("gpt-2").string(), "-p", "<|endoftext|>", "--ids", "--parse-special"});
  EXPECT_NE(plain.out, "50256\n");
  EXPECT_EQ(special.out, "50256\n");
}

void expect_one_line_exit_2(const std::vector<std::string>& args, const std::string& needle) {
  const auto run = run_program(tokenize_binary(), args);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_TRUE(run.out.empty()) << run.out;
  ASSERT_FALSE(run.err.empty());
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << run.err;
  EXPECT_NE(run.err.find(needle), std::string::npos) << run.err;
}

TEST(Tokenize, BadInputIsOneStderrLineAndExitCode2) {
  EREDU_REQUIRE_TOKENIZE_BINARY();
  expect_one_line_exit_2({"-m", "/no/such/file.gguf", "-p", "x"}, "/no/such/file.gguf");
  expect_one_line_exit_2({"-p", "x"}, "model");
  EREDU_REQUIRE_SHARED_PATH(vocab("gpt-2"));
  expect_one_line_exit_2({"-m", vocab("gpt-2").string()}, "-p TEXT or -f FILE");
  expect_one_line_exit_2({"-m", vocab("gpt-2").string(), "-f", "/no/such/input"}, "/no/such/input");
  expect_one_line_exit_2({"-m", vocab("gpt-2").string(), "-p", "ok\xC3"}, "byte offset 2");
  expect_one_line_exit_2({"-m", vocab("gpt-2").string(), "-p", "x", "--ids", "--pieces"},
                         "excludes");
}

}  // namespace
