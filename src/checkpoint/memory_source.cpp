#include "eredu/checkpoint/memory_source.hpp"

#include <algorithm>
#include <new>

namespace eredu::checkpoint {

MemoryCheckpointSource::MemoryCheckpointSource(
    ShardedCheckpointSource base, std::vector<std::shared_ptr<const MappedFile>> shards,
    std::vector<TensorLocation> locations)
    : ShardedCheckpointSource(std::move(base)),
      shards_(std::move(shards)),
      locations_(std::move(locations)) {}

Result<MemoryCheckpointSource> MemoryCheckpointSource::create(std::vector<MemoryTensor> tensors,
                                                              MemorySourceOptions options) {
  try {
    std::size_t shard_count = 0;
    for (const MemoryTensor& t : tensors) {
      shard_count = std::max<std::size_t>(shard_count, std::size_t{t.shard_index} + 1);
    }
    std::vector<std::string> shard_paths;
    for (std::size_t i = 0; i < shard_count; ++i) {
      shard_paths.push_back("memory:shard-" + std::to_string(i));
    }
    std::vector<bool> used(shard_count, false);
    std::vector<std::uint64_t> shard_sizes(shard_count, 0);
    std::vector<TensorMetadata> entries;
    std::vector<TensorLocation> locations;
    for (const MemoryTensor& t : tensors) {
      used[t.shard_index] = true;
      entries.push_back(TensorMetadata{t.name, t.shape, t.dtype, t.bytes.size(), t.shard_index,
                                       shard_paths[t.shard_index]});
      locations.push_back(TensorLocation{t.shard_index, shard_sizes[t.shard_index]});
      shard_sizes[t.shard_index] += t.bytes.size();
    }
    for (std::size_t i = 0; i < shard_count; ++i) {
      if (!used[i]) {
        return fail(ErrorCode::kInvalidArgument,
                    "in-memory shard " + std::to_string(i) + " holds no tensor (shard indices " +
                        "must be 0.." + std::to_string(shard_count - 1) + " without gaps)");
      }
    }
    // The catalog checks names and that each tensor's byte count matches its shape.
    EREDU_TRY(TensorCatalog catalog, TensorCatalog::create(std::move(entries)));

    std::vector<std::shared_ptr<const MappedFile>> shards;
    for (std::size_t i = 0; i < shard_count; ++i) {
      std::vector<std::byte> buffer;
      buffer.reserve(static_cast<std::size_t>(shard_sizes[i]));
      for (const MemoryTensor& t : tensors) {
        if (t.shard_index == i) buffer.insert(buffer.end(), t.bytes.begin(), t.bytes.end());
      }
      shards.push_back(MappedFile::from_bytes(buffer, shard_paths[i]));
    }
    // The opener hands out the already resident buffers; opening counts as a cache miss all the
    // same, so cache behaviour is observable exactly as for files.
    ShardCache::Opener opener =
        [shards](std::size_t index) -> Result<std::shared_ptr<const MappedFile>> {
      return shards[index];
    };
    EREDU_TRY(ShardedCheckpointSource base,
              create_base("memory", std::move(catalog), locations, std::move(shard_paths),
                          options.max_open_shards, std::move(opener)));
    return MemoryCheckpointSource(std::move(base), std::move(shards), std::move(locations));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory building the in-memory checkpoint");
  }
}

Result<TensorLocation> MemoryCheckpointSource::location(std::string_view name) const {
  EREDU_TRY(const TensorMetadata* entry, catalog().get(name));
  return locations_[static_cast<std::size_t>(entry - catalog().entries().data())];
}

std::span<const std::byte> MemoryCheckpointSource::shard_bytes(std::size_t index) const {
  return index < shards_.size() ? shards_[index]->bytes() : std::span<const std::byte>{};
}

}  // namespace eredu::checkpoint
