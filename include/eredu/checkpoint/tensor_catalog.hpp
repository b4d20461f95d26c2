#pragma once
// Tensor metadata and the catalog of a checkpoint: names, shapes, encodings, byte lengths and the
// shard that holds each tensor. Metadata only — a catalog never refers to payload bytes, so
// anything that works from a catalog (inspection, recipe inference, planning) performs no payload
// I/O.
//
// Zero dimensions: a catalog accepts tensors with a zero dimension (both GGUF and SafeTensors can
// store them; their byte length is 0 and a lease on them is empty). Consumers that need data reject
// them themselves: DerivedWeightRecipe::infer refuses every zero-sized node.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {

struct TensorMetadata {
  std::string name;
  std::vector<std::uint64_t> shape;  // row-major, outermost first (a GGUF `ne` reversed)
  DType dtype = DType::kF32;
  std::uint64_t byte_length = 0;  // == checked_byte_size(dtype, shape)
  std::uint32_t shard_index = 0;  // which shard of the checkpoint holds the payload
  std::string shard_path;         // that shard's path (or a memory name), for messages

  [[nodiscard]] std::uint64_t element_count() const noexcept;  // valid once in a catalog
  friend bool operator==(const TensorMetadata&, const TensorMetadata&) = default;
};

class TensorCatalog {
 public:
  // An empty catalog.
  TensorCatalog() = default;

  // Builds a catalog, keeping the entries' order. Rejects (naming the tensor and its shard):
  // an empty name (kInvalidModel), a name seen twice (kDuplicate), a shape whose byte size
  // overflows (kOverflow) or whose innermost dimension is not whole blocks (kInvalidModel), a
  // byte_length different from checked_byte_size(dtype, shape) (kInvalidModel), and one shard
  // index given two different paths (kInvalidModel).
  [[nodiscard]] static Result<TensorCatalog> create(std::vector<TensorMetadata> entries);

  [[nodiscard]] std::span<const TensorMetadata> entries() const noexcept { return entries_; }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

  // The entry named `name`, or nullptr.
  [[nodiscard]] const TensorMetadata* find(std::string_view name) const noexcept;
  [[nodiscard]] bool contains(std::string_view name) const noexcept {
    return find(name) != nullptr;
  }
  // The entry named `name`, or kNotFound naming it.
  [[nodiscard]] Result<const TensorMetadata*> get(std::string_view name) const;
  // Names in catalog order.
  [[nodiscard]] std::vector<std::string> keys() const;
  // Sum of every entry's byte_length (overflow-checked at construction).
  [[nodiscard]] std::uint64_t total_bytes() const noexcept { return total_bytes_; }

 private:
  std::vector<TensorMetadata> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace eredu::checkpoint
