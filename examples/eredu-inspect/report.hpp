#pragma once
// What eredu-inspect learned about one checkpoint, independent of its container format: the text
// and JSON printers read only this. Built by inspect_path() (inspect.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eredu/checkpoint/gguf_value.hpp"
#include "eredu/core/result.hpp"

namespace eredu::inspect {

enum class Format { kGguf, kSafetensors };

// One file of the checkpoint (a GGUF shard, a SafeTensors shard, or the only file).
struct ShardSummary {
  std::string path;
  std::uint64_t file_size = 0;
  std::uint64_t data_offset = 0;   // absolute start of the tensor data section
  std::uint64_t header_bytes = 0;  // SafeTensors: N, the JSON header length; GGUF: 0
  std::uint64_t tensor_count = 0;
};

struct ContainerSummary {
  Format format = Format::kGguf;
  std::string path;  // as the user named it
  // GGUF (of the first shard; every shard is checked by the reader).
  std::uint32_t gguf_version = 0;
  std::uint64_t alignment = 0;
  // SafeTensors model directories: the index file, and its metadata.total_size when present.
  std::optional<std::string> index_file;
  std::optional<std::uint64_t> index_total_size;
  std::vector<ShardSummary> shards;
};

// One metadata entry. SafeTensors "__metadata__" values are strings.
struct MetadataItem {
  std::string key;
  checkpoint::GgufValue value;
};

struct TensorRow {
  std::string name;
  std::string encoding;              // DType name: "F32", "Q4_K", "BF16", ...
  std::vector<std::uint64_t> shape;  // row-major, outermost first
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;  // absolute offset of the first byte within its shard
  std::uint32_t shard = 0;   // index into ContainerSummary::shards
};

struct EncodingTotal {
  std::string encoding;
  std::uint64_t tensors = 0;
  std::uint64_t bytes = 0;
  double share = 0.0;  // fraction of all tensor bytes, 0..1
};

struct Verdict {
  std::uint64_t tensor_count = 0;
  std::uint64_t tensor_bytes = 0;
  std::string summary;                // "valid: 27 tensors, 1.1 MiB of tensor data, ..."
  std::vector<std::string> warnings;  // what the readers logged while accepting the input
};

struct Report {
  ContainerSummary container;
  std::vector<MetadataItem> metadata;  // file order (GGUF) or key order (SafeTensors)
  std::vector<TensorRow> tensors;      // shard order, then file order
  std::vector<EncodingTotal> totals;   // by bytes, largest first
  Verdict verdict;
};

// Fills totals and verdict from the tensors, after checking once more, independently of the
// readers, that every tensor's byte range lies inside its shard's data section (kInvalidModel
// naming the tensor and offset otherwise).
[[nodiscard]] Result<void> finish_report(Report& report);

}  // namespace eredu::inspect
