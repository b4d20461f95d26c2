#pragma once
// MemoryCheckpointSource: a checkpoint whose tensors live in memory, for tests and tools. Tensors
// are grouped into named in-memory shards (by shard index) so the bounded shard cache, pins and
// diagnostics behave exactly as for files.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eredu/checkpoint/source.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

struct MemoryTensor {
  std::string name;
  std::vector<std::uint64_t> shape;  // row-major, outermost first
  DType dtype = DType::kF32;
  std::vector<std::byte> bytes;   // stored encoding; size must equal checked_byte_size
  std::uint32_t shard_index = 0;  // tensors with the same index share one in-memory shard
};

struct MemorySourceOptions {
  std::size_t max_open_shards = kDefaultMaxOpenShards;
};

class MemoryCheckpointSource final : public ShardedCheckpointSource {
 public:
  // Lays each shard's tensors out back to back in index order (shard i is named "memory:shard-i";
  // shard indices must be 0..N-1 without gaps). Errors: the catalog's (empty, duplicate name,
  // inconsistent size), kInvalidModel when a tensor's bytes differ from its byte size,
  // kInvalidArgument for a shard-index gap or a zero shard limit.
  [[nodiscard]] static Result<MemoryCheckpointSource> create(std::vector<MemoryTensor> tensors,
                                                             MemorySourceOptions options = {});

  // Where tensor `name` lies in its shard (for tests that check a lease's bytes independently).
  [[nodiscard]] Result<TensorLocation> location(std::string_view name) const;
  // The bytes of in-memory shard `index` (what a lease's span must lie within).
  [[nodiscard]] std::span<const std::byte> shard_bytes(std::size_t index) const;

 private:
  MemoryCheckpointSource(ShardedCheckpointSource base,
                         std::vector<std::shared_ptr<const MappedFile>> shards,
                         std::vector<TensorLocation> locations);
  std::vector<std::shared_ptr<const MappedFile>> shards_;
  std::vector<TensorLocation> locations_;
};

}  // namespace eredu::checkpoint
