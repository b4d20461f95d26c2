// Host side of the op shaders: argument checks, uploads, dispatch, download.
#include "eredu/backends/vulkan/kernels.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace eredu::vulkan {

namespace shader {
// The push-constant layouts shared with the GLSL sources (uint = 32-bit unsigned there too).
using uint = std::uint32_t;
#include "eredu/backends/vulkan/push_constants.h"
// std430 push-constant blocks of 32-bit scalars have no padding: the C++ structs must match.
static_assert(sizeof(MatmulPush) == 16 && sizeof(GetRowPush) == 16 && sizeof(RmsNormPush) == 16);
static_assert(sizeof(RopePush) == 20 && sizeof(ElementwisePush) == 4);
static_assert(sizeof(AttentionPush) == 24);
}  // namespace shader

namespace {

constexpr std::uint32_t kWorkgroup = 64;  // local_size_x of every shader

// Narrows a size to the 32-bit range the shaders index with.
Result<std::uint32_t> u32(std::size_t v, const char* what) {
  if (v > std::numeric_limits<std::uint32_t>::max() / 4) {
    return fail(ErrorCode::kLimitExceeded,
                std::string("vulkan: ") + what + " " + std::to_string(v) + " is too large");
  }
  return static_cast<std::uint32_t>(v);
}

std::uint32_t groups_for(std::uint32_t n) {
  return (n + kWorkgroup - 1) / kWorkgroup;
}

std::span<const std::byte> bytes_of(const void* p, std::size_t n) {
  return {static_cast<const std::byte*>(p), n};
}
std::span<std::byte> bytes_of(void* p, std::size_t n) {
  return {static_cast<std::byte*>(p), n};
}

Result<void> run(Device& device, const std::function<Result<void>(Recorder&)>& record) {
  EREDU_TRY(Completion done, device.submit(record));
  return done.wait();
}

}  // namespace

Result<void> Kernels::matmul(const cpu::MatrixView& w, const float* x, std::size_t n_tokens,
                             float* y) {
  const char* suffix = weight_shader_suffix(w.dtype);
  if (suffix == nullptr) {
    return fail(ErrorCode::kUnsupported,
                "vulkan: matmul has no shader for " + std::string(to_string(w.dtype)) + " weights");
  }
  const std::size_t row_bytes = cpu::packed_row_bytes(w.dtype, w.cols);
  if (row_bytes == 0 && w.cols != 0) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: matmul cols is not a block multiple");
  }
  if (w.dtype == DType::kF32 && row_bytes % 4 != 0) {
    return fail(ErrorCode::kInternal, "vulkan: F32 row is not word aligned");
  }
  if (w.rows == 0 || n_tokens == 0) return ok();
  EREDU_TRY(std::uint32_t rows, u32(w.rows, "matmul rows"));
  EREDU_TRY(std::uint32_t cols, u32(w.cols, "matmul cols"));
  EREDU_TRY(std::uint32_t tokens, u32(n_tokens, "matmul tokens"));
  EREDU_TRY(std::uint32_t rb, u32(row_bytes, "matmul row bytes"));
  EREDU_TRY(std::uint32_t outputs, u32(w.rows * n_tokens, "matmul outputs"));
  EREDU_TRY(std::uint32_t w_bytes, u32(row_bytes * w.rows, "matmul weight bytes"));
  EREDU_TRY(const Pipeline* p,
            device_->pipeline(std::string("matmul_") + suffix, 3, sizeof(shader::MatmulPush)));
  EREDU_TRY(BufferPtr wb, device_->create_device_buffer(w_bytes));
  EREDU_TRY(BufferPtr xb, device_->create_device_buffer(n_tokens * w.cols * sizeof(float)));
  EREDU_TRY(BufferPtr yb, device_->create_device_buffer(outputs * sizeof(float)));
  const shader::MatmulPush push{rows, cols, tokens, rb};
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(wb, bytes_of(w.data, w_bytes)));
    EREDU_TRY_VOID(r.upload(xb, bytes_of(x, n_tokens * w.cols * sizeof(float))));
    const BufferPtr bufs[] = {wb, xb, yb};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), groups_for(outputs)));
    return r.download(yb, bytes_of(y, outputs * sizeof(float)));
  });
}

