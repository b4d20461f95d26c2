#pragma once
// Split GGUF sets: `<prefix>-00001-of-0000N.gguf` ... `<prefix>-0000N-of-0000N.gguf` in one
// directory (llama.cpp's gguf-split naming, five-digit numbers). A set is found from ANY shard's
// path; the other shard paths are derived only from that file name's pattern, in the same
// directory (a hostile name cannot point elsewhere: the prefix comes from a file name, which holds
// no separator). Each shard carries `split.no` (0-based), `split.count` and, usually in the first
// shard, `split.tensors.count`; all must agree with the names and with each other, and no tensor
// may appear in two shards.
//
// The pieces are separate so that a bounded shard cache can open shards lazily: list the paths
// (gguf_split_paths), parse each shard from a MappedFile (parse_gguf_contents), check it
// (check_gguf_shard), then assemble() the set from parsed contents without keeping mappings.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eredu/checkpoint/gguf.hpp"

namespace eredu::checkpoint {

// The parts of a split shard's file name.
struct GgufSplitName {
  std::filesystem::path directory;
  std::string prefix;        // "model" in "model-00002-of-00005.gguf"
  std::uint32_t number = 0;  // 1-based, as in the name
  std::uint32_t count = 0;
};

// Parses `<prefix>-NNNNN-of-MMMMM.gguf` (exactly five digits each, 1 <= N <= M, prefix
// non-empty); nullopt for any other name.
[[nodiscard]] std::optional<GgufSplitName> parse_gguf_split_name(const std::filesystem::path& path);
// The path of shard `number` (1-based) of the set `name` belongs to.
[[nodiscard]] std::filesystem::path gguf_split_path(const GgufSplitName& name,
                                                    std::uint32_t number);
// Every shard path of the set `any_shard` belongs to, in order; a name that is not a split name
// gives just itself.
[[nodiscard]] std::vector<std::filesystem::path> gguf_split_paths(
    const std::filesystem::path& any_shard);

// The split keys of one file; nullopt when it has none (an ordinary single file).
struct GgufSplitInfo {
  std::uint32_t number = 0;                   // split.no, 0-based
  std::uint32_t count = 1;                    // split.count
  std::optional<std::uint64_t> tensor_count;  // split.tensors.count, when present
};
[[nodiscard]] Result<std::optional<GgufSplitInfo>> read_gguf_split_info(
    const GgufContents& contents);

// Checks that a parsed shard is shard `index` (0-based) of a set of `count`: its split keys (when
// count > 1 they are required) agree. Errors name the shard's path.
[[nodiscard]] Result<void> check_gguf_shard(const GgufContents& contents, std::uint32_t index,
                                            std::uint32_t count);

// One shard of a set.
struct GgufShard {
  std::filesystem::path path;
  std::shared_ptr<const GgufContents> contents;
  std::shared_ptr<const MappedFile> mapping;  // null when the set was opened without mappings
};

// A tensor of the merged list: its info (owned by the shard's contents) and the shard holding it.
struct GgufShardTensor {
  const GgufTensorInfo* info = nullptr;
  std::uint32_t shard = 0;  // index into GgufShardSet::shards()
};

struct GgufShardSetOptions {
  // Keep every shard mapped after parsing (true), or drop the mappings and let the caller map
  // shards on demand (GgufFile::attach re-joins a mapping with its parsed contents).
  bool keep_mappings = true;
};

// A model stored as one GGUF file or a split set: every shard and the merged tensor list.
class GgufShardSet {
 public:
  // Finds the set `any_shard` belongs to, maps and parses every shard, checks the set.
  [[nodiscard]] static Result<GgufShardSet> open(const std::filesystem::path& any_shard,
                                                 const GgufLimits& limits = {},
                                                 GgufShardSetOptions options = {});
  // Assembles a set from shards parsed by the caller, in order (shard i must be split.no i).
  [[nodiscard]] static Result<GgufShardSet> assemble(std::vector<GgufShard> shards);

  GgufShardSet(GgufShardSet&&) = default;
  GgufShardSet& operator=(GgufShardSet&&) = default;

  [[nodiscard]] std::span<const GgufShard> shards() const noexcept { return shards_; }
  // The first shard: it holds the model's metadata.
  [[nodiscard]] const GgufContents& primary() const noexcept { return *shards_.front().contents; }
  // Every tensor of every shard, in shard order then file order.
  [[nodiscard]] std::span<const GgufShardTensor> tensors() const noexcept { return tensors_; }
  [[nodiscard]] const GgufShardTensor* find_tensor(std::string_view name) const noexcept;
  // The tensor's exact bytes from its shard's mapping; kInvalidArgument when that shard is not
  // mapped (opened with keep_mappings = false).
  [[nodiscard]] Result<std::span<const std::byte>> tensor_bytes(
      const GgufShardTensor& tensor) const;

 private:
  GgufShardSet() = default;
  std::vector<GgufShard> shards_;
  std::vector<GgufShardTensor> tensors_;
  std::unordered_map<std::string_view, std::size_t> index_;  // views into the shards' names
};

}  // namespace eredu::checkpoint
