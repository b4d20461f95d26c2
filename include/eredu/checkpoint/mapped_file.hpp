#pragma once
// A read-only memory mapping of a whole file. The size is taken once at open; every access goes
// through `bytes()` and callers bound-check against `size()`. Shared ownership lets leases pin a
// shard's mapping for as long as they hold its bytes.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

class MappedFile {
 public:
  // Maps `path` read-only. An empty file maps to an empty span (no mmap call). Errors are kIo
  // (or kNotFound) naming the path.
  [[nodiscard]] static Result<std::shared_ptr<const MappedFile>> open(
      const std::filesystem::path& path);

  // Wraps bytes already in memory (tests, fuzzers): the file keeps its own copy.
  [[nodiscard]] static std::shared_ptr<const MappedFile> from_bytes(
      std::span<const std::byte> bytes, std::string name);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  // The bytes [offset, offset + length), or an error naming the file when that range is not inside
  // it (overflow-checked).
  [[nodiscard]] Result<std::span<const std::byte>> slice(std::uint64_t offset,
                                                         std::uint64_t length) const;

  // Copies `range` (bytes of this file, as bytes() or slice() gave them) into `out`, which holds
  // range.size() bytes, with read(2) rather than through the mapping: a reader that keeps its own
  // copy then maps no page of the file. A fault on the mapping maps every page-cache page in a
  // window around it (Linux's fault-around, 64 KiB), and so brings back pages of the tensors
  // beside the range that a reader had meant to leave unmapped. A file made with from_bytes
  // copies from memory. Errors: kInvalidArgument when `range` is not inside the file, kIo (path,
  // offset) when the read fails or the file has shrunk under the mapping.
  [[nodiscard]] Result<void> copy_out(std::span<const std::byte> range, std::byte* out) const;

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool is_mapped_ = false;
  int fd_ = -1;  // open while the file is mapped, for copy_out
  std::unique_ptr<std::byte[]> owned_;
  std::string path_;
};

}  // namespace eredu::checkpoint