Result<void> Kernels::get_row(const cpu::MatrixView& table, std::size_t row, float* out) {
  const char* suffix = weight_shader_suffix(table.dtype);
  if (suffix == nullptr) {
    return fail(ErrorCode::kUnsupported,
                "vulkan: get_row has no shader for " + std::string(to_string(table.dtype)));
  }
  if (row >= table.rows) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: get_row row " + std::to_string(row) +
                                                 " is out of range (" + std::to_string(table.rows) +
                                                 " rows)");
  }
  const std::size_t row_bytes = cpu::packed_row_bytes(table.dtype, table.cols);
  if (row_bytes == 0) return ok();
  EREDU_TRY(std::uint32_t cols, u32(table.cols, "get_row cols"));
  EREDU_TRY(std::uint32_t rb, u32(row_bytes, "get_row row bytes"));
  // Only the requested row travels; in a model the whole table is resident on the device.
  EREDU_TRY(const Pipeline* p,
            device_->pipeline(std::string("get_row_") + suffix, 2, sizeof(shader::GetRowPush)));
  EREDU_TRY(BufferPtr wb, device_->create_device_buffer(row_bytes));
  EREDU_TRY(BufferPtr yb, device_->create_device_buffer(table.cols * sizeof(float)));
  const shader::GetRowPush push{0, cols, rb, 0};
  const auto* base = static_cast<const std::byte*>(table.data) + row * row_bytes;
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(wb, std::span<const std::byte>(base, row_bytes)));
    const BufferPtr bufs[] = {wb, yb};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), groups_for(cols)));
    return r.download(yb, bytes_of(out, table.cols * sizeof(float)));
  });
}

Result<void> Kernels::rms_norm(const float* x, const float* weight, std::size_t n_rows,
                               std::size_t n, float eps, float* y) {
  if (n_rows == 0 || n == 0) return ok();
  EREDU_TRY(std::uint32_t rows, u32(n_rows, "rms_norm rows"));
  EREDU_TRY(std::uint32_t cols, u32(n, "rms_norm width"));
  EREDU_TRY(std::uint32_t total, u32(n_rows * n, "rms_norm elements"));
  EREDU_TRY(const Pipeline* p, device_->pipeline("rms_norm", 3, sizeof(shader::RmsNormPush)));
  EREDU_TRY(BufferPtr xb, device_->create_device_buffer(total * sizeof(float)));
  EREDU_TRY(BufferPtr wb, device_->create_device_buffer(n * sizeof(float)));
  EREDU_TRY(BufferPtr yb, device_->create_device_buffer(total * sizeof(float)));
  const shader::RmsNormPush push{rows, cols, weight != nullptr ? 1U : 0U, eps};
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(xb, bytes_of(x, total * sizeof(float))));
    if (weight != nullptr) EREDU_TRY_VOID(r.upload(wb, bytes_of(weight, n * sizeof(float))));
    const BufferPtr bufs[] = {xb, wb, yb};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), rows));
    return r.download(yb, bytes_of(y, total * sizeof(float)));
  });
}

