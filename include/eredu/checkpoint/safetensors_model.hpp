#pragma once
// SafeTensors model directories: a single `model.safetensors`, or shards listed by
// `model.safetensors.index.json` ({"metadata": {"total_size": N}, "weight_map": {tensor: file}}).
//
// Opening a model reads and validates every shard's header (with read_safetensors_header, so no
// shard stays open or mapped) and cross-checks them against the index (reliability.md S26):
//   * a shard path must be relative, without "..", and resolve (symlinks followed) inside the
//     model directory. One exception, on by default: in a Hugging Face cache snapshot
//     (<repo>/snapshots/<revision>/), shards are symlinks into <repo>/blobs/, which is allowed.
//     A .safetensors file named directly by the caller may be a symlink to anywhere;
//   * a missing shard is kNotFound naming the shard and a tensor the index places in it;
//   * a tensor in two shards is kDuplicate; an index entry the shard does not have, or a shard
//     tensor the index does not list (or places in another shard), is kInvalidModel naming both
//     the tensor and the shard;
//   * the index must be a JSON object with a non-empty "weight_map" of strings, no duplicate keys
//     at any level, nesting bounded like headers. "metadata" (optional) must be an object; its
//     "total_size" is recorded when it is an unsigned integer and otherwise ignored, as it is
//     informational (other top-level keys are ignored too).
// Mapping is separate: open_shard() maps one shard on demand and binds the header parsed at open
// time to it (rejecting a file that changed in between), so a bounded cache can open and close
// shards lazily.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "eredu/checkpoint/safetensors.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

inline constexpr std::string_view kSafetensorsIndexFileName = "model.safetensors.index.json";
inline constexpr std::string_view kSafetensorsSingleFileName = "model.safetensors";

struct SafetensorsModelOptions {
  SafetensorsLimits limits;                     // applied to every shard header (and index depth)
  std::uint64_t max_index_bytes = 100'000'000;  // the index file's size
  bool allow_hf_cache_blobs = true;             // see the file comment
};

// A parsed model.safetensors.index.json.
struct SafetensorsIndex {
  std::optional<std::uint64_t> total_size;  // metadata.total_size, when an unsigned integer
  // (tensor name, shard file) in bytewise name order; names unique, file names lexically safe
  // (relative, no "..", no NUL) but not yet resolved against a directory.
  std::vector<std::pair<std::string, std::string>> weight_map;
  std::vector<std::string> shard_files;  // distinct shard files, in bytewise order
};

// Parses index JSON text (the fuzzer's entry point); `path` names it in errors. Positions of JSON
// syntax errors are byte offsets in the text.
[[nodiscard]] Result<SafetensorsIndex> parse_safetensors_index(
    std::span<const std::byte> json, std::string_view path,
    const SafetensorsModelOptions& options = {});

// One shard of a model.
struct SafetensorsShard {
  std::string file_name;                // as the index names it (or the single file's name)
  std::filesystem::path path;           // directory / file_name: for messages
  std::filesystem::path resolved_path;  // canonical, symlinks resolved: what gets opened
  SafetensorsHeader header;             // validated, payload untouched
};

// One tensor of the model and the shard that holds it.
struct SafetensorsModelTensor {
  SafetensorsTensor tensor;  // offset is absolute within shards()[shard]
  std::size_t shard = 0;     // index into shards()
};

class SafetensorsModelFiles {
 public:
  // Opens a model from a directory (index if present, else model.safetensors), from the path of
  // an index file, or from the path of a single .safetensors file.
  [[nodiscard]] static Result<SafetensorsModelFiles> open(
      const std::filesystem::path& path, const SafetensorsModelOptions& options = {});

  // The model directory (as given, not canonicalized).
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }
  // The parsed index; nullopt for a single-file model.
  [[nodiscard]] const std::optional<SafetensorsIndex>& index() const noexcept { return index_; }
  // Shards in bytewise file-name order (one for a single-file model).
  [[nodiscard]] const std::vector<SafetensorsShard>& shards() const noexcept { return shards_; }
  // Every tensor, by shard then by offset; names unique across the model.
  [[nodiscard]] const std::vector<SafetensorsModelTensor>& tensors() const noexcept {
    return tensors_;
  }
  // The tensor called `name`, or nullptr.
  [[nodiscard]] const SafetensorsModelTensor* find(std::string_view name) const;
  // The sum of every tensor's byte size.
  [[nodiscard]] std::uint64_t total_tensor_bytes() const noexcept;

  // Maps (or reads) shard `shard` and binds its pre-parsed header; kInvalidModel when the file
  // changed since open(), kInvalidArgument for an index out of range.
  [[nodiscard]] Result<SafetensorsFile> open_shard(
      std::size_t shard, SafetensorsOpenMode mode = SafetensorsOpenMode::kMap) const;

 private:
  std::filesystem::path directory_;
  std::optional<SafetensorsIndex> index_;
  std::vector<SafetensorsShard> shards_;
  std::vector<SafetensorsModelTensor> tensors_;
  std::unordered_map<std::string, std::size_t> by_name_;
};

}  // namespace eredu::checkpoint
