#pragma once
// A GGUF writer that streams tensor payloads to disk one chunk at a time, for files too large to
// build in memory (GgufWriter::build holds the whole image). Everything that precedes the data
// section — header, metadata, tensor infos — depends only on the tensors' names, types and
// shapes, so it is declared first and written by open(); the payloads then follow in declaration
// order through write_tensor_data(), and close() checks that every declared byte arrived.
//
// The bytes are exactly those GgufWriter::build() produces for the same metadata and tensors
// (same field order, same alignment padding after the infos and after every payload, including
// the last), so the two writers are interchangeable; a unit test holds them to that.
//
// Usage:
//   GgufStreamWriter w;
//   w.add_metadata("general.architecture", GgufValue("llama"));
//   EREDU_TRY_VOID(w.add_tensor_info("token_embd.weight", DType::kQ8_0, shape));
//   EREDU_TRY_VOID(w.open(path));
//   for (each tensor, each chunk) EREDU_TRY_VOID(w.write_tensor_data(chunk));
//   EREDU_TRY_VOID(w.close());

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "eredu/checkpoint/gguf_value.hpp"
#include "eredu/checkpoint/gguf_writer.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

// One declared tensor: GGUF order dims (`ne`, innermost first), its type and payload placement.
struct GgufStreamTensor {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::uint64_t> ne;
  std::uint64_t byte_size = 0;        // payload bytes (without padding)
  std::uint64_t relative_offset = 0;  // from the start of the data section; set by open()
};

class GgufStreamWriter {
 public:
  explicit GgufStreamWriter(GgufWriterOptions options = {}) : options_(options) {}
  ~GgufStreamWriter();
  GgufStreamWriter(const GgufStreamWriter&) = delete;
  GgufStreamWriter& operator=(const GgufStreamWriter&) = delete;
  GgufStreamWriter(GgufStreamWriter&& other) noexcept;
  GgufStreamWriter& operator=(GgufStreamWriter&& other) noexcept;

  // Declaration phase (before open()). Metadata and tensors are written in insertion order.
  GgufStreamWriter& add_metadata(std::string key, GgufValue value);
  // Sets the padding alignment and appends `general.alignment` as u32 (as GgufWriter does).
  GgufStreamWriter& set_alignment(std::uint32_t alignment);
  // Declares a tensor of `dtype` with row-major `shape` (outermost first). kInvalidArgument when
  // the dtype has no ggml id or the innermost dimension is not a whole number of blocks;
  // kOverflow when its size or the data section overflows 64 bits; kInvalidArgument after open().
  [[nodiscard]] Result<void> add_tensor_info(std::string name, DType dtype,
                                             std::span<const std::uint64_t> shape);

  // Everything before the data section (header, metadata, infos, padding), as it will be written.
  [[nodiscard]] Result<std::vector<std::byte>> header_bytes() const;
  // Total file size once every payload is written (known after open(); 0 before).
  [[nodiscard]] std::uint64_t file_size() const noexcept { return file_size_; }
  [[nodiscard]] std::span<const GgufStreamTensor> tensors() const noexcept { return tensors_; }

  // Creates (truncates) `path` and writes the header. kIo naming the path on failure;
  // kInvalidArgument when already open or closed.
  [[nodiscard]] Result<void> open(const std::filesystem::path& path);
  // Appends `chunk` to the payload of the current tensor (the first not yet complete, in
  // declaration order); when a tensor's payload is complete its padding is written and the next
  // tensor becomes current. A chunk must not cross a tensor boundary (kInvalidArgument naming
  // the tensor and both sizes); kIo on a failed write.
  [[nodiscard]] Result<void> write_tensor_data(std::span<const std::byte> chunk);
  // Index of the tensor the next write_tensor_data() call feeds (tensors().size() when done).
  [[nodiscard]] std::size_t current_tensor() const noexcept { return current_; }
  // Checks that every payload was written completely, then flushes and closes the file
  // (kInvalidArgument naming the first incomplete tensor; kIo on a failed flush/close). After an
  // error the file is closed and left incomplete; the caller decides whether to remove it.
  [[nodiscard]] Result<void> close();

 private:
  // Relative payload offsets in declaration order, then the padded data section size.
  [[nodiscard]] Result<std::pair<std::vector<std::uint64_t>, std::uint64_t>> place_payloads() const;
  [[nodiscard]] Result<void> write_raw(std::span<const std::byte> bytes);
  [[nodiscard]] Result<void> write_padding(std::uint64_t count);
  void close_file() noexcept;

  GgufWriterOptions options_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<GgufStreamTensor> tensors_;
  std::uint64_t file_size_ = 0;
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  bool opened_ = false;
  std::size_t current_ = 0;            // tensor being written
  std::uint64_t current_written_ = 0;  // bytes of it written so far
};

}  // namespace eredu::checkpoint
