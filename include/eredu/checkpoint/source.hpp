#pragma once
// CheckpointSource: the cold-path, format-neutral interface over a checkpoint (GGUF, SafeTensors or
// in-memory tensors). Metadata queries (keys, metadata, catalog) answer from the catalog built from
// headers and never touch payload; payload is reached only through acquire_lease, which reads the
// selected bytes of exactly one tensor and pins its shard in a bounded shard cache.
//
// Implementations are thread-safe: every member may be called concurrently.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/checkpoint/lease.hpp"
#include "eredu/checkpoint/selection.hpp"
#include "eredu/checkpoint/shard_cache.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

struct TensorReadRequest {
  std::string key;
  TensorSelection selection = FullSelection{};
  ReadPolicy policy = ReadPolicy::kRequireBounded;
};

// What a source has done so far. Payload counters move only in acquire_lease.
struct SourceDiagnostics {
  std::string container;  // "memory", "gguf", "safetensors"
  std::uint64_t leases_granted = 0;
  std::uint64_t physical_reads = 0;         // payload spans read (one per lease)
  std::uint64_t bytes_read = 0;             // payload bytes in those spans
  std::vector<std::string> touched_shards;  // shards whose payload was read, first touch first
  ShardCacheStats cache;                    // hits, misses, evictions, opens, open/pinned now
};

class CheckpointSource {
 public:
  virtual ~CheckpointSource() = default;

  // Metadata of every tensor, from headers only.
  [[nodiscard]] virtual const TensorCatalog& catalog() const noexcept = 0;
  // Tensor names in catalog order.
  [[nodiscard]] virtual std::vector<std::string> keys() const { return catalog().keys(); }
  // The tensor's metadata, or kNotFound naming the key.
  [[nodiscard]] virtual Result<const TensorMetadata*> metadata(std::string_view key) const {
    return catalog().get(key);
  }
  // Reads the selected bytes of one tensor. Errors (all before any payload is read): kNotFound
  // (unknown key), kInvalidArgument (invalid selection), kUnsupported (RequireBounded and the
  // selection is not one byte span), kCapacityExhausted (every open shard is pinned), kIo / the
  // container's error when its shard cannot be opened or no longer matches its header.
  [[nodiscard]] virtual Result<CheckpointLease> acquire_lease(
      const TensorReadRequest& request) const = 0;
  [[nodiscard]] virtual SourceDiagnostics diagnostics() const = 0;
  // "memory", "gguf", "safetensors".
  [[nodiscard]] virtual std::string_view container() const noexcept = 0;

 protected:
  CheckpointSource() = default;
  CheckpointSource(const CheckpointSource&) = default;
  CheckpointSource(CheckpointSource&&) = default;
  CheckpointSource& operator=(const CheckpointSource&) = default;
  CheckpointSource& operator=(CheckpointSource&&) = default;
};

// Where a tensor's payload lies: which shard, and the byte offset inside it.
struct TensorLocation {
  std::size_t shard_index = 0;
  std::uint64_t offset_bytes = 0;
};

// The shared machinery of every concrete source: a catalog, each tensor's location, and a bounded
// shard cache whose opener the subclass supplies. acquire_lease validates the request against the
// catalog, plans the selection, pins the shard, bound-checks the tensor against the shard's size
// and hands out the bytes, counting every payload read in the diagnostics.
class ShardedCheckpointSource : public CheckpointSource {
 public:
  [[nodiscard]] const TensorCatalog& catalog() const noexcept override { return catalog_; }
  [[nodiscard]] Result<CheckpointLease> acquire_lease(
      const TensorReadRequest& request) const override;
  [[nodiscard]] SourceDiagnostics diagnostics() const override;
  [[nodiscard]] std::string_view container() const noexcept override { return container_; }

  // Shard paths (or memory names) by shard index.
  [[nodiscard]] const std::vector<std::string>& shard_paths() const noexcept {
    return shard_paths_;
  }
  // Open shards, least recently used first.
  [[nodiscard]] std::vector<std::string> open_shard_paths() const {
    return cache_.open_shard_paths();
  }

 protected:
  // `locations[i]` is where catalog entry i lies. kInvalidArgument when the sizes disagree, a
  // location names a shard that does not exist, or max_open_shards is 0.
  [[nodiscard]] static Result<ShardedCheckpointSource> create_base(
      std::string container, TensorCatalog catalog, std::vector<TensorLocation> locations,
      std::vector<std::string> shard_paths, std::size_t max_open_shards, ShardCache::Opener opener);

 private:
  struct ReadCounters;
  ShardedCheckpointSource(std::string container, TensorCatalog catalog,
                          std::vector<TensorLocation> locations,
                          std::vector<std::string> shard_paths, ShardCache cache);

  std::string container_;
  TensorCatalog catalog_;
  std::vector<TensorLocation> locations_;
  std::vector<std::string> shard_paths_;
  ShardCache cache_;
  std::shared_ptr<ReadCounters> counters_;
};

}  // namespace eredu::checkpoint
