// Writes the seed corpus of every fuzzer: ROOT/<fuzzer name>/<seed>. Seeds are valid inputs (the
// fuzzer mutates from there), written through the project's own writers, so the seeds follow the
// formats as the writers grow. Run by ctest as the fixture `fuzz.seeds`; every seed is parsed
// back before it is written, so a seed the reader rejects fails the fixture.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_value.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/checkpoint/safetensors.hpp"
#include "eredu/checkpoint/safetensors_model.hpp"
#include "eredu/checkpoint/safetensors_writer.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"
#include "eredu/jinja/template.hpp"
#include "fuzz_support.hpp"

namespace fs = std::filesystem;
using namespace eredu::checkpoint;  // NOLINT(google-build-using-namespace): a test program
using eredu::DType;
using eredu::Result;

namespace {

// Deterministic, non-trivial payload bytes.
std::vector<std::byte> pattern(std::size_t size, std::uint8_t salt) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>((i * 37U + salt) & 0x3FU);  // small values: finite floats
  }
  return bytes;
}

std::vector<std::byte> to_bytes(std::string_view text) {
  const auto* begin = reinterpret_cast<const std::byte*>(text.data());
  return {begin, begin + text.size()};
}

class SeedDir {
 public:
  explicit SeedDir(fs::path dir) : dir_(std::move(dir)) {}
  Result<void> add(std::string_view name, std::span<const std::byte> bytes) {
    ++count_;
    return write_bytes_to_file(dir_ / name, bytes);
  }
  [[nodiscard]] int count() const noexcept { return count_; }

 private:
  fs::path dir_;
  int count_ = 0;
};

Result<void> expect_gguf(const std::vector<std::byte>& bytes, std::string_view name) {
  const auto file = MappedFile::from_bytes(bytes, std::string(name));
  EREDU_TRY(const auto parsed, parse_gguf(file));
  (void)parsed;
  return eredu::ok();
}

Result<void> expect_safetensors(const std::vector<std::byte>& bytes, std::string_view name) {
  const auto file = MappedFile::from_bytes(bytes, std::string(name));
  EREDU_TRY(const auto parsed, parse_safetensors(file));
  (void)parsed;
  return eredu::ok();
}

// --- GGUF -------------------------------------------------------------------------------------

Result<void> add_tensor(GgufWriter& writer, std::string name, DType dtype,
                        std::vector<std::uint64_t> shape, std::uint8_t salt) {
  EREDU_TRY(const std::uint64_t bytes, eredu::checked_byte_size(dtype, shape));
  const auto data = pattern(static_cast<std::size_t>(bytes), salt);
  return writer.add_tensor(std::move(name), dtype, shape, data);
}

// Single-field mutations of a valid file, in the spirit of the bad-input catalogue
// (reliability.md §b.1): they start the fuzzer right at the checks that matter. Not valid inputs,
// so they are not parsed back.
Result<void> write_gguf_mutants(SeedDir& out, const GgufImage& image) {
  const GgufLayout& layout = image.layout;
  struct Mutant {
    const char* name;
    std::uint64_t offset;
    std::uint64_t value;
    int width;  // bytes
  };
  std::vector<Mutant> mutants = {
      {"bad-version", GgufLayout::kVersionOffset, 4, 4},
      {"bad-tensor-count", GgufLayout::kTensorCountOffset, std::uint64_t{1} << 62, 8},
      {"bad-metadata-count", GgufLayout::kMetadataCountOffset, std::uint64_t{1} << 40, 8},
  };
  if (!layout.metadata.empty()) {
    const auto& kv = layout.metadata.front();
    mutants.push_back({"bad-key-length", kv.offset, ~std::uint64_t{0}, 8});
    mutants.push_back({"bad-value-type", kv.type_offset, 13, 4});
  }
  for (const auto& kv : layout.metadata) {
    if (kv.key == "test.strings") {  // the array's element count, after its element type
      mutants.push_back({"bad-array-count", kv.value_offset + 4, std::uint64_t{1} << 60, 8});
    }
  }
  if (!layout.tensors.empty()) {
    const auto& tensor = layout.tensors.front();
    mutants.push_back({"bad-rank", tensor.rank_offset, 9, 4});
    mutants.push_back({"bad-dim", tensor.dims_offset, ~std::uint64_t{0}, 8});
    mutants.push_back({"bad-ggml-type", tensor.type_offset, 4, 4});
    mutants.push_back({"bad-offset-misaligned", tensor.offset_offset, 1, 8});
    mutants.push_back({"bad-offset-past-end", tensor.offset_offset, layout.size, 8});
  }
  for (const Mutant& mutant : mutants) {
    auto bytes = image.bytes;
    const bool written = mutant.width == 4 ? overwrite_le(bytes, mutant.offset,
                                                          static_cast<std::uint32_t>(mutant.value))
                                           : overwrite_le(bytes, mutant.offset, mutant.value);
    if (!written) continue;
    EREDU_TRY_VOID(out.add(std::string(mutant.name) + ".gguf", bytes));
  }
  const std::vector<std::byte> truncated(
      image.bytes.begin(),
      image.bytes.begin() + static_cast<std::ptrdiff_t>(image.bytes.size() / 2));
  return out.add("bad-truncated.gguf", truncated);
}

