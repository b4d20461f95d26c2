#pragma once
// The SafeTensors reader: one `.safetensors` file, validated before anything is trusted.
//
// Layout (huggingface/safetensors README): an 8-byte little-endian header length N, N bytes of
// UTF-8 JSON that starts with '{' (padded at the end with spaces, 0x20, only), then the data
// buffer. The header maps tensor names to {"dtype", "shape", "data_offsets": [BEGIN, END]} with
// offsets relative to the data buffer, plus an optional "__metadata__" string->string object.
//
// What the reader proves before returning a header (reliability.md §(b.2), S01–S25):
//   * N is checked against the limit and the file size before any allocation; N != 0; N + 8
//     cannot overflow;
//   * the header is valid UTF-8, starts with '{', nests at most `max_json_depth` deep (checked
//     by a linear pre-scan, before JSON parsing), parses as one JSON object followed only by
//     spaces, and has no duplicate keys (tensor names, "__metadata__" keys, entry fields;
//     nlohmann's DOM would silently keep the last). Values of ignored unknown fields are skipped
//     unchecked;
//   * every entry has exactly the fields dtype (string), shape (array of unsigned integers) and
//     data_offsets (exactly two unsigned integers, begin <= end); see UnknownFieldPolicy;
//   * element count and byte size are computed with checked arithmetic; end - begin equals the
//     byte size; sub-byte dtypes whose bit count is not a whole number of bytes are rejected;
//   * sorted by offset, the tensors tile the data buffer exactly: no holes, no overlaps, and the
//     buffer end + 8 + N equals the file size (the polyglot-file guard);
//   * tensor names are opaque keys: never used as paths or format strings. Empty names are
//     rejected (nothing downstream can address them).
//
// Errors are eredu::Error with the file path, the subject (tensor name, "__metadata__" key or
// header field) and an absolute byte offset in the file where one is meaningful: JSON positions
// are reported as 8 + their position in the header text.
//
// Byte order: the format is little-endian and eredu only builds for little-endian hosts (S28):
// the length prefix is decoded byte by byte, and tensor bytes are handed out as raw spans.
//
// Alignment (S22): the data buffer starts at 8 + N, which writers pad to a multiple of 8 but the
// format does not require. eredu never reinterpret_casts tensor bytes; consumers copy (memcpy) or
// use byte loads. An unaligned data start is accepted and logged as a warning.
//
// Concurrent modification (S25): the file size is validated when it is opened (and a pre-parsed
// header is checked against the file it is attached to, by size and a hash of the header bytes).
// A file truncated or rewritten while mapped can still raise SIGBUS on access: that is out of
// scope for a mapping; open with SafetensorsOpenMode::kReadIntoMemory for untrusted files.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

static_assert(std::endian::native == std::endian::little,
              "eredu reads little-endian SafeTensors/GGUF payloads in place: big-endian hosts are "
              "not supported (reliability.md S28)");

// What happens to a field of a tensor entry other than dtype, shape and data_offsets.
enum class UnknownFieldPolicy : std::uint8_t {
  // Default: an unknown field is an error naming the field and the tensor. A field we do not
  // understand could change the meaning of the bytes (a byte order, a quantization scheme), so
  // guessing is worse than refusing.
  kReject,
  // Skip the field's value (of any shape, within the depth limit), like the reference reader.
  kIgnore,
};

// Tensors whose byte size is 0 (a 0 in the shape).
enum class ZeroSizeTensorPolicy : std::uint8_t {
  // Default, as the reference: accepted where the offsets stay contiguous, which includes a
  // zero-size tensor sitting at another tensor's start offset (HF PoC F002). Its byte span is
  // always empty, so nothing is ever read through it.
  kAllow,
  // Strict: any zero-size tensor is an error.
  kReject,
};

// Bounds applied while reading untrusted headers. The defaults match the reference reader.
struct SafetensorsLimits {
  std::uint64_t max_header_bytes = 100'000'000;  // N; the reference's MAX_HEADER_SIZE
  std::uint32_t max_json_depth = 64;             // a valid header needs 3
  std::uint32_t max_rank = 16;                   // dimensions per shape
  std::uint64_t max_tensors = 10'000'000;        // entries (a 100 MB header holds ~10^6)
  UnknownFieldPolicy unknown_fields = UnknownFieldPolicy::kReject;
  ZeroSizeTensorPolicy zero_size_tensors = ZeroSizeTensorPolicy::kAllow;
};

// One tensor as the header describes it, after validation.
struct SafetensorsTensor {
  std::string name;                  // the header key, verbatim (an opaque key)
  DType dtype;                       // from dtype_from_safetensors
  std::vector<std::uint64_t> shape;  // row-major, outermost first; empty for a 0-rank scalar
  std::uint64_t offset = 0;          // absolute byte offset of the first byte in the file
  std::uint64_t byte_size = 0;       // end - begin, equal to checked_byte_size(dtype, shape)

  [[nodiscard]] std::uint64_t element_count() const noexcept;
  friend bool operator==(const SafetensorsTensor&, const SafetensorsTensor&) = default;
};

struct SafetensorsHeaderAccess;
struct SafetensorsFileAccess;

// A validated header: everything about a file except its payload. A plain value (no file handle)
// so that a model's shards can be parsed once and mapped later, lazily.
class SafetensorsHeader {
 public:
  SafetensorsHeader() = default;
  // Copies rebuild the name index (it holds views into the tensor names); moves keep it.
  SafetensorsHeader(const SafetensorsHeader& other);
  SafetensorsHeader& operator=(const SafetensorsHeader& other);
  SafetensorsHeader(SafetensorsHeader&&) noexcept = default;
  SafetensorsHeader& operator=(SafetensorsHeader&&) noexcept = default;

