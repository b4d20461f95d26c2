// GgufStreamWriter: the streamed file equals GgufWriter's in-memory image byte for byte, parses
// with the GGUF reader, and misuse (chunks crossing a tensor, missing payload bytes, undeclared
// types, unwritable paths) is reported with the tensor or path named.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"
#include "eredu/checkpoint/gguf_stream_writer.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"

namespace {

namespace fs = std::filesystem;
using eredu::DType;
using eredu::ErrorCode;
using eredu::checkpoint::GgufArray;
using eredu::checkpoint::GgufFile;
using eredu::checkpoint::GgufStreamWriter;
using eredu::checkpoint::GgufValue;
using eredu::checkpoint::GgufWriter;
using Shape = std::vector<std::uint64_t>;

class GgufStreamWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("eredu-stream-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

std::vector<std::byte> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// Deterministic filler bytes that differ per tensor.
std::vector<std::byte> payload(std::size_t n, unsigned salt) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>((i * 31 + salt * 7 + 3) & 0xFF);
  return out;
}

struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
  std::size_t bytes;
};

// A small model-like set: odd sizes so that every payload needs padding, plus an empty tensor.
std::vector<TensorSpec> small_model() {
  return {
      {"token_embd.weight", DType::kQ8_0, {5, 64}, 5 * 2 * 34},
      {"output_norm.weight", DType::kF32, {7}, 28},
      {"empty.weight", DType::kF32, {0, 4}, 0},
      {"blk.0.attn_q.weight", DType::kF16, {3, 5}, 30},
      {"blk.0.ffn_down.weight", DType::kQ4_0, {2, 32}, 2 * 18},
  };
}

template <typename Writer>
void add_small_metadata(Writer& w) {
  w.add_metadata("general.architecture", GgufValue("llama"));
  w.add_metadata("llama.block_count", GgufValue(std::uint32_t{1}));
  w.add_metadata("llama.rope.freq_base", GgufValue(10000.0f));
  w.add_metadata("tokenizer.ggml.add_bos_token", GgufValue(true));
  w.add_metadata("tokenizer.ggml.tokens", GgufValue(GgufArray::of_strings({"<unk>", "a", "bc"})));
  w.add_metadata("tokenizer.ggml.scores",
                 GgufValue(GgufArray::of(std::vector<float>{0.0f, -1.0f, -2.0f})));
  w.add_metadata("tokenizer.ggml.token_type",
                 GgufValue(GgufArray::of(std::vector<std::int32_t>{2, 1, 1})));
}

std::vector<std::byte> in_memory_image(std::uint32_t alignment) {
  GgufWriter w;
  add_small_metadata(w);
  if (alignment != 32) w.set_alignment(alignment);
  unsigned salt = 0;
  for (const TensorSpec& t : small_model()) {
    const auto data = payload(t.bytes, salt++);
    EXPECT_TRUE(w.add_tensor(t.name, t.dtype, t.shape, data).has_value()) << t.name;
  }
  auto image = w.build();
  EXPECT_TRUE(image.has_value());
  return image->bytes;
}

// Streams the small model, feeding each payload in chunks of `chunk` bytes.
void stream_small_model(const fs::path& path, std::uint32_t alignment, std::size_t chunk) {
  GgufStreamWriter w;
  add_small_metadata(w);
  if (alignment != 32) w.set_alignment(alignment);
  for (const TensorSpec& t : small_model())
    ASSERT_TRUE(w.add_tensor_info(t.name, t.dtype, t.shape).has_value()) << t.name;
  ASSERT_TRUE(w.open(path).has_value());
  unsigned salt = 0;
  for (const TensorSpec& t : small_model()) {
    const auto data = payload(t.bytes, salt++);
    for (std::size_t at = 0; at < data.size(); at += chunk) {
      const std::size_t n = std::min(chunk, data.size() - at);
      ASSERT_TRUE(w.write_tensor_data(std::span(data).subspan(at, n)).has_value()) << t.name;
    }
  }
  EXPECT_EQ(w.current_tensor(), small_model().size());
  ASSERT_TRUE(w.close().has_value());
  EXPECT_EQ(fs::file_size(path), w.file_size());
}

TEST_F(GgufStreamWriterTest, StreamedFileIsByteIdenticalToTheInMemoryWriter) {
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    const fs::path path = dir_ / ("chunk" + std::to_string(chunk) + ".gguf");
    stream_small_model(path, 32, chunk);
    EXPECT_EQ(read_file(path), in_memory_image(32)) << "chunk size " << chunk;
  }
}

TEST_F(GgufStreamWriterTest, CustomAlignmentIsByteIdenticalToTheInMemoryWriter) {
  const fs::path path = dir_ / "aligned.gguf";
  stream_small_model(path, 64, 13);
  EXPECT_EQ(read_file(path), in_memory_image(64));
}

