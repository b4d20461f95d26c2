#pragma once
// The Vulkan ops with host inputs and outputs: each call uploads its inputs through staging
// buffers into device-local buffers, dispatches the op's shader, downloads the result and waits
// for its own completion. Argument conventions are the CPU backend's (kernel_types.hpp). Weight
// blocks are uploaded packed, exactly as stored, and decoded in the shader.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/backends/vulkan/device.hpp"
#include "eredu/backends/vulkan/kv_cache.hpp"
#include "eredu/backends/vulkan/weight_shaders.hpp"

namespace eredu::vulkan {

class Kernels {
 public:
  explicit Kernels(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  [[nodiscard]] Device& device() const noexcept { return *device_; }

  // y[t][o] = sum_i w[o][i] * x[t][i]; kUnsupported for an encoding without a shader.
  Result<void> matmul(const cpu::MatrixView& w, const float* x, std::size_t n_tokens, float* y);
  // Embedding lookup: decodes row `row` of `table` to `out` (table.cols floats).
  Result<void> get_row(const cpu::MatrixView& table, std::size_t row, float* out);
  Result<void> rms_norm(const float* x, const float* weight, std::size_t n_rows, std::size_t n,
                        float eps, float* y);
  Result<void> rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
                    const std::int32_t* positions, const cpu::RopeParams& params);
  Result<void> swiglu(const float* gate, const float* up, std::size_t n, float* out);
  Result<void> add(const float* a, const float* b, std::size_t n, float* out);
  // In-place softmax of one vector (the sampling distribution over logits).
  Result<void> softmax(float* x, std::size_t n);
  // Causal grouped-query attention; args.kv_dtype F32 or F16.
  Result<void> attention(const cpu::AttentionArgs& args);
  // The same over layer `layer` of a device-resident cache, in place: q and out are
  // [n_tokens][n_head][head_dim] F32 on the host; every positions[t] < cache.length().
  Result<void> attention(const KvCache& cache, std::size_t layer, const float* q,
                         const std::int32_t* positions, std::size_t n_tokens, std::size_t n_head,
                         float scale, float* out);

 private:
  Result<void> elementwise(const char* shader, const float* a, const float* b, std::size_t n,
                           float* out);
  Result<void> attention_on(const BufferPtr& k, const BufferPtr& v, DType kv_dtype, const float* q,
                            const std::int32_t* positions, std::size_t n_tokens, std::size_t n_head,
                            std::size_t n_head_kv, std::size_t head_dim, std::size_t n_kv,
                            float scale, float* out);
  std::shared_ptr<Device> device_;
};

}  // namespace eredu::vulkan
