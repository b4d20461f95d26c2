// The SafeTensors half of eredu-inspect: one .safetensors file, an index file, or a model
// directory (index.json shards or model.safetensors).

#include <map>
#include <string>

#include "eredu/checkpoint/safetensors_model.hpp"
#include "inspect.hpp"

namespace eredu::inspect {

Result<Report> inspect_safetensors(const std::filesystem::path& path) {
  // Headers only (SafetensorsModelFiles::open never maps a shard).
  EREDU_TRY(const checkpoint::SafetensorsModelFiles model,
            checkpoint::SafetensorsModelFiles::open(path));

  Report report;
  ContainerSummary& container = report.container;
  container.format = Format::kSafetensors;
  container.path = path.string();
  if (model.index()) {
    container.index_file = (model.directory() / checkpoint::kSafetensorsIndexFileName).string();
    container.index_total_size = model.index()->total_size;
  }
  std::vector<std::uint64_t> tensors_per_shard(model.shards().size(), 0);
  for (const checkpoint::SafetensorsModelTensor& tensor : model.tensors()) {
    ++tensors_per_shard[tensor.shard];
  }
  for (std::size_t i = 0; i < model.shards().size(); ++i) {
    const checkpoint::SafetensorsShard& shard = model.shards()[i];
    container.shards.push_back(ShardSummary{.path = shard.path.string(),
                                            .file_size = shard.header.file_size(),
                                            .data_offset = shard.header.data_start(),
                                            .header_bytes = shard.header.header_length(),
                                            .tensor_count = tensors_per_shard[i]});
  }

  // "__metadata__" of every shard. Shards usually repeat the same entries; an entry is shown once,
  // and a key whose value differs between shards is shown again as "key@<shard file>".
  std::map<std::string, std::string> seen;
  for (const checkpoint::SafetensorsShard& shard : model.shards()) {
    for (const auto& [key, value] : shard.header.metadata()) {
      const auto it = seen.find(key);
      if (it == seen.end()) {
        seen.emplace(key, value);
        report.metadata.push_back(MetadataItem{key, checkpoint::GgufValue(value)});
      } else if (it->second != value) {
        report.metadata.push_back(
            MetadataItem{key + "@" + shard.file_name, checkpoint::GgufValue(value)});
      }
    }
  }

  report.tensors.reserve(model.tensors().size());
  for (const checkpoint::SafetensorsModelTensor& entry : model.tensors()) {
    const checkpoint::SafetensorsTensor& tensor = entry.tensor;
    report.tensors.push_back(TensorRow{.name = tensor.name,
                                       .encoding = std::string(to_string(tensor.dtype)),
                                       .shape = tensor.shape,
                                       .elements = tensor.element_count(),
                                       .bytes = tensor.byte_size,
                                       .offset = tensor.offset,
                                       .shard = static_cast<std::uint32_t>(entry.shard)});
  }
  EREDU_TRY_VOID(finish_report(report));
  return report;
}

}  // namespace eredu::inspect
