#pragma once
// CheckpointLease: a move-only, bounded view of exactly one tensor's selected bytes.
//
// The bytes stay in their stored encoding (packed blocks stay packed). A lease keeps the shard's
// mapping alive and pins the shard in its source's cache until it is destroyed, so the cache cannot
// evict a shard whose bytes are still in use. Its BoundedReadProof records which bytes of the
// tensor's payload were physically read to produce it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/checkpoint/mapped_file.hpp"
#include "eredu/checkpoint/selection.hpp"
#include "eredu/checkpoint/shard_cache.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"

namespace eredu::checkpoint {

// Which bytes of the tensor's payload were read, relative to the payload's start. When
// physically_bounded is true, exactly [offset_bytes, offset_bytes + length_bytes) was read and it
// is exactly the selection; otherwise the selection was gathered from that (larger) span.
struct BoundedReadProof {
  bool physically_bounded = true;
  std::uint64_t offset_bytes = 0;
  std::uint64_t length_bytes = 0;
  friend bool operator==(const BoundedReadProof&, const BoundedReadProof&) = default;
};

class CheckpointLease {
 public:
  // What a source hands over to build a lease. `bytes` must point into `mapping` (borrowed view)
  // or into `owned` (gathered copy; then `bytes` may be left empty and is set to `owned`).
  struct Parts {
    TensorMetadata metadata;
    TensorSelection selection;
    std::vector<std::uint64_t> output_shape;
    std::span<const std::byte> bytes;
    BoundedReadProof proof;
    std::shared_ptr<const MappedFile> mapping;
    ShardPin pin;
    std::vector<std::byte> owned;
  };

  explicit CheckpointLease(Parts parts) noexcept;
  CheckpointLease(CheckpointLease&&) noexcept = default;
  CheckpointLease& operator=(CheckpointLease&&) noexcept = default;
  CheckpointLease(const CheckpointLease&) = delete;
  CheckpointLease& operator=(const CheckpointLease&) = delete;
  ~CheckpointLease() = default;

  // The whole tensor's metadata (not the selection's).
  [[nodiscard]] const TensorMetadata& metadata() const noexcept { return metadata_; }
  [[nodiscard]] const std::string& name() const noexcept { return metadata_.name; }
  [[nodiscard]] DType dtype() const noexcept { return metadata_.dtype; }
  [[nodiscard]] const TensorSelection& selection() const noexcept { return selection_; }
  // Shape of the selected elements (row-major, outermost first).
  [[nodiscard]] std::span<const std::uint64_t> output_shape() const noexcept {
    return output_shape_;
  }
  // The selected bytes in their stored encoding: exactly checked_byte_size(dtype, output_shape).
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] const BoundedReadProof& proof() const noexcept { return proof_; }
  // The shard the bytes came from.
  [[nodiscard]] const std::string& backing_path() const noexcept { return metadata_.shard_path; }
  // False after the lease was moved from.
  [[nodiscard]] bool holds_pin() const noexcept { return pin_.valid(); }
  // The mapping bytes() borrow from, for a backend that reads the weights in place: holding it
  // keeps those bytes valid after the lease (and its pin) are gone. Null when the bytes are a
  // gathered copy the lease owns.
  [[nodiscard]] std::shared_ptr<const MappedFile> borrowed_mapping() const noexcept {
    return owned_.empty() ? mapping_ : nullptr;
  }

 private:
  TensorMetadata metadata_;
  TensorSelection selection_;
  std::vector<std::uint64_t> output_shape_;
  std::span<const std::byte> bytes_;
  BoundedReadProof proof_;
  std::shared_ptr<const MappedFile> mapping_;
  std::vector<std::byte> owned_;
  // Declared last so the pin is released first, after nothing else refers to the shard.
  ShardPin pin_;
};

}  // namespace eredu::checkpoint
