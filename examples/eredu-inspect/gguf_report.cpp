// The GGUF half of eredu-inspect: a single file or a whole split set, found from any shard.

#include <string>

#include "eredu/checkpoint/gguf_split.hpp"
#include "inspect.hpp"

namespace eredu::inspect {

Result<Report> inspect_gguf(const std::filesystem::path& path) {
  // Headers only: inspection never reads tensor payload, so no mapping is kept.
  EREDU_TRY(const checkpoint::GgufShardSet set,
            checkpoint::GgufShardSet::open(path, {}, {.keep_mappings = false}));

  Report report;
  ContainerSummary& container = report.container;
  container.format = Format::kGguf;
  container.path = path.string();
  const checkpoint::GgufContents& primary = set.primary();
  container.gguf_version = primary.header().version;
  container.alignment = primary.header().alignment;
  for (const checkpoint::GgufShard& shard : set.shards()) {
    const checkpoint::GgufHeaderInfo& header = shard.contents->header();
    container.shards.push_back(ShardSummary{.path = shard.path.string(),
                                            .file_size = header.file_size,
                                            .data_offset = header.data_section_offset,
                                            .header_bytes = 0,
                                            .tensor_count = header.tensor_count});
  }

  // The model's metadata lives in the first shard; the others repeat only the split keys.
  report.metadata.reserve(primary.metadata().size());
  for (const checkpoint::GgufMetadataEntry& entry : primary.metadata()) {
    report.metadata.push_back(MetadataItem{entry.key, entry.value});
  }

  report.tensors.reserve(set.tensors().size());
  for (const checkpoint::GgufShardTensor& tensor : set.tensors()) {
    const checkpoint::GgufTensorInfo& info = *tensor.info;
    report.tensors.push_back(TensorRow{.name = info.name,
                                       .encoding = std::string(to_string(info.dtype)),
                                       .shape = info.shape,
                                       .elements = info.element_count,
                                       .bytes = info.byte_size,
                                       .offset = info.data_offset,
                                       .shard = tensor.shard});
  }
  EREDU_TRY_VOID(finish_report(report));
  return report;
}

}  // namespace eredu::inspect
