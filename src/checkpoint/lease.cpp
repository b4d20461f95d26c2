#include "eredu/checkpoint/lease.hpp"

namespace eredu::checkpoint {

CheckpointLease::CheckpointLease(Parts parts) noexcept
    : metadata_(std::move(parts.metadata)),
      selection_(std::move(parts.selection)),
      output_shape_(std::move(parts.output_shape)),
      bytes_(parts.bytes),
      proof_(parts.proof),
      mapping_(std::move(parts.mapping)),
      owned_(std::move(parts.owned)),
      pin_(std::move(parts.pin)) {
  // A gathered copy is the lease's own buffer (a moved vector keeps its storage).
  if (!owned_.empty()) bytes_ = owned_;
}

}  // namespace eredu::checkpoint