Result<void> write_gguf_seeds(SeedDir& out) {
  {  // every scalar value type, strings, arrays (nested too) and a few tensor encodings
    GgufWriter writer;
    writer.add_metadata("general.architecture", GgufValue("llama"))
        .add_metadata("general.name", GgufValue("seed"))
        .add_metadata("test.u8", GgufValue(std::uint8_t{7}))
        .add_metadata("test.i8", GgufValue(std::int8_t{-7}))
        .add_metadata("test.u16", GgufValue(std::uint16_t{700}))
        .add_metadata("test.i16", GgufValue(std::int16_t{-700}))
        .add_metadata("test.u32", GgufValue(std::uint32_t{70000}))
        .add_metadata("test.i32", GgufValue(std::int32_t{-70000}))
        .add_metadata("test.f32", GgufValue(1.5F))
        .add_metadata("test.bool", GgufValue(true))
        .add_metadata("test.u64", GgufValue(std::uint64_t{1} << 40))
        .add_metadata("test.i64", GgufValue(std::int64_t{-1} << 40))
        .add_metadata("test.f64", GgufValue(-2.25))
        .add_metadata("test.ints", GgufValue(GgufArray::of(std::vector<std::int32_t>{1, -2, 3})))
        .add_metadata("test.strings", GgufValue(GgufArray::of_strings({"a", "bc", ""})))
        .add_metadata(
            "test.nested",
            GgufValue(GgufArray::of_arrays({GgufArray::of(std::vector<std::uint8_t>{1, 2}),
                                            GgufArray::of(std::vector<float>{0.5F})})));
    EREDU_TRY_VOID(add_tensor(writer, "token_embd.weight", DType::kF32, {4, 8}, 1));
    EREDU_TRY_VOID(add_tensor(writer, "blk.0.attn_q.weight", DType::kF16, {2, 8}, 2));
    EREDU_TRY_VOID(add_tensor(writer, "blk.0.ffn_up.weight", DType::kQ8_0, {2, 32}, 3));
    EREDU_TRY_VOID(add_tensor(writer, "blk.0.ffn_down.weight", DType::kQ4_0, {1, 32}, 4));
    EREDU_TRY(const auto image, writer.build());
    EREDU_TRY_VOID(expect_gguf(image.bytes, "all-types.gguf"));
    EREDU_TRY_VOID(out.add("all-types.gguf", image.bytes));
    EREDU_TRY_VOID(write_gguf_mutants(out, image));
  }
  {  // version 2, a custom alignment, a K-quant and a rank-3 tensor
    GgufWriter writer(GgufWriterOptions{.version = 2, .alignment = 32});
    writer.set_alignment(64);
    writer.add_metadata("general.architecture", GgufValue("llama"));
    EREDU_TRY_VOID(add_tensor(writer, "blk.0.attn_k.weight", DType::kQ4_K, {1, 256}, 5));
    EREDU_TRY_VOID(add_tensor(writer, "blk.0.attn_norm.weight", DType::kF32, {2, 2, 4}, 6));
    EREDU_TRY(const auto image, writer.build());
    EREDU_TRY_VOID(expect_gguf(image.bytes, "v2-aligned.gguf"));
    EREDU_TRY_VOID(out.add("v2-aligned.gguf", image.bytes));
  }
  {  // metadata only, like a vocabulary file
    GgufWriter writer;
    writer.add_metadata("tokenizer.ggml.model", GgufValue("llama"))
        .add_metadata("tokenizer.ggml.tokens",
                      GgufValue(GgufArray::of_strings({"<unk>", "<s>", "</s>", "a", "b"})))
        .add_metadata("tokenizer.ggml.scores",
                      GgufValue(GgufArray::of(std::vector<float>{0, 0, 0, -1, -2})))
        .add_metadata("tokenizer.ggml.bos_token_id", GgufValue(std::uint32_t{1}));
    EREDU_TRY(const auto image, writer.build());
    EREDU_TRY_VOID(expect_gguf(image.bytes, "vocab-only.gguf"));
    EREDU_TRY_VOID(out.add("vocab-only.gguf", image.bytes));
  }
  {  // the smallest valid file: a header and nothing else
    GgufWriter writer;
    EREDU_TRY(const auto image, writer.build());
    EREDU_TRY_VOID(expect_gguf(image.bytes, "empty.gguf"));
    EREDU_TRY_VOID(out.add("empty.gguf", image.bytes));
  }
  return eredu::ok();
}

