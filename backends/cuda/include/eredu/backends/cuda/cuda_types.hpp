#pragma once
// Value types of CudaBackend: activations, weights, the KV cache, completions and options. No CUDA
// header or type appears here: device memory is a `DeviceBuffer` (a pointer and a size whose
// release the backend's sources implement), a completion is an opaque event state.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eredu/core/dtype.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/neural_specs.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cuda {

using KvCacheType = ::eredu::KvCacheType;

class CudaStream;  // the backend's device, stream and memory pool (src/backend/stream.hpp)

// Device memory from the stream's cudaMallocAsync pool, returned to it (cudaFreeAsync, ordered
// after every kernel already enqueued on that stream) when the last holder lets go. Holding a
// buffer keeps its stream alive.
class DeviceBuffer {
 public:
  DeviceBuffer(std::shared_ptr<CudaStream> stream, void* data, std::size_t size) noexcept
      : stream_(std::move(stream)), data_(data), size_(size) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::shared_ptr<CudaStream> stream_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};
using DeviceBufferPtr = std::shared_ptr<DeviceBuffer>;

// Page-locked host memory (cudaMallocHost), the destination of a session's logits: only a copy
// into pinned memory is asynchronous.
class PinnedBuffer;
using PinnedBufferPtr = std::shared_ptr<PinnedBuffer>;

// A point in the backend's stream (a CUDA event recorded after some work): exact completion of
// everything enqueued before it.
class StreamEvent;
using StreamEventPtr = std::shared_ptr<StreamEvent>;

// An activation: a row-major [rows, cols] F32 matrix in device memory. Valid in stream order: a
// later kernel on the backend's stream sees it; the host reads it through read() or, for session
// outputs, `host` once `ready` has completed.
struct CudaTensor {
  std::size_t rows = 0;
  std::size_t cols = 0;
  DeviceBufferPtr buffer;
  PinnedBufferPtr host;  // session outputs: the logits, copied by the same forward pass
  StreamEventPtr ready;  // session outputs: recorded after that copy
  // Its q8_1 blocks, made by the first product with quantized weights and reused by the next
  // ones that read the same activation (Q, K and V; gate and up). Shared by the tensor's copies;
  // tensors are never written after their kernel, so the blocks stay valid.
  std::shared_ptr<DeviceBufferPtr> quantized;

  [[nodiscard]] float* data() const noexcept {
    return buffer == nullptr ? nullptr : static_cast<float*>(buffer->data());
  }
};

// A weight in device memory, packed blocks exactly as the checkpoint stores them (vectors -- norm
// gains, biases -- are held as F32). Also the parameter slot: an unbound slot has its expected
// `shape`, a `name` and no buffer.
struct CudaWeight {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::uint64_t> shape;  // row-major, outermost first: [rows, cols] or [n]
  DeviceBufferPtr buffer;
  std::size_t bytes = 0;  // packed size
  // Vectors only: their F32 values on the host too (the rotary frequency factors are read there).
  std::shared_ptr<const std::vector<float>> host_values;

  [[nodiscard]] bool bound() const noexcept { return buffer != nullptr; }
  [[nodiscard]] std::size_t rows() const noexcept {
    return shape.size() == 2 ? static_cast<std::size_t>(shape[0]) : 1;
  }
  [[nodiscard]] std::size_t cols() const noexcept {
    return shape.empty() ? 0 : static_cast<std::size_t>(shape.back());
  }
  [[nodiscard]] const std::uint8_t* blocks() const noexcept {
    return buffer == nullptr ? nullptr : static_cast<const std::uint8_t*>(buffer->data());
  }
};

// A session's decode step captured as a CUDA graph (src/backend/decode_graph.hpp).
class DecodeGraph;

// One session's KV cache in device memory: per layer one K and one V buffer of
// [capacity][kv_heads][head_dim] elements (F16 or F32), position-major like the CPU backend's.
// One length for all layers; rows past it are overwritten by later writes.
struct CudaKvCacheStorage {
  std::vector<DeviceBufferPtr> keys;
  std::vector<DeviceBufferPtr> values;
  DType dtype = DType::kF16;
  std::size_t length = 0;
  // The session's captured decode step, replayed while the pass's signature holds; a capture
  // that failed once is not retried for this cache (eager passes then).
  std::shared_ptr<DecodeGraph> graph;
  bool graph_failed = false;
};

struct CudaKvCache {
  KvCacheSpec spec;
  std::shared_ptr<CudaKvCacheStorage> storage;
};

// The completion of work enqueued on the backend's stream: waits for its own event only.
// Move-only (one owner waits). A default one is complete.
class CudaCompletion {
 public:
  using error_type = Error;
  CudaCompletion() = default;
  explicit CudaCompletion(StreamEventPtr event) : event_(std::move(event)) {}
  CudaCompletion(CudaCompletion&&) noexcept = default;
  CudaCompletion& operator=(CudaCompletion&&) noexcept = default;
  CudaCompletion(const CudaCompletion&) = delete;
  CudaCompletion& operator=(const CudaCompletion&) = delete;
  // cudaEventQuery: a failure of the work (or the device) is its error.
  [[nodiscard]] Result<bool> is_complete();
  // cudaEventSynchronize.
  [[nodiscard]] Result<void> wait();

 private:
  StreamEventPtr event_;
};

// Text generation samples on the host after the logits arrived, so its token is born complete.
class CudaReadyCompletion {
 public:
  using error_type = Error;
  CudaReadyCompletion() = default;
  CudaReadyCompletion(CudaReadyCompletion&&) noexcept = default;
  CudaReadyCompletion& operator=(CudaReadyCompletion&&) noexcept = default;
  CudaReadyCompletion(const CudaReadyCompletion&) = delete;
  CudaReadyCompletion& operator=(const CudaReadyCompletion&) = delete;
  [[nodiscard]] Result<bool> is_complete() { return true; }
  [[nodiscard]] Result<void> wait() { return ok(); }
};

// Which device a backend instance runs on.
struct CudaBackendOptions {
  // Empty: device 0; all digits: that index; otherwise the first device whose name contains it.
  std::string device;
  // Decode steps as captured CUDA graphs (cuda_backend.hpp); the environment variable
  // EREDU_CUDA_GRAPHS=0 turns them off whatever this says.
  bool decode_graphs = true;
};

// How often decode steps were captured into a graph and replayed (tests, benchmarks).
struct DecodeGraphStats {
  std::uint64_t captures = 0;
  std::uint64_t replays = 0;
  std::uint64_t failed_captures = 0;
};

}  // namespace eredu::cuda
