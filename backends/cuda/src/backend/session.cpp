// CudaBackend's execution hooks of the generic session (runtime::FamilySession): the forward pass
// is already enqueued when finish_forward runs; it appends the copy of the logits into pinned host
// memory and an event, so the completion waits for this pass only. A failure rolls the KV cache
// back, so the session stays usable.
#include <cstring>
#include <string>

#include "../cuda_error.hpp"
#include "eredu/backends/cuda/cuda_backend.hpp"
#include "stream.hpp"

namespace eredu::cuda {

void CudaBackend::abandon_forward(kv_cache& cache, std::uint32_t first_position) noexcept {
  if (cache.storage != nullptr && cache.storage->length > first_position) {
    cache.storage->length = first_position;
  }
}

Result<Submission<CudaTensor, CudaCompletion>> CudaBackend::finish_forward(
    CudaTensor&& logits, kv_cache& cache, std::uint32_t first_position) const {
  auto enqueued = [&]() -> Result<StreamEventPtr> {
    EREDU_TRY_VOID(check_launch("forward pass"));  // a launch failure nothing reported yet
    const std::size_t bytes = logits.rows * logits.cols * sizeof(float);
    EREDU_TRY(logits.host, stream_->pinned(bytes));
    if (bytes > 0) {
      EREDU_TRY_VOID(stream_->enter());
      if (cudaError_t e = cudaMemcpyAsync(logits.host->floats(), logits.data(), bytes,
                                          cudaMemcpyDeviceToHost, stream_->handle());
          e != cudaSuccess) {
        return fail(cuda_error("cudaMemcpyAsync(logits to host)", e));
      }
    }
    return stream_->record();
  }();
  if (!enqueued) {
    abandon_forward(cache, first_position);
    return fail(enqueued.error());
  }
  logits.ready = *enqueued;
  return Submission<CudaTensor, CudaCompletion>{std::move(logits),
                                                CudaCompletion(std::move(*enqueued))};
}

Result<std::vector<float>> CudaBackend::observe_forward(const CudaTensor& out) const {
  if (out.host == nullptr || out.ready == nullptr) return read(out);  // not a session output
  EREDU_TRY_VOID(out.ready->synchronize());
  std::vector<float> values;
  try {
    values.resize(out.rows * out.cols);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for the logits");
  }
  if (!values.empty())
    std::memcpy(values.data(), out.host->floats(), values.size() * sizeof(float));
  return values;
}

Result<void> CudaBackend::truncate_kv_cache(kv_cache& cache, std::uint32_t position) {
  if (cache.storage == nullptr) return fail(ErrorCode::kInvalidArgument, "cuda: no kv cache");
  if (position > cache.storage->length) {
    return fail(ErrorCode::kInvalidArgument, "cuda: cannot truncate the KV cache to " +
                                                 std::to_string(position) + ", past its length " +
                                                 std::to_string(cache.storage->length));
  }
  cache.storage->length = position;
  return ok();
}

}  // namespace eredu::cuda