// --- SafeTensors --------------------------------------------------------------------------------

Result<void> add_tensor(SafetensorsWriter& writer, std::string name, DType dtype,
                        std::vector<std::uint64_t> shape, std::uint8_t salt) {
  EREDU_TRY(const std::uint64_t bytes, eredu::checked_byte_size(dtype, shape));
  const auto data = pattern(static_cast<std::size_t>(bytes), salt);
  return writer.add(std::move(name), dtype, std::move(shape), data);
}

// The writers the SafeTensors seeds come from (shared by the file, JSON and index fuzzers).
Result<std::vector<std::pair<std::string, SafetensorsWriter>>> safetensors_writers() {
  std::vector<std::pair<std::string, SafetensorsWriter>> writers;
  {
    SafetensorsWriter writer;
    writer.set_metadata("format", "pt");
    EREDU_TRY_VOID(add_tensor(writer, "model.embed_tokens.weight", DType::kF32, {4, 8}, 1));
    EREDU_TRY_VOID(
        add_tensor(writer, "model.layers.0.self_attn.q_proj.weight", DType::kBF16, {8, 8}, 2));
    EREDU_TRY_VOID(add_tensor(writer, "model.norm.weight", DType::kF16, {8}, 3));
    writers.emplace_back("llama-like", std::move(writer));
  }
  {
    SafetensorsWriter writer;
    EREDU_TRY_VOID(add_tensor(writer, "scalar", DType::kF64, {}, 4));
    EREDU_TRY_VOID(add_tensor(writer, "ids", DType::kI64, {3}, 5));
    EREDU_TRY_VOID(add_tensor(writer, "mask", DType::kU8, {2, 3}, 6));
    EREDU_TRY_VOID(add_tensor(writer, "empty", DType::kF32, {0, 4}, 7));
    writers.emplace_back("mixed", std::move(writer));
  }
  writers.emplace_back("no-tensors", SafetensorsWriter{});
  return writers;
}

Result<void> write_safetensors_seeds(SeedDir& out) {
  EREDU_TRY(const auto writers, safetensors_writers());
  for (const auto& [name, writer] : writers) {
    for (const std::uint32_t alignment : {8U, 1U}) {
      EREDU_TRY(const auto bytes, writer.serialize(SafetensorsWriteOptions{alignment}));
      const std::string file = name + "-align" + std::to_string(alignment) + ".safetensors";
      EREDU_TRY_VOID(expect_safetensors(bytes, file));
      EREDU_TRY_VOID(out.add(file, bytes));
    }
  }
  // A few malformed files (reliability.md §b.2): a length prefix beyond the file, a header that
  // is not an object, offsets past the payload.
  const std::byte payload[8] = {};
  EREDU_TRY_VOID(out.add("bad-length.safetensors",
                         raw_safetensors_bytes("{}", payload, std::uint64_t{1} << 40)));
  EREDU_TRY_VOID(out.add("bad-not-object.safetensors", raw_safetensors_bytes("[1,2]", payload)));
  EREDU_TRY_VOID(
      out.add("bad-offsets.safetensors",
              raw_safetensors_bytes(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                                    payload)));
  return eredu::ok();
}

// --- JSON: SafeTensors headers, index files and the corners of the grammar ---------------------

Result<std::vector<std::string>> index_texts() {
  std::vector<std::string> texts;
  EREDU_TRY(auto two_shards, safetensors_index_json(
                                 {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                                  {"lm_head.weight", "model-00002-of-00002.safetensors"}},
                                 std::uint64_t{4096}));
  texts.push_back(std::move(two_shards));
  EREDU_TRY(auto one_shard, safetensors_index_json({{"w", "sub/dir/w.safetensors"}}));
  texts.push_back(std::move(one_shard));
  return texts;
}

Result<void> write_index_seeds(SeedDir& out) {
  EREDU_TRY(const auto texts, index_texts());
  int index = 0;
  for (const auto& text : texts) {
    const auto bytes = to_bytes(text);
    EREDU_TRY(const auto parsed, parse_safetensors_index(bytes, "seed.index.json"));
    (void)parsed;
    EREDU_TRY_VOID(out.add("index-" + std::to_string(index++) + ".json", bytes));
  }
  return eredu::ok();
}

