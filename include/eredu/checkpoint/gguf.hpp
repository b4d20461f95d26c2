#pragma once
// The bounded GGUF container reader (GGUF v2 and v3, little-endian).
//
// parse_gguf() validates a whole GGUF file held in a MappedFile without touching tensor payload:
// header, every metadata key/value (all thirteen value types, arrays of arrays up to a depth
// limit), `general.alignment`, and every tensor info (name, rank, dims, ggml type, offset). Every
// count read from the file is checked against the bytes left in the file times the smallest
// possible encoding of one item *before* any memory is reserved, every size and offset is computed
// with checked 64-bit arithmetic, and every tensor's data range must lie inside the file, be
// aligned and not overlap another tensor's range (checked at open, even though no payload is read).
//
// Errors are eredu::Error values: kInvalidModel (malformed), kUnsupported (well-formed but not
// handled: v1, future versions, big-endian files, removed/unknown ggml type ids), kLimitExceeded (a
// GgufLimits bound), kOverflow (arithmetic on declared sizes), kIo / kNotFound (opening the file).
// Each carries the file path, the subject (metadata key or tensor name, when known) and the
// absolute byte offset of the offending field.
//
// Decisions this reader takes where the spec or the catalogue leaves a choice:
//  - Tensor names are 1..64 bytes (the spec's "at most 64 bytes"; ggml's 64 counts the NUL, so
//    ggml itself rejects 64); NUL, control bytes (< 0x20, 0x7F) are rejected, UTF-8 is allowed.
//  - Tensor rank is 1..max_rank (default 4, ggml's GGML_MAX_DIMS; the limit can be raised to 8).
//  - A zero dimension is accepted and makes an empty tensor (0 elements, 0 bytes). No dimension is
//    ever used as a divisor.
//  - `general.alignment` must be u32 or u64, a non-zero power of two, at most
//    GgufLimits::max_alignment. Values that are not a multiple of 8 (1, 2, 4) are accepted with a
//    warning (llama.cpp accepts them; the spec asks for a multiple of 8).
//  - Tensor data may be stored in any order; ranges are sorted and checked for overlap.
//  - Padding bytes are not inspected; trailing bytes after the last tensor are accepted with a
//    warning. With no tensors the data section may begin past the end of the file
//    (metadata-only files such as vocabularies).
//  - Strings are raw bytes (UTF-8 is not validated here; consumers validate).
//  - Keys must be 1..65535 bytes of printable ASCII (0x20..0x7E) and unique; with
//    GgufLimits::strict_keys they must also be dotted lower_snake_case with non-empty segments.
//  - A bool byte other than 0 or 1 is an error (the spec calls anything else invalid).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/checkpoint/gguf_value.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

inline constexpr std::uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr std::uint64_t kGgufHeaderBytes = 24;    // magic, version, n_tensors, n_kv
inline constexpr std::uint64_t kGgufDefaultAlignment = 32;
inline constexpr std::uint64_t kGgufMaxTensorNameBytes = 64;
inline constexpr std::uint64_t kGgufMaxKeyBytes = 65535;
// Smallest possible encodings, used to bound declared counts by the bytes left in the file.
inline constexpr std::uint64_t kGgufMinKvBytes = 8 + 1 + 4 + 1;  // len, key, type, u8
inline constexpr std::uint64_t kGgufMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // rank 1

// Bounds on what a file may declare. Defaults follow eredu-design-reference.md §6a, except the
// string cap (64 MiB instead of 256 MiB, as the catalogue G20 suggests) and the rank (ggml's 4).
struct GgufLimits {
  std::uint64_t max_metadata_entries = 1'000'000;
  std::uint64_t max_array_elements = 16'000'000;  // per array (nested arrays count separately)
  std::uint64_t max_tensors = 1'000'000;
  std::uint32_t max_rank = 4;                    // at most 8 is honoured
  std::uint64_t max_string_bytes = 64ull << 20;  // one string value, key excluded
  std::uint32_t max_nesting_depth = 16;  // array levels (1 = no nesting); at most 64 honoured
  // Bound on the decoded header kept in memory: keys, strings, array storage, and the entry and
  // tensor-info records themselves (GgufLimits::max_metadata_bytes in errors).
  std::uint64_t max_metadata_bytes = 1ull << 30;
  std::uint64_t max_alignment = 1ull << 20;
  bool strict_keys = false;  // require dotted lower_snake_case keys
};

// Header facts of one parsed file.
struct GgufHeaderInfo {
  std::uint32_t version = 0;
  std::uint64_t tensor_count = 0;
  std::uint64_t metadata_count = 0;
  std::uint64_t alignment = kGgufDefaultAlignment;
  std::uint64_t data_section_offset = 0;  // absolute; tensor offsets are relative to it
  std::uint64_t file_size = 0;
};

// One metadata entry in file order.
struct GgufMetadataEntry {
  std::string key;
  GgufValue value;
  std::uint64_t offset = 0;        // absolute offset of the entry (its key length field)
  std::uint64_t value_offset = 0;  // absolute offset of the value (after the type id)
};

// One tensor info. `ne` is GGUF order (innermost first); `shape` is eredu's row-major order
// (outermost first), i.e. `ne` reversed.
struct GgufTensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::uint32_t ggml_type = 0;
  std::vector<std::uint64_t> ne;
  std::vector<std::uint64_t> shape;
  std::uint64_t element_count = 0;
  std::uint64_t relative_offset = 0;  // as stored, relative to the data section
  std::uint64_t data_offset = 0;      // absolute offset of the first byte in the file
  std::uint64_t byte_size = 0;
  std::uint64_t info_offset = 0;  // absolute offset of this tensor's info record
};