TEST_F(GgufStreamWriterTest, HeaderBytesArePrefixOfInMemoryImageUpToTheDataSection) {
  GgufWriter reference;
  add_small_metadata(reference);
  GgufStreamWriter w;
  add_small_metadata(w);
  unsigned salt = 0;
  for (const TensorSpec& t : small_model()) {
    ASSERT_TRUE(reference.add_tensor(t.name, t.dtype, t.shape, payload(t.bytes, salt++)));
    ASSERT_TRUE(w.add_tensor_info(t.name, t.dtype, t.shape));
  }
  auto image = reference.build();
  ASSERT_TRUE(image.has_value());
  auto header = w.header_bytes();
  ASSERT_TRUE(header.has_value());
  ASSERT_EQ(header->size(), image->layout.data_section_offset);
  EXPECT_TRUE(std::equal(header->begin(), header->end(), image->bytes.begin()));
}

TEST_F(GgufStreamWriterTest, StreamedFileParsesAndTensorsHoldTheirPayloads) {
  const fs::path path = dir_ / "parse.gguf";
  stream_small_model(path, 32, 5);
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value()) << file.error().what();
  ASSERT_EQ(file->tensors().size(), small_model().size());
  unsigned salt = 0;
  for (const TensorSpec& t : small_model()) {
    const auto* info = file->find_tensor(t.name);
    ASSERT_NE(info, nullptr) << t.name;
    EXPECT_EQ(info->dtype, t.dtype);
    EXPECT_EQ(info->shape, t.shape);
    auto bytes = file->tensor_bytes(*info);
    ASSERT_TRUE(bytes.has_value());
    const auto expected = payload(t.bytes, salt++);
    EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), expected.begin(), expected.end()))
        << t.name;
  }
}

TEST_F(GgufStreamWriterTest, ChunkCrossingATensorBoundaryIsRejectedNamingTheTensor) {
  GgufStreamWriter w;
  ASSERT_TRUE(w.add_tensor_info("a", DType::kF32, Shape{2}));
  ASSERT_TRUE(w.add_tensor_info("b", DType::kF32, Shape{2}));
  ASSERT_TRUE(w.open(dir_ / "cross.gguf"));
  const auto data = payload(12, 0);
  auto r = w.write_tensor_data(data);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().subject(), "a");
  EXPECT_NE(r.error().message().find("12"), std::string::npos) << r.error().message();
}

TEST_F(GgufStreamWriterTest, CloseBeforeEveryPayloadIsWrittenFailsNamingTheIncompleteTensor) {
  GgufStreamWriter w;
  ASSERT_TRUE(w.add_tensor_info("a", DType::kF32, Shape{2}));
  ASSERT_TRUE(w.add_tensor_info("b", DType::kF32, Shape{3}));
  ASSERT_TRUE(w.open(dir_ / "short.gguf"));
  ASSERT_TRUE(w.write_tensor_data(payload(8, 0)));
  ASSERT_TRUE(w.write_tensor_data(payload(4, 1)));
  auto r = w.close();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().subject(), "b");
  EXPECT_NE(r.error().message().find("4 of 12"), std::string::npos) << r.error().message();
}

TEST_F(GgufStreamWriterTest, BytesAfterTheLastPayloadAreRejected) {
  GgufStreamWriter w;
  ASSERT_TRUE(w.add_tensor_info("a", DType::kF32, Shape{1}));
  ASSERT_TRUE(w.open(dir_ / "extra.gguf"));
  ASSERT_TRUE(w.write_tensor_data(payload(4, 0)));
  EXPECT_FALSE(w.write_tensor_data(payload(1, 0)).has_value());
}

TEST_F(GgufStreamWriterTest, RowThatIsNotWholeBlocksIsRejectedAtDeclaration) {
  GgufStreamWriter w;
  auto r = w.add_tensor_info("blk.0.ffn_down.weight", DType::kQ4_0, Shape{4, 100});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().subject(), "blk.0.ffn_down.weight");
}

TEST_F(GgufStreamWriterTest, TensorDeclaredAfterOpenIsRejected) {
  GgufStreamWriter w;
  ASSERT_TRUE(w.open(dir_ / "late.gguf"));
  EXPECT_FALSE(w.add_tensor_info("a", DType::kF32, Shape{1}).has_value());
  EXPECT_TRUE(w.close().has_value());
}

TEST_F(GgufStreamWriterTest, UnwritablePathIsAnIoErrorNamingThePath) {
  GgufStreamWriter w;
  const fs::path path = dir_ / "no-such-dir" / "x.gguf";
  auto r = w.open(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kIo);
  EXPECT_EQ(r.error().path(), path.string());
}

}  // namespace
