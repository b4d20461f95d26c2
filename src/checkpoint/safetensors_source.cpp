#include "eredu/checkpoint/safetensors_source.hpp"

#include <new>

namespace eredu::checkpoint {

Result<SafetensorsCheckpointSource> SafetensorsCheckpointSource::open(
    const std::filesystem::path& path, const SafetensorsSourceOptions& options) {
  if (options.max_open_shards == 0) {
    return fail(Error(ErrorCode::kInvalidArgument, "the open-shard limit must be at least 1")
                    .with_path(path.string()));
  }
  EREDU_TRY(SafetensorsModelFiles files, SafetensorsModelFiles::open(path, options.model));
  try {
    auto model = std::make_shared<const SafetensorsModelFiles>(std::move(files));
    std::vector<std::string> shard_paths;
    for (const SafetensorsShard& shard : model->shards())
      shard_paths.push_back(shard.path.string());
    std::vector<TensorMetadata> entries;
    std::vector<TensorLocation> locations;
    entries.reserve(model->tensors().size());
    locations.reserve(model->tensors().size());
    for (const SafetensorsModelTensor& t : model->tensors()) {
      entries.push_back(TensorMetadata{t.tensor.name, t.tensor.shape, t.tensor.dtype,
                                       t.tensor.byte_size, static_cast<std::uint32_t>(t.shard),
                                       shard_paths[t.shard]});
      locations.push_back(TensorLocation{t.shard, t.tensor.offset});
    }
    EREDU_TRY(TensorCatalog catalog, TensorCatalog::create(std::move(entries)));
    ShardCache::Opener opener =
        [model](std::size_t index) -> Result<std::shared_ptr<const MappedFile>> {
      // Maps the shard and binds the header parsed at open: refuses a file that changed.
      EREDU_TRY(SafetensorsFile file, model->open_shard(index));
      return file.file();
    };
    EREDU_TRY(ShardedCheckpointSource base,
              create_base("safetensors", std::move(catalog), std::move(locations),
                          std::move(shard_paths), options.max_open_shards, std::move(opener)));
    return SafetensorsCheckpointSource(std::move(base), std::move(model));
  } catch (const std::bad_alloc&) {
    return fail(Error(ErrorCode::kLimitExceeded, "out of memory building the SafeTensors catalog")
                    .with_path(path.string()));
  }
}

}  // namespace eredu::checkpoint
