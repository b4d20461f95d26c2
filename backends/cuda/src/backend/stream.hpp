#pragma once
// CudaStream: what a CudaBackend and everything it allocates share -- the device ordinal, one
// non-blocking stream, the device's memory pool (cudaMallocAsync; freed memory stays in the pool
// for the next request of the process), a cache of pinned host buffers for the logits and the
// events that mark completions. Private to the backend: it names CUDA types.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "eredu/backends/cuda/cuda_types.hpp"
#include "eredu/core/result.hpp"
#include "forward_state.hpp"

namespace eredu::cuda {

class PinnedBuffer {
 public:
  PinnedBuffer(void* data, std::size_t size) noexcept : data_(data), size_(size) {}
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();
  [[nodiscard]] float* floats() const noexcept { return static_cast<float*>(data_); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

class StreamEvent {
 public:
  StreamEvent(cudaEvent_t event, int device) noexcept : event_(event), device_(device) {}
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  ~StreamEvent();
  [[nodiscard]] Result<bool> query() const;
  [[nodiscard]] Result<void> synchronize() const;

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = 0;
};

class CudaStream : public std::enable_shared_from_this<CudaStream> {
 public:
  // Makes `device` current, creates a non-blocking stream and raises the device pool's release
  // threshold so that freed blocks stay pooled.
  [[nodiscard]] static Result<std::shared_ptr<CudaStream>> create(int device, bool decode_graphs);
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  // Waits for the stream's work, then destroys it.
  ~CudaStream();

  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] cudaStream_t handle() const noexcept { return stream_; }
  // Makes the device current on the calling thread (a no-op when it is). Every entry point that
  // calls the runtime does this first.
  [[nodiscard]] Result<void> enter() const;

  // `bytes` of device memory (at least 1) from the pool, in stream order. Out of memory names the
  // request and the device's free bytes.
  [[nodiscard]] Result<DeviceBufferPtr> allocate(std::size_t bytes);
  // Pinned host memory of at least `bytes`, reused once no holder is left.
  [[nodiscard]] Result<PinnedBufferPtr> pinned(std::size_t bytes);
  // An event recorded now on the stream.
  [[nodiscard]] Result<StreamEventPtr> record();
  // Host -> device (pageable source: the runtime stages it before returning) and device -> host
  // (waits for the stream first) copies, and an asynchronous device -> device copy.
  [[nodiscard]] Result<void> upload(void* device, std::span<const std::byte> host);
  [[nodiscard]] Result<void> download(std::span<std::byte> host, const void* device);
  [[nodiscard]] Result<void> copy(void* device_dst, const void* device_src, std::size_t bytes);
  [[nodiscard]] Result<void> synchronize();

  // The stream's cuBLAS handle, created on first use (prefill products of F16 weights).
  [[nodiscard]] Result<cublasHandle_t> cublas();

  // Returns `data` to the pool in stream order (DeviceBuffer's destructor).
  void release(void* data) noexcept;

  // How the operators behave in the forward pass under way (forward_state.hpp).
  [[nodiscard]] ForwardState& forward() noexcept { return forward_; }
  // Whether decode steps run as CUDA graphs (EREDU_CUDA_GRAPHS=0 turns them off).
  [[nodiscard]] bool graphs_enabled() const noexcept { return graphs_enabled_; }
  [[nodiscard]] DecodeGraphStats& graph_stats() noexcept { return graph_stats_; }

 private:
  CudaStream(int device, cudaStream_t stream, bool graphs) noexcept
      : device_(device), stream_(stream), graphs_enabled_(graphs) {}
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  std::mutex pinned_mutex_;
  std::vector<PinnedBufferPtr> pinned_;
  ForwardState forward_;
  cublasHandle_t cublas_ = nullptr;
  bool graphs_enabled_ = true;
  DecodeGraphStats graph_stats_;
};

// The launch status after a kernel launch (cudaGetLastError), as an error naming `kernel`.
[[nodiscard]] Result<void> check_launch(const char* kernel);

}  // namespace eredu::cuda
