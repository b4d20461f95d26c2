// CudaStream, DeviceBuffer, PinnedBuffer, StreamEvent and CudaCompletion: the backend's device
// memory, its stream and its completions, every CUDA failure translated (cuda_error.hpp).
#include "stream.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

#include "../cublas_error.hpp"
#include "../cuda_error.hpp"

namespace eredu::cuda {
namespace {

std::optional<std::uint64_t> free_device_bytes() {
  std::size_t free = 0;
  std::size_t total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return free;
}

}  // namespace

Result<void> check_launch(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return fail(cuda_error(std::string(kernel) + " kernel launch", error));
  return ok();
}

Result<std::shared_ptr<CudaStream>> CudaStream::create(int device, bool decode_graphs) {
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    return fail(cuda_error("cudaSetDevice(" + std::to_string(device) + ")", e));
  }
  cudaMemPool_t pool = nullptr;
  if (cudaError_t e = cudaDeviceGetDefaultMemPool(&pool, device); e != cudaSuccess) {
    return fail(cuda_error("cudaDeviceGetDefaultMemPool", e));
  }
  // Keep up to 512 MiB of freed blocks in the pool instead of returning them to the driver at
  // every synchronization: a steady decode (a few MiB of activations) then asks the driver for
  // nothing, while the gigabytes a long prompt's pass used go back to the driver, where CUDA
  // graphs (their own pool) and cuBLAS (cudaMalloc) can have them. The setting is the device's
  // (the default pool is process-wide).
  std::uint64_t threshold = std::uint64_t{512} << 20;
  if (cudaError_t e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
      e != cudaSuccess) {
    return fail(cuda_error("cudaMemPoolSetAttribute(release threshold)", e));
  }
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
    return fail(cuda_error("cudaStreamCreateWithFlags", e));
  }
  try {
    const char* graphs = std::getenv("EREDU_CUDA_GRAPHS");
    const bool use_graphs = decode_graphs && (graphs == nullptr || std::string_view(graphs) != "0");
    return std::shared_ptr<CudaStream>(new CudaStream(device, stream, use_graphs));
  } catch (const std::bad_alloc&) {
    (void)cudaStreamDestroy(stream);
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for a stream");
  }
}

CudaStream::~CudaStream() {
  (void)cudaSetDevice(device_);
  (void)cudaStreamSynchronize(stream_);
  if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
  (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();  // nothing to report from a destructor; do not leak it to the next call
}

Result<void> CudaStream::enter() const {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == device_) return ok();
  if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) {
    return fail(cuda_error("cudaSetDevice(" + std::to_string(device_) + ")", e));
  }
  return ok();
}

Result<cublasHandle_t> CudaStream::cublas() {
  if (cublas_ != nullptr) return cublas_;
  EREDU_TRY_VOID(enter());
  cublasHandle_t handle = nullptr;
  if (cublasStatus_t s = cublasCreate(&handle); s != CUBLAS_STATUS_SUCCESS) {
    return fail(cublas_error("cublasCreate", s));
  }
  if (cublasStatus_t s = cublasSetStream(handle, stream_); s != CUBLAS_STATUS_SUCCESS) {
    (void)cublasDestroy(handle);
    return fail(cublas_error("cublasSetStream", s));
  }
  cublas_ = handle;
  return cublas_;
}

Result<DeviceBufferPtr> CudaStream::allocate(std::size_t bytes) {
  EREDU_TRY_VOID(enter());
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  void* data = nullptr;
  if (cudaError_t e = cudaMallocAsync(&data, size, stream_); e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(cuda_allocation_error("cudaMallocAsync", e, size, free_device_bytes()));
  }
  try {
    return std::make_shared<DeviceBuffer>(shared_from_this(), data, size);
  } catch (const std::bad_alloc&) {
    (void)cudaFreeAsync(data, stream_);
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for a buffer handle");
  }
}

void CudaStream::release(void* data) noexcept {
  if (data == nullptr) return;
  if (!enter()) return;  // the device is gone; nothing to free it on
  if (cudaFreeAsync(data, stream_) != cudaSuccess) (void)cudaGetLastError();
}

