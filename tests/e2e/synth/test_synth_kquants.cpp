// eredu-synth --type Q2_K..Q6_K (and IQ4_NL, IQ4_XS): every matrix whose row length is whole
// 256-element super-blocks is stored in that K-quant (the rest keep F16 and are named on stderr),
// general.file_type is llama.cpp's number, the decoded weights are close to the exact weights of
// the F32 file of the same seed, and the file is accepted by eredu-inspect and generates text with
// eredu-run on the CPU backend.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/checkpoint/gguf.hpp"
#include "shared_data.hpp"
#include "synth_fixture.hpp"

namespace eredu::synth::testing {
namespace {

using checkpoint::GgufFile;

// Every row length (256, 512) is whole super-blocks of 256.
const std::string kKShape =
    "--hidden 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --vocab 512 --context 128";

// llama_ftype of a file whose matrices are all of one K-quant type (llama.h): Q2_K = 10 and
// Q6_K = 18 name the type alone; Q3_K, Q4_K and Q5_K take the "small" variants 11, 14 and 16,
// the mixtures nearest to a file that uses the base type for every matrix.
const std::map<std::string, std::uint32_t> kKFileTypes = {
    {"Q2_K", 10}, {"Q3_K", 11}, {"Q4_K", 14}, {"Q5_K", 16}, {"Q6_K", 18}};

class SynthKQuantTest : public SynthTest {
 protected:
  fs::path write_k(const std::string& type, const std::string& shape = kKShape) const {
    const fs::path path = dir_ / ("k-" + type + ".gguf");
    const RunResult r = run(shape + " --type " + type + " --seed 5 -q -o '" + path.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  RunResult run_tool(const std::string& exe, const std::string& args) const {
    const fs::path out = dir_ / "tool-stdout.txt";
    const fs::path err = dir_ / "tool-stderr.txt";
    const std::string command =
        "'" + exe + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }

  // A one-layer file of hidden size 320 in `type`: every matrix reading the hidden state has rows
  // of 320 (not whole 256-element super-blocks); ffn_down's rows are 512. Checks each matrix's
  // type (expected_type(name)) and that eredu-synth warned about the fallback (`warning`).
  void expect_hidden_320_types(const std::string& type,
                               const std::function<DType(const std::string&)>& expected_type,
                               const std::string& warning) const {
    const fs::path path = dir_ / ("hidden320-" + type + ".gguf");
    const RunResult r = run("--hidden 320 --layers 1 --heads 4 --ffn 512 --vocab 512 --type " +
                            type + " -q -o '" + path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.has_value());
    for (const auto& t : file->tensors()) {
      if (t.shape.size() != 2) continue;
      EXPECT_EQ(t.dtype, expected_type(t.name)) << t.name;
    }
    EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
  }
};

std::map<std::string, std::vector<float>> decoded_tensors(const fs::path& path) {
  std::map<std::string, std::vector<float>> out;
  auto file = GgufFile::open(path);
  EXPECT_TRUE(file.has_value()) << path;
  if (!file) return out;
  for (const auto& t : file->tensors()) {
    std::vector<float> values(static_cast<std::size_t>(t.element_count));
    EXPECT_TRUE(encoding::dequantize(t.dtype, file->tensor_bytes(t).value(), values)) << t.name;
    out[t.name] = std::move(values);
  }
  return out;
}

double rms_error(const std::vector<float>& x, const std::vector<float>& y) {
  double sse = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    sse += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
  return std::sqrt(sse / static_cast<double>(x.size()));
}

TEST_F(SynthKQuantTest, EveryMatrixIsStoredInTheKQuantWithLlamaCppsFileType) {
  for (const auto& [type, ftype] : kKFileTypes) {
    SCOPED_TRACE(type);
    auto file = GgufFile::open(write_k(type));
    ASSERT_TRUE(file.has_value()) << file.error().what();
    ASSERT_EQ(file->tensors().size(), 3u + 2u * 9u);
    for (const auto& t : file->tensors()) {
      EXPECT_EQ(std::string(to_string(t.dtype)), t.shape.size() == 2 ? type : "F32") << t.name;
    }
    EXPECT_EQ(file->contents().get_u32("general.file_type").value(), ftype);
  }
}

TEST_F(SynthKQuantTest, SingleTypeFileTypesEqualWhatLlamaQuantizeWrote) {
  const fs::path zoo_dir = eredu::testing::testdata_dir() / "quant-zoo";
  EREDU_REQUIRE_SHARED_PATH(zoo_dir / "zoo-Q6_K.gguf");
  for (const std::string type : {"Q2_K", "Q6_K"}) {
    auto ours = GgufFile::open(write_k(type));
    auto reference = GgufFile::open(zoo_dir / ("zoo-" + type + ".gguf"));
    ASSERT_TRUE(ours.has_value() && reference.has_value());
    EXPECT_EQ(ours->contents().get_u32("general.file_type").value(),
              reference->contents().get_u32("general.file_type").value())
        << type;
  }
}

TEST_F(SynthKQuantTest, SmallAndLargeMixtureNamesMeanTheirBaseType) {
  for (const std::string type : {"Q4_K_S", "Q3_K_M", "q5_k_l"}) {
    auto file = GgufFile::open(write_k(type));
    ASSERT_TRUE(file.has_value());
    const DType base = type == "Q4_K_S"   ? DType::kQ4_K
                       : type == "Q3_K_M" ? DType::kQ3_K
                                          : DType::kQ5_K;
    for (const auto& t : file->tensors()) {
      if (t.shape.size() == 2) {
        EXPECT_EQ(t.dtype, base) << type << " " << t.name;
      }
    }
  }
}

TEST_F(SynthKQuantTest, MediumMixturesPutOutputAndSomeAttnVAndFfnDownInQ6K) {
  // 16 layers, as llama1b: llama.cpp's use_more_bits(i, n) = i < n/8 || i >= 7n/8 ||
  // (i - n/8) % 3 == 2 picks layers 0, 1, 4, 7, 10, 13, 14 and 15.
  const std::string shape =
      "--hidden 256 --layers 16 --heads 4 --kv-heads 2 --ffn 512 --vocab 512 --context 128";
  for (const auto& [type, base, ftype] : {std::tuple{std::string("Q4_K_M"), DType::kQ4_K, 15U},
                                          std::tuple{std::string("q5_k_m"), DType::kQ5_K, 17U}}) {
    auto file = GgufFile::open(write_k(type, shape));
    ASSERT_TRUE(file.has_value());
    EXPECT_EQ(file->contents().get_u32("general.file_type").value(), ftype) << type;
    for (const auto& t : file->tensors()) {
      if (t.shape.size() != 2) continue;
      bool more = t.name == "output.weight";
      for (const char* layer :
           {"blk.0.", "blk.1.", "blk.4.", "blk.7.", "blk.10.", "blk.13.", "blk.14.", "blk.15."}) {
        if (t.name.starts_with(layer) &&
            (t.name.ends_with("attn_v.weight") || t.name.ends_with("ffn_down.weight"))) {
          more = true;
        }
      }
      EXPECT_EQ(t.dtype, more ? DType::kQ6_K : base) << type << " " << t.name;
    }
  }
}

TEST_F(SynthKQuantTest, DecodedWeightsAreCloseToTheExactWeightsOfTheF32File) {
  // The F32 file of the same seed holds the generated N(0, 0.02) weights exactly.
  const auto exact = decoded_tensors(write_k("F32"));
  ASSERT_FALSE(exact.empty());
  for (const auto& [type, ftype] : kKFileTypes) {
    SCOPED_TRACE(type);
    const int bits = type[1] - '0';
    const auto ours = decoded_tensors(write_k(type));
    for (const auto& [name, x] : exact) {
      const std::vector<float>& y = ours.at(name);
      ASSERT_EQ(y.size(), x.size()) << name;
      const double rms = rms_error(x, y);
      // Twice a uniform 2^bits-level quantizer's RMS error over +-3 sigma (sigma 0.02).
      EXPECT_LT(rms, 2.0 * (6 * 0.02 / (1 << bits)) / std::sqrt(12.0)) << name;
      if (name.ends_with("norm.weight")) {
        EXPECT_EQ(rms, 0.0) << name;  // norms stay F32 in every file
      }
    }
  }
}

TEST_F(SynthKQuantTest, RowsThatAreNotWholeSuperBlocksKeepF16AndSaySo) {
  const fs::path path = dir_ / "ffn384.gguf";
  const RunResult r =
      run("--hidden 256 --layers 1 --heads 4 --ffn 384 --vocab 512 --type Q4_K -q -o '" +
          path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value());
  for (const auto& t : file->tensors()) {
    if (t.name.ends_with("ffn_down.weight")) {
      EXPECT_EQ(t.dtype, DType::kF16);  // rows of 384 are not whole super-blocks of 256
      EXPECT_NE(r.err.find(t.name), std::string::npos) << r.err;
    } else if (t.shape.size() == 2) {
      EXPECT_EQ(t.dtype, DType::kQ4_K) << t.name;
    }
  }
  EXPECT_NE(r.err.find("256"), std::string::npos) << r.err;
}

TEST_F(SynthKQuantTest, MediumMixturesStoreRowsThatAreNotWholeSuperBlocksAsLlamaQuantizeDoes) {
  // Layer 0 of 1 takes more bits (it is the last eighth): ffn_down Q6_K; output's Q6_K and the
  // rest's Q4_K fall back to Q8_0 and Q5_0.
  expect_hidden_320_types(
      "Q4_K_M",
      [](const std::string& name) {
        return name.ends_with("ffn_down.weight")                            ? DType::kQ6_K
               : name == "output.weight" || name.ends_with("attn_v.weight") ? DType::kQ8_0
                                                                            : DType::kQ5_0;
      },
      "storing it as Q5_0 (llama-quantize's fallback)");
}

// IQ4_NL and IQ4_XS (eredu's encoders, quantize_iq4_block.hpp): llama.cpp's file types
// (LLAMA_FTYPE_MOSTLY_IQ4_NL = 25, MOSTLY_IQ4_XS = 30), every matrix in the type, and decoded
// weights as close to the exact ones as a 4-bit quantizer's.
TEST_F(SynthKQuantTest, Iq4FilesHoldEveryMatrixInTheTypeWithLlamaCppsFileTypeAndStayClose) {
  const auto exact = decoded_tensors(write_k("F32"));
  ASSERT_FALSE(exact.empty());
  for (const auto& [type, ftype] :
       std::map<std::string, std::uint32_t>{{"IQ4_NL", 25}, {"IQ4_XS", 30}}) {
    SCOPED_TRACE(type);
    const fs::path path = write_k(type);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.has_value()) << file.error().what();
    for (const auto& t : file->tensors())
      EXPECT_EQ(std::string(to_string(t.dtype)), t.shape.size() == 2 ? type : "F32") << t.name;
    EXPECT_EQ(file->contents().get_u32("general.file_type").value(), ftype);
    const auto ours = decoded_tensors(path);
    for (const auto& [name, x] : exact) {
      const std::vector<float>& y = ours.at(name);
      ASSERT_EQ(y.size(), x.size()) << name;
      const double rms = rms_error(x, y);
      EXPECT_LT(rms, 2.0 * (6 * 0.02 / 16) / std::sqrt(12.0)) << name;
    }
  }
}

TEST_F(SynthKQuantTest, Iq4XsRowsThatAreNotWholeSuperBlocksAreStoredAsIq4NlAsLlamaQuantizeDoes) {
  expect_hidden_320_types(
      "IQ4_XS",
      [](const std::string& name) {
        return name.ends_with("ffn_down.weight") ? DType::kIQ4_XS : DType::kIQ4_NL;
      },
      "storing it as IQ4_NL (llama-quantize's fallback)");
}

TEST_F(SynthKQuantTest, EreduInspectAcceptsTheFileAndEreduRunGeneratesFourTokensOnTheCpu) {
  if (std::string(EREDU_RUN_EXE).empty() || std::string(EREDU_INSPECT_EXE).empty()) {
    GTEST_SKIP() << "eredu-run / eredu-inspect are not built";
  }
  for (const std::string type : {"Q4_K", "Q6_K", "Q5_K", "Q3_K", "Q2_K", "IQ4_XS", "IQ4_NL"}) {
    SCOPED_TRACE(type);
    const fs::path path = write_k(type);
    const RunResult inspect = run_tool(EREDU_INSPECT_EXE, "'" + path.string() + "'");
    EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_NE(inspect.out.find(type), std::string::npos) << inspect.out;
    const RunResult run = run_tool(EREDU_RUN_EXE, "-m '" + path.string() +
                                                      "' -p 'hello world' -n 4 --temp 0 "
                                                      "--ignore-eos --backend cpu -t 1 --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto out = nlohmann::json::parse(run.out);
    EXPECT_EQ(out.at("generated_tokens").size(), 4u) << run.out;
  }
}

}  // namespace
}  // namespace eredu::synth::testing
