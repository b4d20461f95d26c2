#pragma once
// CountingCheckpointSource: a decorator that counts every call made on a source and records the
// payload byte spans each lease covered, for tests that prove inspection and preflight read no
// payload, and that a lease reads only its own tensor's bytes. It forwards every call unchanged.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eredu/checkpoint/source.hpp"

namespace eredu::checkpoint {

struct CallCounts {
  std::uint64_t catalog_calls = 0;
  std::uint64_t keys_calls = 0;
  std::uint64_t metadata_calls = 0;
  std::uint64_t lease_requests = 0;  // acquire_lease calls, granted or not
  std::uint64_t leases_granted = 0;
  std::uint64_t payload_reads = 0;  // inner source's physical reads since this decorator was made
  std::uint64_t payload_bytes = 0;  // inner source's bytes read since then
};

// One granted lease: which tensor, and the bytes of its payload the inner source read for it.
struct LeaseRecord {
  std::string key;
  BoundedReadProof proof;
  std::uint64_t tensor_byte_length = 0;
};

class CountingCheckpointSource final : public CheckpointSource {
 public:
  explicit CountingCheckpointSource(std::shared_ptr<const CheckpointSource> inner);

  [[nodiscard]] const TensorCatalog& catalog() const noexcept override;
  [[nodiscard]] std::vector<std::string> keys() const override;
  [[nodiscard]] Result<const TensorMetadata*> metadata(std::string_view key) const override;
  [[nodiscard]] Result<CheckpointLease> acquire_lease(
      const TensorReadRequest& request) const override;
  [[nodiscard]] SourceDiagnostics diagnostics() const override { return inner_->diagnostics(); }
  [[nodiscard]] std::string_view container() const noexcept override { return inner_->container(); }

  // Counts so far; payload_reads/bytes are the inner diagnostics' deltas since construction.
  [[nodiscard]] CallCounts counts() const;
  [[nodiscard]] std::vector<LeaseRecord> leases() const;

 private:
  std::shared_ptr<const CheckpointSource> inner_;
  SourceDiagnostics baseline_;
  mutable std::atomic<std::uint64_t> catalog_calls_{0};
  mutable std::mutex mutex_;
  mutable CallCounts counts_;
  mutable std::vector<LeaseRecord> leases_;
};

}  // namespace eredu::checkpoint