Result<PinnedBufferPtr> CudaStream::pinned(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(pinned_mutex_);
  for (const PinnedBufferPtr& p : pinned_) {
    // Only this cache holds it: no output refers to it and its copy was enqueued before any copy
    // that reuses it, so stream order keeps the two apart.
    if (p.use_count() == 1 && p->size() >= bytes) return p;
  }
  EREDU_TRY_VOID(enter());
  void* data = nullptr;
  const std::size_t size = std::max<std::size_t>(bytes, 64);
  if (cudaError_t e = cudaMallocHost(&data, size); e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(cuda_allocation_error("cudaMallocHost", e, size, std::nullopt));
  }
  try {
    auto buffer = std::make_shared<PinnedBuffer>(data, size);
    // A handful of sizes at most (the logits of one vocabulary); keep the cache small.
    if (pinned_.size() >= 8) {
      // The oldest may be one whose output was dropped with its copy still queued: let the stream
      // finish before freeing it (rare: the cache holds one buffer per logits size in use).
      if (cudaStreamSynchronize(stream_) != cudaSuccess) (void)cudaGetLastError();
      pinned_.erase(pinned_.begin());
    }
    pinned_.push_back(buffer);
    return buffer;
  } catch (const std::bad_alloc&) {
    (void)cudaFreeHost(data);
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for a pinned buffer");
  }
}

Result<StreamEventPtr> CudaStream::record() {
  EREDU_TRY_VOID(enter());
  cudaEvent_t event = nullptr;
  if (cudaError_t e = cudaEventCreateWithFlags(&event, cudaEventDisableTiming); e != cudaSuccess) {
    return fail(cuda_error("cudaEventCreateWithFlags", e));
  }
  if (cudaError_t e = cudaEventRecord(event, stream_); e != cudaSuccess) {
    (void)cudaEventDestroy(event);
    return fail(cuda_error("cudaEventRecord", e));
  }
  try {
    return std::make_shared<StreamEvent>(event, device_);
  } catch (const std::bad_alloc&) {
    (void)cudaEventSynchronize(event);
    (void)cudaEventDestroy(event);
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for an event");
  }
}

Result<void> CudaStream::upload(void* device, std::span<const std::byte> host) {
  if (host.empty()) return ok();
  EREDU_TRY_VOID(enter());
  if (cudaError_t e =
          cudaMemcpyAsync(device, host.data(), host.size(), cudaMemcpyHostToDevice, stream_);
      e != cudaSuccess) {
    return fail(cuda_error(
        "cudaMemcpyAsync(host to device, " + std::to_string(host.size()) + " bytes)", e));
  }
  return ok();
}

Result<void> CudaStream::download(std::span<std::byte> host, const void* device) {
  if (host.empty()) return synchronize();
  EREDU_TRY_VOID(enter());
  if (cudaError_t e =
          cudaMemcpyAsync(host.data(), device, host.size(), cudaMemcpyDeviceToHost, stream_);
      e != cudaSuccess) {
    return fail(cuda_error("cudaMemcpyAsync(device to host)", e));
  }
  return synchronize();
}

Result<void> CudaStream::copy(void* device_dst, const void* device_src, std::size_t bytes) {
  if (bytes == 0) return ok();
  EREDU_TRY_VOID(enter());
  if (cudaError_t e =
          cudaMemcpyAsync(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice, stream_);
      e != cudaSuccess) {
    return fail(cuda_error("cudaMemcpyAsync(device to device)", e));
  }
  return ok();
}

Result<void> CudaStream::synchronize() {
  EREDU_TRY_VOID(enter());
  if (cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess) {
    return fail(cuda_error("cudaStreamSynchronize", e));
  }
  return ok();
}

DeviceBuffer::~DeviceBuffer() {
  if (stream_ != nullptr) stream_->release(data_);
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr && cudaFreeHost(data_) != cudaSuccess) (void)cudaGetLastError();
}

StreamEvent::~StreamEvent() {
  (void)cudaSetDevice(device_);
  if (cudaEventDestroy(event_) != cudaSuccess) (void)cudaGetLastError();
}

Result<bool> StreamEvent::query() const {
  (void)cudaSetDevice(device_);
  const cudaError_t e = cudaEventQuery(event_);
  if (e == cudaSuccess) return true;
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  return fail(cuda_error("cudaEventQuery", e));
}

Result<void> StreamEvent::synchronize() const {
  (void)cudaSetDevice(device_);
  if (cudaError_t e = cudaEventSynchronize(event_); e != cudaSuccess) {
    return fail(cuda_error("cudaEventSynchronize", e));
  }
  return ok();
}

Result<bool> CudaCompletion::is_complete() {
  if (event_ == nullptr) return true;
  return event_->query();
}

Result<void> CudaCompletion::wait() {
  if (event_ == nullptr) return ok();
  return event_->synchronize();
}

}  // namespace eredu::cuda
