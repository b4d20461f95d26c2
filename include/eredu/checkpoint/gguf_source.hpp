#pragma once
// GgufCheckpointSource: a CheckpointSource over one GGUF file or a split set (found from any
// shard).
//
// Opening parses every shard's header and tensor infos (GgufShardSet, without keeping mappings) and
// builds the catalog from them; no tensor payload is read. Shards are mapped lazily, through the
// bounded shard cache, the first time a lease needs them; each reopened shard is checked against
// the header parsed at open (GgufFile::attach: a file whose size changed is refused).

#include <cstddef>
#include <filesystem>
#include <memory>

#include "eredu/checkpoint/gguf_split.hpp"
#include "eredu/checkpoint/source.hpp"

namespace eredu::checkpoint {

struct GgufSourceOptions {
  GgufLimits limits;
  std::size_t max_open_shards = kDefaultMaxOpenShards;
};

class GgufCheckpointSource final : public ShardedCheckpointSource {
 public:
  // Opens the file, or the split set `any_shard` belongs to. The readers' errors (naming the
  // shard, key or tensor and the byte offset), or kInvalidArgument for a zero shard limit.
  [[nodiscard]] static Result<GgufCheckpointSource> open(const std::filesystem::path& any_shard,
                                                         const GgufSourceOptions& options = {});

  // The parsed shards (headers, metadata, tensor infos; no mappings).
  [[nodiscard]] const GgufShardSet& shard_set() const noexcept { return *set_; }
  // The model's metadata lives in the first shard.
  [[nodiscard]] const GgufContents& primary() const noexcept { return set_->primary(); }

 private:
  GgufCheckpointSource(ShardedCheckpointSource base, std::shared_ptr<const GgufShardSet> set)
      : ShardedCheckpointSource(std::move(base)), set_(std::move(set)) {}
  std::shared_ptr<const GgufShardSet> set_;
};

}  // namespace eredu::checkpoint
