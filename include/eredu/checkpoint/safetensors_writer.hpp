#pragma once
// A deterministic SafeTensors writer, for fixtures and for tools that emit checkpoints.
//
// Output: the 8-byte little-endian header length N, the compact JSON header, then the tensor data
// in one contiguous buffer. Header keys are in bytewise order ("__metadata__" included; fields of
// an entry as "data_offsets", "dtype", "shape"), the data buffer holds the tensors in bytewise
// name order, and the header is padded with spaces (0x20) so that
// 8 + N is a multiple of `header_alignment` (8 by default, as the reference writer does). The
// same input therefore always gives byte-identical output.
//
// Tests build malformed files from raw_safetensors_bytes (any header text, any declared length)
// and from header_json() of a valid writer, mutated.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

struct SafetensorsWriteOptions {
  // 8 + N is padded with spaces to a multiple of this; 0 or 1 means no padding.
  std::uint32_t header_alignment = 8;
};

class SafetensorsWriter {
 public:
  // Adds a tensor. Fails with kInvalidArgument when `dtype` has no SafeTensors name, when
  // data.size() differs from checked_byte_size(dtype, shape), or when the name is empty or
  // "__metadata__"; kDuplicate when the name was added before. The bytes are copied.
  Result<void> add(std::string name, DType dtype, std::vector<std::uint64_t> shape,
                   std::span<const std::byte> data);
  // Adds a typed tensor whose elements are stored in host (little-endian) order.
  template <typename T>
  Result<void> add_values(std::string name, DType dtype, std::vector<std::uint64_t> shape,
                          std::span<const T> values) {
    return add(std::move(name), dtype, std::move(shape), std::as_bytes(values));
  }
  // Sets a "__metadata__" entry (replacing an earlier value for `key`).
  void set_metadata(std::string key, std::string value);

  [[nodiscard]] std::size_t tensor_count() const noexcept { return tensors_.size(); }
  [[nodiscard]] std::vector<std::string> tensor_names() const;  // in bytewise order
  [[nodiscard]] std::uint64_t payload_bytes() const noexcept;

  // The JSON header text, padded. Fails (kInvalidArgument) when a name, key or value is not
  // valid UTF-8.
  [[nodiscard]] Result<std::string> header_json(const SafetensorsWriteOptions& options = {}) const;
  // The whole file.
  [[nodiscard]] Result<std::vector<std::byte>> serialize(
      const SafetensorsWriteOptions& options = {}) const;
  // Writes the whole file to `path` (kIo naming it on failure).
  [[nodiscard]] Result<void> write_file(const std::filesystem::path& path,
                                        const SafetensorsWriteOptions& options = {}) const;

 private:
  struct Pending {
    DType dtype;
    std::vector<std::uint64_t> shape;
    std::vector<std::byte> data;
  };
  std::map<std::string, Pending> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A file made of an 8-byte length, `header_text` verbatim and `payload`: for malformed fixtures.
// The length field holds `declared_length` when given, else header_text.size().
[[nodiscard]] std::vector<std::byte> raw_safetensors_bytes(
    std::string_view header_text, std::span<const std::byte> payload = {},
    std::optional<std::uint64_t> declared_length = std::nullopt);

// Writes `bytes` to `path`, replacing it (kIo naming the path on failure).
[[nodiscard]] Result<void> write_safetensors_bytes(const std::filesystem::path& path,
                                                   std::span<const std::byte> bytes);

// The text of a model.safetensors.index.json: {"metadata": {"total_size": ...}, "weight_map":
// {tensor name: shard file}} with keys in bytewise order (metadata omitted without total_size).
[[nodiscard]] Result<std::string> safetensors_index_json(
    const std::map<std::string, std::string>& weight_map,
    std::optional<std::uint64_t> total_size = std::nullopt);

// One shard of a model directory to write.
struct SafetensorsShardSpec {
  std::string file_name;  // relative to the directory, e.g. "model-00001-of-00002.safetensors"
  SafetensorsWriter writer;
};

// Writes a sharded model directory: creates `directory` if needed, writes every shard and a
// model.safetensors.index.json mapping each tensor to its shard, with total_size the sum of the
// payload bytes. Fails with kDuplicate when a tensor name is in two shards.
[[nodiscard]] Result<void> write_sharded_safetensors(
    const std::filesystem::path& directory, const std::vector<SafetensorsShardSpec>& shards,
    const SafetensorsWriteOptions& options = {});

}  // namespace eredu::checkpoint