// Everything parse_gguf learned about a file, without the mapping: header, metadata and tensor
// infos, with typed metadata accessors. Cheap to keep for files that are not mapped right now.
class GgufContents {
 public:
  GgufContents() = default;
  // Not copyable or movable: the name indexes hold views into the stored entries.
  GgufContents(const GgufContents&) = delete;
  GgufContents& operator=(const GgufContents&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const GgufHeaderInfo& header() const noexcept { return header_; }
  [[nodiscard]] std::span<const GgufMetadataEntry> metadata() const noexcept { return metadata_; }
  [[nodiscard]] std::span<const GgufTensorInfo> tensors() const noexcept { return tensors_; }

  // The entry for `key`, or nullptr.
  [[nodiscard]] const GgufMetadataEntry* find_metadata(std::string_view key) const noexcept;
  // The tensor named `name`, or nullptr.
  [[nodiscard]] const GgufTensorInfo* find_tensor(std::string_view name) const noexcept;

  // Typed metadata access. A missing key is kNotFound; a value of another type is kInvalidModel
  // naming the key, the type found and the type expected; both carry the path, key and offset.
  //  get_u32 / get_u64 / get_i64: any integer value type whose value fits (widening is allowed,
  //    a negative or too large value is an error);
  //  get_f32: exactly f32; get_float: f32 or f64 as double;
  //  get_bool, get_string (raw bytes), get_array: exactly that type.
  [[nodiscard]] Result<std::uint32_t> get_u32(std::string_view key) const;
  [[nodiscard]] Result<std::uint64_t> get_u64(std::string_view key) const;
  [[nodiscard]] Result<std::int64_t> get_i64(std::string_view key) const;
  [[nodiscard]] Result<float> get_f32(std::string_view key) const;
  [[nodiscard]] Result<double> get_float(std::string_view key) const;
  [[nodiscard]] Result<bool> get_bool(std::string_view key) const;
  [[nodiscard]] Result<std::string_view> get_string(std::string_view key) const;
  [[nodiscard]] Result<const GgufArray*> get_array(std::string_view key) const;
  // get_array plus a check of the element type.
  [[nodiscard]] Result<const GgufArray*> get_array(std::string_view key,
                                                   GgufValueType element_type) const;

 private:
  friend class GgufParser;
  [[nodiscard]] Result<const GgufMetadataEntry*> require(std::string_view key) const;
  [[nodiscard]] Error type_error(const GgufMetadataEntry& entry, std::string_view expected) const;

  std::string path_;
  GgufHeaderInfo header_;
  std::vector<GgufMetadataEntry> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string_view, std::size_t> metadata_index_;  // views into metadata_
  std::unordered_map<std::string_view, std::size_t> tensor_index_;    // views into tensors_
};

// Parses and validates the GGUF file held in `file` (any bytes: a mapped file, a test buffer, a
// fuzzer input). Never reads outside `file`, never aborts, never allocates more than a bound
// derived from the file size and `limits`. The result shares ownership of nothing but the
// parsed description; see GgufFile for payload access.
[[nodiscard]] Result<std::shared_ptr<const GgufContents>> parse_gguf_contents(
    const MappedFile& file, const GgufLimits& limits = {});

// A parsed GGUF file together with its mapping: the contents plus exact tensor byte spans.
class GgufFile {
 public:
  // Maps `path` read-only and parses it.
  [[nodiscard]] static Result<GgufFile> open(const std::filesystem::path& path,
                                             const GgufLimits& limits = {});
  // Parses an already mapped (or in-memory) file.
  [[nodiscard]] static Result<GgufFile> parse(std::shared_ptr<const MappedFile> file,
                                              const GgufLimits& limits = {});
  // Re-joins contents parsed earlier with a fresh mapping of the same file (lazy shard reopen).
  // Fails with kIo when the file's size changed since it was parsed.
  [[nodiscard]] static Result<GgufFile> attach(std::shared_ptr<const GgufContents> contents,
                                               std::shared_ptr<const MappedFile> file);

  [[nodiscard]] const GgufContents& contents() const noexcept { return *contents_; }
  [[nodiscard]] const std::shared_ptr<const GgufContents>& shared_contents() const noexcept {
    return contents_;
  }
  [[nodiscard]] const std::shared_ptr<const MappedFile>& mapped_file() const noexcept {
    return file_;
  }
  // Shorthands for contents().
  [[nodiscard]] const GgufHeaderInfo& header() const noexcept { return contents_->header(); }
  [[nodiscard]] std::span<const GgufMetadataEntry> metadata() const noexcept {
    return contents_->metadata();
  }
  [[nodiscard]] std::span<const GgufTensorInfo> tensors() const noexcept {
    return contents_->tensors();
  }
  [[nodiscard]] const GgufTensorInfo* find_tensor(std::string_view name) const noexcept {
    return contents_->find_tensor(name);
  }

  // The exact bytes of a tensor of this file (validated at parse time; re-checked here).
  [[nodiscard]] Result<std::span<const std::byte>> tensor_bytes(const GgufTensorInfo& info) const;
  // The same by name; kNotFound naming the tensor when absent.
  [[nodiscard]] Result<std::span<const std::byte>> tensor_bytes(std::string_view name) const;

 private:
  GgufFile(std::shared_ptr<const GgufContents> contents, std::shared_ptr<const MappedFile> file)
      : contents_(std::move(contents)), file_(std::move(file)) {}
  std::shared_ptr<const GgufContents> contents_;
  std::shared_ptr<const MappedFile> file_;
};

// The fuzzer-facing entry point: same as GgufFile::parse.
[[nodiscard]] inline Result<GgufFile> parse_gguf(std::shared_ptr<const MappedFile> file,
                                                 const GgufLimits& limits = {}) {
  return GgufFile::parse(std::move(file), limits);
}

}  // namespace eredu::checkpoint
