#include "eredu/checkpoint/gguf_source.hpp"

#include <new>

namespace eredu::checkpoint {

Result<GgufCheckpointSource> GgufCheckpointSource::open(const std::filesystem::path& any_shard,
                                                        const GgufSourceOptions& options) {
  if (options.max_open_shards == 0) {
    return fail(Error(ErrorCode::kInvalidArgument, "the open-shard limit must be at least 1")
                    .with_path(any_shard.string()));
  }
  // Parse every shard's header, then drop the mappings: payload is mapped on demand.
  EREDU_TRY(GgufShardSet parsed,
            GgufShardSet::open(any_shard, options.limits, GgufShardSetOptions{false}));
  try {
    auto set = std::make_shared<const GgufShardSet>(std::move(parsed));
    std::vector<std::string> shard_paths;
    std::vector<std::shared_ptr<const GgufContents>> contents;
    for (const GgufShard& shard : set->shards()) {
      shard_paths.push_back(shard.path.string());
      contents.push_back(shard.contents);
    }
    std::vector<TensorMetadata> entries;
    std::vector<TensorLocation> locations;
    entries.reserve(set->tensors().size());
    locations.reserve(set->tensors().size());
    for (const GgufShardTensor& tensor : set->tensors()) {
      const GgufTensorInfo& info = *tensor.info;
      entries.push_back(TensorMetadata{info.name, info.shape, info.dtype, info.byte_size,
                                       tensor.shard, shard_paths[tensor.shard]});
      locations.push_back(TensorLocation{tensor.shard, info.data_offset});
    }
    EREDU_TRY(TensorCatalog catalog, TensorCatalog::create(std::move(entries)));
    std::vector<std::filesystem::path> paths;
    for (const GgufShard& shard : set->shards())
      paths.push_back(shard.path);
    ShardCache::Opener opener =
        [paths, contents](std::size_t index) -> Result<std::shared_ptr<const MappedFile>> {
      EREDU_TRY(std::shared_ptr<const MappedFile> file, MappedFile::open(paths[index]));
      // Re-join the mapping with the header parsed at open: refuses a file that changed size.
      EREDU_TRY(GgufFile attached, GgufFile::attach(contents[index], file));
      return attached.mapped_file();
    };
    EREDU_TRY(ShardedCheckpointSource base,
              create_base("gguf", std::move(catalog), std::move(locations), std::move(shard_paths),
                          options.max_open_shards, std::move(opener)));
    return GgufCheckpointSource(std::move(base), std::move(set));
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory building the GGUF catalog")
                    .with_path(any_shard.string()));
  }
}

}  // namespace eredu::checkpoint