  // The file (or buffer name) the header was read from; used in errors.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // N, the length of the JSON header text (including any padding).
  [[nodiscard]] std::uint64_t header_length() const noexcept { return header_length_; }
  // 8 + N: the absolute offset of the data buffer.
  [[nodiscard]] std::uint64_t data_start() const noexcept { return header_length_ + 8; }
  // The size of the whole file, which the data buffer ends exactly at.
  [[nodiscard]] std::uint64_t file_size() const noexcept { return file_size_; }
  // Whether the data buffer starts at a multiple of 8 (writers pad so that it does).
  [[nodiscard]] bool data_is_8_byte_aligned() const noexcept { return data_start() % 8 == 0; }
  // FNV-1a 64 over the first 8 + N bytes; used to notice a file changed between parse and map.
  [[nodiscard]] std::uint64_t header_hash() const noexcept { return header_hash_; }

  // Tensors in file order: ascending offset; at a shared offset (only zero-size tensors share
  // one) zero-size tensors come first, ordered by name.
  [[nodiscard]] const std::vector<SafetensorsTensor>& tensors() const noexcept { return tensors_; }
  // The tensor called `name`, or nullptr.
  [[nodiscard]] const SafetensorsTensor* find(std::string_view name) const noexcept;
  // The "__metadata__" object (empty when absent), sorted by key.
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const noexcept {
    return metadata_;
  }

 private:
  friend struct SafetensorsHeaderAccess;  // the parser (src/checkpoint/safetensors_header.cpp)
  void rebuild_index();
  std::string path_;
  std::uint64_t header_length_ = 0;
  std::uint64_t file_size_ = 0;
  std::uint64_t header_hash_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  std::unordered_map<std::string_view, std::size_t> by_name_;  // views into tensors_[i].name
  std::map<std::string, std::string> metadata_;
};

// Parses and validates a header from the first bytes of a file. `prefix` holds at least the first
// 8 + N bytes (more is fine; the whole file is fine); `file_size` is the size of the whole file,
// against which N and the data buffer are checked; `path` names the file in errors. Allocates
// nothing sized by the file before N has been checked against `file_size` and the limit.
[[nodiscard]] Result<SafetensorsHeader> parse_safetensors_header(
    std::span<const std::byte> prefix, std::uint64_t file_size, std::string_view path,
    const SafetensorsLimits& limits = {});

// Reads and validates only the header of the file at `path` (8 + N bytes, read with ordinary
// reads, no mapping). This is how a model's shards are inspected without holding them open.
[[nodiscard]] Result<SafetensorsHeader> read_safetensors_header(
    const std::filesystem::path& path, const SafetensorsLimits& limits = {});

// How open_safetensors gets the bytes.
enum class SafetensorsOpenMode : std::uint8_t {
  kMap,             // read-only mmap (default)
  kReadIntoMemory,  // read() the whole file into memory: immune to later truncation (S25)
};

// A validated header together with the bytes of its file.
class SafetensorsFile {
 public:
  // Binds a header parsed earlier (e.g. by read_safetensors_header) to the file's bytes. Fails
  // (kInvalidModel, naming the file) when the file's size or header bytes differ from what was
  // parsed: the file changed in between.
  [[nodiscard]] static Result<SafetensorsFile> attach(SafetensorsHeader header,
                                                      std::shared_ptr<const MappedFile> file);

  [[nodiscard]] const SafetensorsHeader& header() const noexcept { return header_; }
  [[nodiscard]] const std::vector<SafetensorsTensor>& tensors() const noexcept {
    return header_.tensors();
  }
  [[nodiscard]] const SafetensorsTensor* find(std::string_view name) const noexcept {
    return header_.find(name);
  }
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const noexcept {
    return header_.metadata();
  }
  [[nodiscard]] const std::shared_ptr<const MappedFile>& file() const noexcept { return file_; }

  // Exactly the bytes of `tensor` (which must come from this file's header): `byte_size` bytes
  // at `offset`. Empty for a zero-size tensor. The span lives as long as file().
  [[nodiscard]] Result<std::span<const std::byte>> tensor_bytes(
      const SafetensorsTensor& tensor) const;
  // The bytes of the tensor called `name`; kNotFound naming it when absent.
  [[nodiscard]] Result<std::span<const std::byte>> tensor_bytes(std::string_view name) const;

 private:
  friend struct SafetensorsFileAccess;  // parse_safetensors (src/checkpoint/safetensors_file.cpp)
  SafetensorsHeader header_;
  std::shared_ptr<const MappedFile> file_;
};

// Parses a whole file already in memory or mapped (the fuzzer's entry point: wrap bytes with
// MappedFile::from_bytes).
[[nodiscard]] Result<SafetensorsFile> parse_safetensors(std::shared_ptr<const MappedFile> file,
                                                        const SafetensorsLimits& limits = {});

// Opens and validates the file at `path`.
[[nodiscard]] Result<SafetensorsFile> open_safetensors(
    const std::filesystem::path& path, const SafetensorsLimits& limits = {},
    SafetensorsOpenMode mode = SafetensorsOpenMode::kMap);

// Optional payload validation (S23: the format allows NaN/Inf, so the reader never checks them).
// For floating-point dtypes (F64, F32, F16, BF16, F8_E4M3, F8_E5M2) fails with kInvalidModel
// naming the tensor, the element index and its absolute byte offset at the first NaN or
// infinity; other dtypes always pass. Reads the tensor's bytes with byte loads (no alignment
// assumptions).
[[nodiscard]] Result<void> check_tensor_finite(const SafetensorsFile& file,
                                               const SafetensorsTensor& tensor);

}  // namespace eredu::checkpoint
