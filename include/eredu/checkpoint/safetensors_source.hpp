#pragma once
// SafetensorsCheckpointSource: a CheckpointSource over a SafeTensors model — a single .safetensors
// file, a model.safetensors.index.json, or a directory holding either.
//
// Opening reads and validates every shard's header (SafetensorsModelFiles, which keeps no shard
// open) and builds the catalog from them; no tensor payload is read. Shards are mapped lazily,
// through the bounded shard cache; a reopened shard whose size or header changed is refused.

#include <cstddef>
#include <filesystem>
#include <memory>

#include "eredu/checkpoint/safetensors_model.hpp"
#include "eredu/checkpoint/source.hpp"

namespace eredu::checkpoint {

struct SafetensorsSourceOptions {
  SafetensorsModelOptions model;
  std::size_t max_open_shards = kDefaultMaxOpenShards;
};

class SafetensorsCheckpointSource final : public ShardedCheckpointSource {
 public:
  // The readers' errors (naming the shard, tensor and byte offset), or kInvalidArgument for a zero
  // shard limit.
  [[nodiscard]] static Result<SafetensorsCheckpointSource> open(
      const std::filesystem::path& path, const SafetensorsSourceOptions& options = {});

  // The model's shards and headers (no mappings).
  [[nodiscard]] const SafetensorsModelFiles& model() const noexcept { return *model_; }

 private:
  SafetensorsCheckpointSource(ShardedCheckpointSource base,
                              std::shared_ptr<const SafetensorsModelFiles> model)
      : ShardedCheckpointSource(std::move(base)), model_(std::move(model)) {}
  std::shared_ptr<const SafetensorsModelFiles> model_;
};

}  // namespace eredu::checkpoint
