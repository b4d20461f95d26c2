#pragma once
// A deterministic GGUF writer: the same metadata and tensors (in the same order) always give the
// same bytes. It writes what it is given — it does not validate keys, duplicates or offsets — so
// tests can build malformed files with it as well as valid ones; parse the result with
// parse_gguf to validate. add_tensor() is the checked path for real tensors; add_raw_tensor()
// writes any type id, dims and declared offset.
//
// File layout produced: header (magic "GGUF", version, tensor count, metadata count), metadata
// entries in insertion order, tensor infos in insertion order, zero padding to the alignment,
// then each tensor's data in insertion order, each followed by zero padding to the alignment.
// build() also returns a GgufLayout: the absolute offset of every field it wrote, so that tests
// can mutate exactly one field (see overwrite_le()).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf_value.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

struct GgufWriterOptions {
  std::uint32_t version = 3;     // written as is (2 and 3 share one layout)
  std::uint64_t alignment = 32;  // padding unit; see GgufWriter::set_alignment
};

// A tensor as the writer stores it (GGUF order: `ne` innermost first).
struct GgufWriterTensor {
  std::string name;
  std::uint32_t ggml_type = 0;
  std::vector<std::uint64_t> ne;
  std::vector<std::byte> data;  // written verbatim at the next aligned position of the data section
  // The relative offset declared in the tensor info; by default where `data` is written.
  std::optional<std::uint64_t> declared_offset;
};

// Absolute offsets of the fields of one metadata entry.
struct GgufKvLayout {
  std::string key;
  std::uint64_t offset = 0;        // key length (u64)
  std::uint64_t key_offset = 0;    // key bytes
  std::uint64_t type_offset = 0;   // value type (u32)
  std::uint64_t value_offset = 0;  // value (for arrays: the element type u32, then the count u64)
  std::uint64_t end = 0;           // one past the last byte of the entry
};

// Absolute offsets of the fields of one tensor info, and where its data was written.
struct GgufTensorLayout {
  std::string name;
  std::uint64_t offset = 0;         // name length (u64)
  std::uint64_t name_offset = 0;    // name bytes
  std::uint64_t rank_offset = 0;    // n_dims (u32)
  std::uint64_t dims_offset = 0;    // ne[0] (u64), then ne[1], ...
  std::uint64_t type_offset = 0;    // ggml type (u32)
  std::uint64_t offset_offset = 0;  // relative data offset (u64)
  std::uint64_t end = 0;            // one past the info record
  std::uint64_t data_offset = 0;    // absolute offset where its data bytes were written
  std::uint64_t data_size = 0;      // how many data bytes were written
};

struct GgufLayout {
  static constexpr std::uint64_t kMagicOffset = 0;
  static constexpr std::uint64_t kVersionOffset = 4;
  static constexpr std::uint64_t kTensorCountOffset = 8;
  static constexpr std::uint64_t kMetadataCountOffset = 16;
  std::vector<GgufKvLayout> metadata;
  std::vector<GgufTensorLayout> tensors;
  std::uint64_t infos_end = 0;            // end of the last tensor info (before padding)
  std::uint64_t data_section_offset = 0;  // absolute
  std::uint64_t size = 0;                 // total bytes
};

struct GgufImage {
  std::vector<std::byte> bytes;
  GgufLayout layout;
};

class GgufWriter {
 public:
  explicit GgufWriter(GgufWriterOptions options = {}) : options_(options) {}

  // Appends a metadata entry (any key, any value; duplicates are written as given).
  GgufWriter& add_metadata(std::string key, GgufValue value);
  // Sets the padding alignment and appends `general.alignment` as u32.
  GgufWriter& set_alignment(std::uint32_t alignment);

  // Appends a tensor of `dtype` with row-major `shape` (outermost first); `data` must be exactly
  // its byte size. kInvalidArgument when the dtype has no ggml id, the innermost dimension is not
  // a whole number of blocks, or the data size differs.
  Result<void> add_tensor(std::string name, DType dtype, std::span<const std::uint64_t> shape,
                          std::span<const std::byte> data);
  // Appends a tensor exactly as given (for malformed fixtures).
  GgufWriter& add_raw_tensor(GgufWriterTensor tensor);

  // The file bytes and the offset of every field. Errors only on arithmetic overflow (kOverflow)
  // or an alignment of 0.
  [[nodiscard]] Result<GgufImage> build() const;
  // build() and write the bytes to `path` (kIo on failure).
  [[nodiscard]] Result<void> write_file(const std::filesystem::path& path) const;

  [[nodiscard]] const GgufWriterOptions& options() const noexcept { return options_; }

 private:
  GgufWriterOptions options_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<GgufWriterTensor> tensors_;
};

// Encodes one value (without its type id) as GGUF does; used by the writer and for fixtures.
void encode_gguf_value(const GgufValue& value, std::vector<std::byte>& out);
void encode_gguf_array(const GgufArray& array, std::vector<std::byte>& out);

// Overwrites sizeof(T) bytes at `offset` with `value` in little-endian order; false (and no
// write) when the range is outside `bytes`. For mutation tests and fuzz seeds.
template <typename T>
bool overwrite_le(std::vector<std::byte>& bytes, std::uint64_t offset, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (offset > bytes.size() || sizeof(T) > bytes.size() - offset) return false;
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
  return true;
}

// Writes `bytes` to `path` (truncating). kIo naming the path on failure.
[[nodiscard]] Result<void> write_bytes_to_file(const std::filesystem::path& path,
                                               std::span<const std::byte> bytes);

}  // namespace eredu::checkpoint