Result<void> write_json_seeds(SeedDir& out) {
  EREDU_TRY(const auto writers, safetensors_writers());
  int index = 0;
  for (const auto& [name, writer] : writers) {
    EREDU_TRY(const auto header, writer.header_json(SafetensorsWriteOptions{1}));
    EREDU_TRY_VOID(out.add("header-" + name + ".json", to_bytes(header)));
  }
  EREDU_TRY(const auto texts, index_texts());
  for (const auto& text : texts) {
    EREDU_TRY_VOID(out.add("index-" + std::to_string(index++) + ".json", to_bytes(text)));
  }
  constexpr std::string_view kCorners[] = {
      R"({"__metadata__":{"k":"\u00e9\ud83d\ude00\n\t\"\\"},"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      R"({"t":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"u":{"dtype":"U8","shape":[],"data_offsets":[8,9]}})",
      R"([-0,1.5e308,18446744073709551615,-9223372036854775808,true,false,null,{"a":[[[]]]}])",
      "{\"t\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}        ",
  };
  for (std::string_view corner : kCorners) {
    EREDU_TRY_VOID(out.add("corner-" + std::to_string(index++) + ".json", to_bytes(corner)));
  }
  return eredu::ok();
}

// --- Jinja: small templates for every construct, plus the real chat templates when the shared
// data is there (EREDU_SHARED_DIR, else the ../shared beside the source tree) ------------------

Result<void> write_jinja_seeds(SeedDir& out) {
  constexpr std::string_view kTemplates[] = {
      "{{ bos_token }}{% for m in messages %}{{ m.role ~ ': ' ~ m.content|trim }}\n{% endfor %}"
      "{% if add_generation_prompt %}assistant:{% endif %}",
      "{%- set ns = namespace(n=0) -%}{% for m in messages if m.role != 'system' %}"
      "{% set ns.n = ns.n + loop.index %}{{ loop.first }}{{ loop.previtem }}{% endfor %}{{ ns.n }}",
      "{% macro f(x, y='d') %}[{{ x }}{{ y }}]{% endmacro %}{{ f(1) }}{{ f(2, y=3) }}"
      "{% call f('c') %}body{% endcall %}",
      "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(', ') }}"
      "{{ messages[2].tool_calls[0].function.arguments|tojson(indent=2) }}",
      "{% set x %}{% raw %}{{ raw }}{% endraw %}{% endset %}{{ x|upper }}{# comment #}"
      "{{ 'a,b'.split(',')[::-1] }}{{ 7 // 2 }}{{ 2 ** 8 }}{{ 'x' if none else 'y' }}",
      "{% for k, v in {'a': 1, 'b': [1, 2]}.items() %}{% if v is mapping %}{% break %}"
      "{% elif v is iterable %}{% continue %}{% else %}{{ k }}{% endif %}{% endfor %}"
      "{% filter lower %}ABC{% endfilter %}{% generation %}g{% endgeneration %}"
      "{{ strftime_now('%Y') }}{{ raise_exception('stop') if false }}",
  };
  int index = 0;
  for (std::string_view text : kTemplates) {
    EREDU_TRY(const auto parsed, eredu::jinja::Template::parse(text));
    (void)parsed;
    EREDU_TRY_VOID(out.add("construct-" + std::to_string(index++) + ".jinja", to_bytes(text)));
  }
  const char* env = std::getenv("EREDU_SHARED_DIR");
  const fs::path shared =
      env != nullptr && *env != '\0' ? fs::path(env) : fs::path(EREDU_FUZZ_SHARED_DIR);
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(shared / "testdata/chat-templates", error)) {
    if (entry.path().extension() != ".jinja") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    EREDU_TRY_VOID(out.add("chat-" + entry.path().filename().string(), to_bytes(text.str())));
  }
  return eredu::ok();
}

struct SeedSet {
  const char* fuzzer;
  Result<void> (*write)(SeedDir& out);
};

constexpr SeedSet kSeedSets[] = {
    {"gguf", write_gguf_seeds},
    {"safetensors", write_safetensors_seeds},
    {"safetensors_index", write_index_seeds},
    {"json", write_json_seeds},
    {"jinja", write_jinja_seeds},
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
    if (error) {
      std::fprintf(stderr, "eredu_fuzz_seeds: cannot create %s: %s\n", dir.string().c_str(),
                   error.message().c_str());
      ++failures;
      continue;
    }
    SeedDir out(dir);
    if (const auto written = set.write(out); !written.has_value()) {
      std::fprintf(stderr, "eredu_fuzz_seeds: the %s seeds failed: %s\n", set.fuzzer,
                   written.error().what().c_str());
      ++failures;
      continue;
    }
    std::printf("eredu_fuzz_seeds: %d %s seeds in %s\n", out.count(), set.fuzzer,
                dir.string().c_str());
  }
  return failures == 0 ? 0 : 1;
}
