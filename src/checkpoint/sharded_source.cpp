#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "eredu/checkpoint/source.hpp"

namespace eredu::checkpoint {

struct ShardedCheckpointSource::ReadCounters {
  std::mutex mutex;
  std::uint64_t leases_granted = 0;
  std::uint64_t physical_reads = 0;
  std::uint64_t bytes_read = 0;
  std::vector<std::string> touched_shards;
};

ShardedCheckpointSource::ShardedCheckpointSource(std::string container, TensorCatalog catalog,
                                                 std::vector<TensorLocation> locations,
                                                 std::vector<std::string> shard_paths,
                                                 ShardCache cache)
    : container_(std::move(container)),
      catalog_(std::move(catalog)),
      locations_(std::move(locations)),
      shard_paths_(std::move(shard_paths)),
      cache_(std::move(cache)),
      counters_(std::make_shared<ReadCounters>()) {}

Result<ShardedCheckpointSource> ShardedCheckpointSource::create_base(
    std::string container, TensorCatalog catalog, std::vector<TensorLocation> locations,
    std::vector<std::string> shard_paths, std::size_t max_open_shards, ShardCache::Opener opener) {
  if (locations.size() != catalog.size()) {
    return fail(ErrorCode::kInternal, "source has " + std::to_string(locations.size()) +
                                          " tensor locations for " +
                                          std::to_string(catalog.size()) + " catalog entries");
  }
  for (std::size_t i = 0; i < locations.size(); ++i) {
    if (locations[i].shard_index >= shard_paths.size()) {
      return fail(Error(ErrorCode::kInvalidModel,
                        "tensor is located in shard " + std::to_string(locations[i].shard_index) +
                            " of a checkpoint with " + std::to_string(shard_paths.size()) +
                            " shards")
                      .with_subject(catalog.entries()[i].name));
    }
  }
  EREDU_TRY(ShardCache cache, ShardCache::create(shard_paths, max_open_shards, std::move(opener)));
  try {
    return ShardedCheckpointSource(std::move(container), std::move(catalog), std::move(locations),
                                   std::move(shard_paths), std::move(cache));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kLimitExceeded, "out of memory creating the checkpoint source");
  }
}

Result<CheckpointLease> ShardedCheckpointSource::acquire_lease(
    const TensorReadRequest& request) const {
  // Everything up to the pin is metadata: a bad request fails before any shard is opened.
  EREDU_TRY(const TensorMetadata* entry, catalog_.get(request.key));
  const std::size_t entry_index = static_cast<std::size_t>(entry - catalog_.entries().data());
  const TensorLocation location = locations_[entry_index];
  auto planned = plan_selection(entry->shape, entry->dtype, request.selection);
  if (!planned) {
    return fail(std::move(planned).error().with_subject(request.key).with_path(entry->shard_path));
  }
  SelectionLayout layout = std::move(planned).value();
  if (!layout.contiguous && request.policy == ReadPolicy::kRequireBounded) {
    return fail(Error(ErrorCode::kUnsupported,
                      "bounded selection unavailable: " + describe(request.selection) +
                          " of shape " + shape_to_string(entry->shape) +
                          " is not one contiguous byte span (use AllowFullTensorRead to gather it)")
                    .with_subject(request.key)
                    .with_path(entry->shard_path));
  }

  EREDU_TRY(ShardPin pin, cache_.pin(location.shard_index));
  const std::shared_ptr<const MappedFile>& file = pin.file();
  // The tensor must still lie inside its shard (the file may have changed since its header was
  // read); then the span read is the selection's inside it.
  auto tensor_bytes = file->slice(location.offset_bytes, entry->byte_length);
  if (!tensor_bytes) {
    return fail(Error(ErrorCode::kInvalidModel, "tensor payload no longer fits in its shard: " +
                                                    tensor_bytes.error().message())
                    .with_subject(request.key)
                    .with_path(entry->shard_path)
                    .with_offset(location.offset_bytes));
  }
  const std::span<const std::byte> span =
      tensor_bytes->subspan(static_cast<std::size_t>(layout.span_offset_bytes),
                            static_cast<std::size_t>(layout.span_length_bytes));

  CheckpointLease::Parts parts;
  try {
    parts.metadata = *entry;
    parts.selection = request.selection;
    parts.output_shape = std::move(layout.output_shape);
    parts.proof =
        BoundedReadProof{layout.contiguous, layout.span_offset_bytes, layout.span_length_bytes};
    if (layout.contiguous) {
      parts.bytes = span;
    } else {
      parts.owned.resize(static_cast<std::size_t>(layout.output_bytes));
      for (std::uint64_t chunk = 0; chunk < layout.chunk_count; ++chunk) {
        std::memcpy(parts.owned.data() + chunk * layout.chunk_bytes,
                    span.data() + chunk * layout.chunk_stride_bytes,
                    static_cast<std::size_t>(layout.chunk_bytes));
      }
    }
    {
      std::lock_guard lock(counters_->mutex);
      ++counters_->leases_granted;
      ++counters_->physical_reads;
      counters_->bytes_read += layout.span_length_bytes;
      auto& touched = counters_->touched_shards;
      const std::string& path = shard_paths_[location.shard_index];
      if (std::find(touched.begin(), touched.end(), path) == touched.end()) touched.push_back(path);
    }
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory gathering the selection")
                    .with_subject(request.key));
  }
  parts.mapping = file;
  parts.pin = std::move(pin);
  return CheckpointLease(std::move(parts));
}

SourceDiagnostics ShardedCheckpointSource::diagnostics() const {
  SourceDiagnostics out;
  out.container = container_;
  {
    std::lock_guard lock(counters_->mutex);
    out.leases_granted = counters_->leases_granted;
    out.physical_reads = counters_->physical_reads;
    out.bytes_read = counters_->bytes_read;
    out.touched_shards = counters_->touched_shards;
  }
  out.cache = cache_.stats();
  return out;
}

}  // namespace eredu::checkpoint