Result<void> Kernels::rope(float* x, std::size_t n_tokens, std::size_t n_heads,
                           std::size_t head_dim, const std::int32_t* positions,
                           const cpu::RopeParams& params) {
  if (params.n_rot % 2 != 0 || params.n_rot > head_dim) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: rope n_rot must be even and <= head_dim");
  }
  const std::size_t n_pairs = params.n_rot / 2;
  if (n_tokens == 0 || n_heads == 0 || n_pairs == 0) return ok();
  EREDU_TRY(std::uint32_t total, u32(n_tokens * n_heads * head_dim, "rope elements"));
  EREDU_TRY(std::uint32_t work, u32(n_tokens * n_heads * n_pairs, "rope pairs"));
  // Angles in float64 on the host, exactly as the reference computes them.
  std::vector<float> cs(n_tokens * n_pairs * 2);
  for (std::size_t t = 0; t < n_tokens; ++t) {
    for (std::size_t i = 0; i < n_pairs; ++i) {
      const double theta =
          static_cast<double>(positions[t]) * static_cast<double>(params.freq_scale) *
          std::pow(static_cast<double>(params.freq_base),
                   -2.0 * static_cast<double>(i) / static_cast<double>(params.n_rot));
      cs[(t * n_pairs + i) * 2] = static_cast<float>(std::cos(theta));
      cs[(t * n_pairs + i) * 2 + 1] = static_cast<float>(std::sin(theta));
    }
  }
  EREDU_TRY(const Pipeline* p, device_->pipeline("rope", 2, sizeof(shader::RopePush)));
  EREDU_TRY(BufferPtr xb, device_->create_device_buffer(total * sizeof(float)));
  EREDU_TRY(BufferPtr cb, device_->create_device_buffer(cs.size() * sizeof(float)));
  const shader::RopePush push{
      static_cast<std::uint32_t>(n_tokens), static_cast<std::uint32_t>(n_heads),
      static_cast<std::uint32_t>(head_dim), static_cast<std::uint32_t>(n_pairs),
      params.mode == cpu::RopeMode::kNeox ? 1U : 0U};
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(xb, bytes_of(x, total * sizeof(float))));
    EREDU_TRY_VOID(r.upload(cb, bytes_of(cs.data(), cs.size() * sizeof(float))));
    const BufferPtr bufs[] = {xb, cb};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), groups_for(work)));
    return r.download(xb, bytes_of(x, total * sizeof(float)));
  });
}

Result<void> Kernels::elementwise(const char* name, const float* a, const float* b, std::size_t n,
                                  float* out) {
  if (n == 0) return ok();
  EREDU_TRY(std::uint32_t count, u32(n, "element count"));
  EREDU_TRY(const Pipeline* p, device_->pipeline(name, 3, sizeof(shader::ElementwisePush)));
  EREDU_TRY(BufferPtr ab, device_->create_device_buffer(n * sizeof(float)));
  EREDU_TRY(BufferPtr bb, device_->create_device_buffer(n * sizeof(float)));
  EREDU_TRY(BufferPtr ob, device_->create_device_buffer(n * sizeof(float)));
  const shader::ElementwisePush push{count};
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(ab, bytes_of(a, n * sizeof(float))));
    EREDU_TRY_VOID(r.upload(bb, bytes_of(b, n * sizeof(float))));
    const BufferPtr bufs[] = {ab, bb, ob};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), groups_for(count)));
    return r.download(ob, bytes_of(out, n * sizeof(float)));
  });
}

Result<void> Kernels::swiglu(const float* gate, const float* up, std::size_t n, float* out) {
  return elementwise("swiglu", gate, up, n, out);
}

Result<void> Kernels::add(const float* a, const float* b, std::size_t n, float* out) {
  return elementwise("add", a, b, n, out);
}

Result<void> Kernels::softmax(float* x, std::size_t n) {
  if (n == 0) return ok();
  EREDU_TRY(std::uint32_t count, u32(n, "softmax length"));
  EREDU_TRY(const Pipeline* p, device_->pipeline("softmax", 1, sizeof(shader::ElementwisePush)));
  EREDU_TRY(BufferPtr xb, device_->create_device_buffer(n * sizeof(float)));
  const shader::ElementwisePush push{count};
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(xb, bytes_of(x, n * sizeof(float))));
    const BufferPtr bufs[] = {xb};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), 1));
    return r.download(xb, bytes_of(x, n * sizeof(float)));
  });
}

