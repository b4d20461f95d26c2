#include "eredu/checkpoint/counting_source.hpp"

namespace eredu::checkpoint {

CountingCheckpointSource::CountingCheckpointSource(std::shared_ptr<const CheckpointSource> inner)
    : inner_(std::move(inner)), baseline_(inner_->diagnostics()) {}

const TensorCatalog& CountingCheckpointSource::catalog() const noexcept {
  catalog_calls_.fetch_add(1, std::memory_order_relaxed);
  return inner_->catalog();
}

std::vector<std::string> CountingCheckpointSource::keys() const {
  {
    std::lock_guard lock(mutex_);
    ++counts_.keys_calls;
  }
  return inner_->keys();
}

Result<const TensorMetadata*> CountingCheckpointSource::metadata(std::string_view key) const {
  {
    std::lock_guard lock(mutex_);
    ++counts_.metadata_calls;
  }
  return inner_->metadata(key);
}

Result<CheckpointLease> CountingCheckpointSource::acquire_lease(
    const TensorReadRequest& request) const {
  {
    std::lock_guard lock(mutex_);
    ++counts_.lease_requests;
  }
  auto lease = inner_->acquire_lease(request);
  if (lease) {
    std::lock_guard lock(mutex_);
    ++counts_.leases_granted;
    leases_.push_back(LeaseRecord{request.key, lease->proof(), lease->metadata().byte_length});
  }
  return lease;
}

CallCounts CountingCheckpointSource::counts() const {
  const SourceDiagnostics now = inner_->diagnostics();
  std::lock_guard lock(mutex_);
  CallCounts out = counts_;
  out.catalog_calls = catalog_calls_.load(std::memory_order_relaxed);
  out.payload_reads = now.physical_reads - baseline_.physical_reads;
  out.payload_bytes = now.bytes_read - baseline_.bytes_read;
  return out;
}

std::vector<LeaseRecord> CountingCheckpointSource::leases() const {
  std::lock_guard lock(mutex_);
  return leases_;
}

}  // namespace eredu::checkpoint