Result<void> Kernels::attention(const cpu::AttentionArgs& a) {
  if (a.kv_dtype != DType::kF32 && a.kv_dtype != DType::kF16) {
    return fail(ErrorCode::kUnsupported, "vulkan: attention KV cache must be F32 or F16");
  }
  if (a.n_head_kv == 0 || a.head_dim == 0 || a.n_kv == 0)
    return attention_on(nullptr, nullptr, a.kv_dtype, a.q, a.positions, a.n_tokens, a.n_head,
                        a.n_head_kv, a.head_dim, a.n_kv, a.scale, a.out);
  const std::size_t elem = a.kv_dtype == DType::kF16 ? 2 : 4;
  const std::size_t kv_bytes = a.n_kv * a.n_head_kv * a.head_dim * elem;
  EREDU_TRY(BufferPtr kb, device_->create_device_buffer(kv_bytes));
  EREDU_TRY(BufferPtr vb, device_->create_device_buffer(kv_bytes));
  EREDU_TRY(Completion up, device_->submit([&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(kb, bytes_of(a.k, kv_bytes)));
    return r.upload(vb, bytes_of(a.v, kv_bytes));
  }));
  EREDU_TRY_VOID(up.wait());
  return attention_on(kb, vb, a.kv_dtype, a.q, a.positions, a.n_tokens, a.n_head, a.n_head_kv,
                      a.head_dim, a.n_kv, a.scale, a.out);
}

Result<void> Kernels::attention(const KvCache& cache, std::size_t layer, const float* q,
                                const std::int32_t* positions, std::size_t n_tokens,
                                std::size_t n_head, float scale, float* out) {
  if (layer >= cache.n_layers()) {
    return fail(ErrorCode::kInvalidArgument,
                "vulkan: KV cache has no layer " + std::to_string(layer));
  }
  return attention_on(cache.keys(layer), cache.values(layer), cache.dtype(), q, positions, n_tokens,
                      n_head, cache.n_head_kv(), cache.head_dim(), cache.length(), scale, out);
}

Result<void> Kernels::attention_on(const BufferPtr& kb, const BufferPtr& vb, DType kv_dtype,
                                   const float* q, const std::int32_t* positions,
                                   std::size_t n_tokens, std::size_t n_head, std::size_t n_head_kv,
                                   std::size_t head_dim, std::size_t n_kv, float scale,
                                   float* out) {
  if (n_head_kv == 0 || n_head % n_head_kv != 0) {
    return fail(ErrorCode::kInvalidArgument, "vulkan: n_head must be a multiple of n_head_kv");
  }
  if (n_tokens == 0 || n_head == 0 || head_dim == 0) return ok();
  for (std::size_t t = 0; t < n_tokens; ++t) {
    if (positions[t] < 0 || static_cast<std::size_t>(positions[t]) >= n_kv) {
      return fail(ErrorCode::kInvalidArgument,
                  "vulkan: attention position " + std::to_string(positions[t]) +
                      " is outside the KV cache (length " + std::to_string(n_kv) + ")");
    }
  }
  EREDU_TRY(std::uint32_t q_count, u32(n_tokens * n_head * head_dim, "attention q"));
  EREDU_TRY(std::uint32_t kv_len, u32(n_kv, "attention kv length"));
  EREDU_TRY(std::uint32_t work, u32(n_tokens * n_head, "attention rows"));
  EREDU_TRY(const Pipeline* p,
            device_->pipeline(kv_dtype == DType::kF16 ? "attention_f16" : "attention_f32", 5,
                              sizeof(shader::AttentionPush)));
  EREDU_TRY(BufferPtr qb, device_->create_device_buffer(q_count * sizeof(float)));
  EREDU_TRY(BufferPtr pb, device_->create_device_buffer(n_tokens * sizeof(std::int32_t)));
  EREDU_TRY(BufferPtr ob, device_->create_device_buffer(q_count * sizeof(float)));
  const shader::AttentionPush push{static_cast<std::uint32_t>(n_tokens),
                                   static_cast<std::uint32_t>(n_head),
                                   static_cast<std::uint32_t>(n_head_kv),
                                   static_cast<std::uint32_t>(head_dim),
                                   kv_len,
                                   scale};
  return run(*device_, [&](Recorder& r) -> Result<void> {
    EREDU_TRY_VOID(r.upload(qb, bytes_of(q, q_count * sizeof(float))));
    EREDU_TRY_VOID(r.upload(pb, bytes_of(positions, n_tokens * sizeof(std::int32_t))));
    const BufferPtr bufs[] = {qb, kb, vb, pb, ob};
    EREDU_TRY_VOID(r.dispatch(*p, bufs, &push, sizeof(push), groups_for(work)));
    return r.download(ob, bytes_of(out, q_count * sizeof(float)));
  });
}

}  // namespace eredu::vulkan
