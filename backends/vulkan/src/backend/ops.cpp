// VulkanBackend's NeuralBackend operators: each checks its arguments' geometry (kInvalidArgument
// instead of an out-of-bounds dispatch), takes its output from the device's buffer pool and
// records its shader into the backend's open command buffer. Nothing is submitted here. The
// pipelines come resolved from the context (pipelines.hpp): no shader look-up per dispatch.
#include <string>
#include <vector>

#include "context.hpp"
#include "eredu/backends/vulkan/vulkan_backend.hpp"

namespace eredu::vulkan {

namespace shader {
using uint = std::uint32_t;
#include "eredu/backends/vulkan/push_constants.h"
}  // namespace shader

namespace {

constexpr std::uint32_t kWorkgroup = 64;  // local_size_x of every shader

Error op_error(const char* op, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, std::string("vulkan ") + op + ": " + message);
}

std::uint32_t groups_for(std::uint64_t n) {
  return static_cast<std::uint32_t>((n + kWorkgroup - 1) / kWorkgroup);
}

// Shaders index with 32-bit words: every element count must stay well inside that range.
Result<std::uint32_t> u32(std::uint64_t v, const char* what) {
  if (v > UINT32_MAX / 4) {
    return fail(ErrorCode::kLimitExceeded,
                std::string("vulkan: ") + what + " " + std::to_string(v) + " is too large");
  }
  return static_cast<std::uint32_t>(v);
}

Result<VulkanTensor> make_tensor(Device& device, std::size_t rows, std::size_t cols) {
  EREDU_TRY(std::uint32_t count, u32(static_cast<std::uint64_t>(rows) * cols, "tensor elements"));
  EREDU_TRY(BufferPtr buffer, device.acquire_device_buffer(std::size_t{count} * sizeof(float)));
  VulkanTensor t;
  t.rows = rows;
  t.cols = cols;
  t.buffer = std::move(buffer);
  return t;
}

Result<void> check_tensor(const char* op, const VulkanTensor& t) {
  if (t.buffer == nullptr || t.buffer->size() < t.rows * t.cols * sizeof(float)) {
    return fail(op_error(op, "input tensor has no device buffer of its size"));
  }
  return ok();
}

// The rms_norm shader over `rows` rows of `cols` values of x's buffer (whole rows, or one row
// per head), each scaled by the F32 `gain` of `cols` values; y has x's shape.
Result<VulkanTensor> normalize_rows(VulkanContext& ctx, const VulkanTensor& x,
                                    const VulkanWeight& gain, std::size_t rows, std::size_t cols,
                                    float eps) {
  EREDU_TRY(std::uint32_t n_rows, u32(rows, "rms_norm rows"));
  EREDU_TRY(std::uint32_t n, u32(cols, "rms_norm width"));
  EREDU_TRY(VulkanTensor y, make_tensor(ctx.device(), x.rows, x.cols));
  if (n_rows == 0 || n == 0) return y;
  EREDU_TRY(Recorder * rec, ctx.recorder());
  const shader::RmsNormPush push{n_rows, n, 1U, eps};
  const BufferPtr bufs[] = {x.buffer, gain.buffer, y.buffer};
  EREDU_TRY_VOID(rec->dispatch(*ctx.pipelines().rms_norm, bufs, &push, sizeof(push), n_rows));
  return y;
}

}  // namespace

Result<VulkanTensor> VulkanBackend::embedding(const weight& table,
                                              std::span<const std::uint32_t> tokens) const {
  if (!table.bound() || table.shape.size() != 2) {
    return fail(op_error("embedding", "table '" + table.name + "' is not a bound matrix"));
  }
  EREDU_TRY(const Pipeline* p, context_->pipelines().embed(table.dtype));
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] >= table.rows()) {
      return fail(op_error("embedding", "token id " + std::to_string(tokens[t]) +
                                            " is out of range (vocabulary " +
                                            std::to_string(table.rows()) + ")"));
    }
  }
  Device& dev = device();
  EREDU_TRY(std::uint32_t n, u32(tokens.size(), "embedding tokens"));
  EREDU_TRY(std::uint32_t cols, u32(table.cols(), "embedding cols"));
  EREDU_TRY(std::uint32_t rows, u32(table.rows(), "embedding rows"));
  EREDU_TRY(std::uint32_t row_bytes,
            u32(packed_row_bytes(table.dtype, table.cols()), "embedding row bytes"));
  EREDU_TRY(VulkanTensor out, make_tensor(dev, tokens.size(), table.cols()));
  if (n == 0) return out;
  EREDU_TRY(Recorder * rec, context_->recorder());
  // The ids travel in this same command buffer: no separate submission per token.
  EREDU_TRY(BufferPtr ids, dev.acquire_device_buffer(tokens.size() * sizeof(std::uint32_t)));
  EREDU_TRY_VOID(rec->upload(ids, std::as_bytes(tokens)));
  const shader::EmbedPush push{n, cols, row_bytes, rows};
  const BufferPtr bufs[] = {table.buffer, ids, out.buffer};
  EREDU_TRY_VOID(rec->dispatch(*p, bufs, &push, sizeof(push),
                               groups_for(static_cast<std::uint64_t>(n) * cols)));
  return out;
}

Result<VulkanTensor> VulkanBackend::linear(const tensor& x, const weight& w) const {
  if (!w.bound() || w.shape.size() != 2) {
    return fail(op_error("linear", "weight '" + w.name + "' is not a bound matrix"));
  }
  if (x.cols != w.cols()) {
    return fail(op_error("linear", "input has " + std::to_string(x.cols) + " features, weight '" +
                                       w.name + "' expects " + std::to_string(w.cols())));
  }
  EREDU_TRY_VOID(check_tensor("linear", x));
  EREDU_TRY(const Pipeline* p, context_->pipelines().matmul(w.dtype));
  Device& dev = device();
  EREDU_TRY(std::uint32_t rows, u32(w.rows(), "linear rows"));
  EREDU_TRY(std::uint32_t cols, u32(w.cols(), "linear cols"));
  EREDU_TRY(std::uint32_t tokens, u32(x.rows, "linear tokens"));
  EREDU_TRY(std::uint32_t row_bytes, u32(packed_row_bytes(w.dtype, w.cols()), "row bytes"));
  EREDU_TRY(std::uint32_t outputs, u32(static_cast<std::uint64_t>(rows) * tokens, "outputs"));
  EREDU_TRY(VulkanTensor y, make_tensor(dev, x.rows, w.rows()));
  if (outputs == 0) return y;
  EREDU_TRY(Recorder * rec, context_->recorder());
  const shader::MatmulPush push{rows, cols, tokens, row_bytes};
  const BufferPtr bufs[] = {w.buffer, x.buffer, y.buffer};
  EREDU_TRY_VOID(rec->dispatch(*p, bufs, &push, sizeof(push), groups_for(outputs)));
  return y;
}

Result<VulkanTensor> VulkanBackend::rms_norm(const tensor& x, const weight& gain,
                                             const RmsNormSpec& spec) const {
  if (!gain.bound() || gain.shape.size() != 1 || gain.cols() != x.cols ||
      gain.dtype != DType::kF32) {
    return fail(op_error("rms_norm", "gain '" + gain.name + "' does not match " +
                                         std::to_string(x.cols) + " features"));
  }
  EREDU_TRY_VOID(check_tensor("rms_norm", x));
  return normalize_rows(*context_, x, gain, x.rows, x.cols, spec.epsilon);
}

Result<VulkanTensor> VulkanBackend::rotary(const tensor& x, const RotarySpec& spec,
                                           std::uint32_t first_position) const {
  return rotate(x, spec, first_position, nullptr);
}

Result<VulkanTensor> VulkanBackend::rotate(const tensor& x, const RotarySpec& spec,
                                           std::uint32_t first_position,
                                           const float* factors) const {
  EREDU_TRY_VOID(spec.validate());
  if (x.cols != static_cast<std::size_t>(spec.heads) * spec.head_dim) {
    return fail(op_error(
        "rotary", "input has " + std::to_string(x.cols) + " features, expected heads * head_dim"));
  }
  EREDU_TRY_VOID(check_tensor("rotary", x));
  Device& dev = device();
  EREDU_TRY(std::uint32_t n, u32(x.rows, "rotary tokens"));
  const std::uint32_t n_pairs = spec.rotated_dims / 2;
  EREDU_TRY(std::uint32_t work,
            u32(static_cast<std::uint64_t>(n) * spec.heads * n_pairs, "rotary pairs"));
  EREDU_TRY(VulkanTensor y, make_tensor(dev, x.rows, x.cols));
  if (work == 0) return y;
  EREDU_TRY(Recorder * rec, context_->recorder());
  // The rope shader works in place; the input stays untouched (it is const).
  EREDU_TRY_VOID(rec->copy(x.buffer, 0, y.buffer, 0, x.rows * x.cols * sizeof(float)));
  EREDU_TRY(BufferPtr table, context_->rotary_table(first_position, n, spec, factors));
  const Pipeline* p = context_->pipelines().rope;
  const shader::RopePush push{n, spec.heads, spec.head_dim, n_pairs,
                              spec.layout == RotaryLayout::kInterleaved ? 0U : 1U};
  const BufferPtr bufs[] = {y.buffer, table};
  EREDU_TRY_VOID(rec->dispatch(*p, bufs, &push, sizeof(push), groups_for(work)));
  return y;
}

Result<VulkanKvCache> VulkanBackend::create_kv_cache(const KvCacheSpec& spec) const {
  return create_kv_cache_of(spec, KvCacheType::kF32);
}

Result<VulkanKvCache> VulkanBackend::create_kv_cache_of(const KvCacheSpec& spec,
                                                        KvCacheType type) const {
  EREDU_TRY(auto elements, spec.elements_per_tensor());
  if (elements > (1ull << 40)) {
    return fail(ErrorCode::kLimitExceeded,
                "kv cache of " + std::to_string(elements) + " elements per tensor is too large");
  }
  EREDU_TRY(KvCache cache,
            KvCache::create(context_->device_ptr(), spec.layers, spec.max_positions, spec.kv_heads,
                            spec.head_dim, type == KvCacheType::kF16 ? DType::kF16 : DType::kF32));
  try {
    return VulkanKvCache{spec, std::make_shared<KvCache>(std::move(cache))};
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "vulkan: out of host memory for a KV cache");
  }
}

Result<VulkanTensor> VulkanBackend::attention(const tensor& q, const tensor& k, const tensor& v,
                                              kv_cache& cache, const AttentionSpec& spec,
                                              std::uint32_t first_position) const {
  EREDU_TRY_VOID(spec.validate());
  const KvCacheSpec& geo = cache.spec;
  if (cache.cache == nullptr || spec.layer >= geo.layers || spec.kv_heads != geo.kv_heads ||
      spec.head_dim != geo.head_dim || spec.heads % spec.kv_heads != 0) {
    return fail(op_error("attention", "spec does not match the cache geometry"));
  }
  const std::size_t n = q.rows;
  const std::size_t row = static_cast<std::size_t>(geo.kv_heads) * geo.head_dim;
  if (n == 0 || k.rows != n || v.rows != n ||
      q.cols != static_cast<std::size_t>(spec.heads) * spec.head_dim || k.cols != row ||
      v.cols != row) {
    return fail(op_error("attention", "q/k/v shapes do not match the spec"));
  }
  EREDU_TRY_VOID(check_tensor("attention", q));
  EREDU_TRY_VOID(check_tensor("attention", k));
  EREDU_TRY_VOID(check_tensor("attention", v));
  if (static_cast<std::uint64_t>(first_position) + n > geo.max_positions) {
    return fail(Error(ErrorCode::kLimitExceeded,
                      "vulkan attention: positions up to " + std::to_string(first_position + n) +
                          " exceed the kv cache's " + std::to_string(geo.max_positions)));
  }
  Device& dev = device();
  EREDU_TRY(std::uint32_t tokens, u32(n, "attention tokens"));
  EREDU_TRY(std::uint32_t work, u32(n * spec.heads, "attention rows"));
  EREDU_TRY(Recorder * rec, context_->recorder());
  EREDU_TRY_VOID(
      cache.cache->record_write(*rec, spec.layer, first_position, k.buffer, v.buffer, n));
  EREDU_TRY(BufferPtr positions, context_->positions(first_position, tokens));
  EREDU_TRY(VulkanTensor out, make_tensor(dev, n, q.cols));
  const VulkanPipelines& pipelines = context_->pipelines();
  const Pipeline* p =
      cache.cache->dtype() == DType::kF16 ? pipelines.attention_f16 : pipelines.attention_f32;
  const shader::AttentionPush push{
      tokens, spec.heads, spec.kv_heads, spec.head_dim, first_position + tokens, spec.scale};
  const BufferPtr bufs[] = {q.buffer, cache.cache->keys(spec.layer),
                            cache.cache->values(spec.layer), positions, out.buffer};
  EREDU_TRY_VOID(rec->dispatch(*p, bufs, &push, sizeof(push), groups_for(work)));
  return out;
}

namespace {
Result<VulkanTensor> elementwise(VulkanContext& ctx, const char* op, const Pipeline& p,
                                 const VulkanTensor& a, const VulkanTensor& b) {
  if (a.rows != b.rows || a.cols != b.cols) return fail(op_error(op, "operands differ in shape"));
  EREDU_TRY_VOID(check_tensor(op, a));
  EREDU_TRY_VOID(check_tensor(op, b));
  EREDU_TRY(std::uint32_t count, u32(a.rows * a.cols, "element count"));
  EREDU_TRY(VulkanTensor y, make_tensor(ctx.device(), a.rows, a.cols));
  if (count == 0) return y;
  EREDU_TRY(Recorder * rec, ctx.recorder());
  const shader::ElementwisePush push{count};
  const BufferPtr bufs[] = {a.buffer, b.buffer, y.buffer};
  EREDU_TRY_VOID(rec->dispatch(p, bufs, &push, sizeof(push), groups_for(count)));
  return y;
}
}  // namespace

Result<VulkanTensor> VulkanBackend::swiglu(const tensor& gate, const tensor& up) const {
  return elementwise(*context_, "swiglu", *context_->pipelines().swiglu, gate, up);
}

Result<VulkanTensor> VulkanBackend::add(const tensor& a, const tensor& b) const {
  return elementwise(*context_, "add", *context_->pipelines().add, a, b);
}

Result<VulkanTensor> VulkanBackend::logits(const tensor& hidden, const weight& output) const {
  if (hidden.rows == 0) return fail(op_error("logits", "no hidden rows"));
  EREDU_TRY_VOID(check_tensor("logits", hidden));
  EREDU_TRY(VulkanTensor last, make_tensor(device(), 1, hidden.cols));
  EREDU_TRY(Recorder * rec, context_->recorder());
  const std::size_t row_bytes = hidden.cols * sizeof(float);
  EREDU_TRY_VOID(
      rec->copy(hidden.buffer, (hidden.rows - 1) * row_bytes, last.buffer, 0, row_bytes));
  return linear(last, output);
}

// --- Optional operators ---

Result<VulkanTensor> VulkanBackend::add_bias(const tensor& x, const weight& bias) const {
  if (!bias.bound() || bias.shape.size() != 1 || bias.cols() != x.cols ||
      bias.dtype != DType::kF32) {
    return fail(op_error("add_bias", "bias '" + bias.name + "' does not match " +
                                         std::to_string(x.cols) + " features"));
  }
  EREDU_TRY_VOID(check_tensor("add_bias", x));
  EREDU_TRY(std::uint32_t count, u32(x.rows * x.cols, "element count"));
  EREDU_TRY(std::uint32_t cols, u32(x.cols, "add_bias width"));
  EREDU_TRY(VulkanTensor y, make_tensor(device(), x.rows, x.cols));
  if (count == 0) return y;
  EREDU_TRY(Recorder * rec, context_->recorder());
  const Pipeline* p = context_->pipelines().bias_add;
  const shader::BiasAddPush push{count, cols};
  const BufferPtr bufs[] = {x.buffer, bias.buffer, y.buffer};
  EREDU_TRY_VOID(rec->dispatch(*p, bufs, &push, sizeof(push), groups_for(count)));
  return y;
}

Result<VulkanTensor> VulkanBackend::head_rms_norm(const tensor& x, const weight& gain,
                                                  const RmsNormSpec& spec) const {
  const std::size_t head = gain.cols();
  if (!gain.bound() || gain.shape.size() != 1 || head == 0 || x.cols % head != 0 ||
      gain.dtype != DType::kF32) {
    return fail(op_error("head_rms_norm", "gain '" + gain.name + "' of " + std::to_string(head) +
                                              " does not divide " + std::to_string(x.cols) +
                                              " features into heads"));
  }
  EREDU_TRY_VOID(check_tensor("head_rms_norm", x));
  // Heads are contiguous slices of a row: the rms_norm shader over rows * heads rows of `head`.
  return normalize_rows(*context_, x, gain, x.rows * (x.cols / head), head, spec.epsilon);
}

Result<VulkanTensor> VulkanBackend::rotary_scaled(const tensor& x, const RotarySpec& spec,
                                                  std::uint32_t first_position,
                                                  const weight& factors) const {
  if (!factors.bound() || factors.host_values == nullptr ||
      factors.host_values->size() != spec.rotated_dims / 2) {
    return fail(op_error("rotary_scaled", "factors '" + factors.name + "' must hold " +
                                              std::to_string(spec.rotated_dims / 2) + " values"));
  }
  return rotate(x, spec, first_position, factors.host_values->data());
}

}  // namespace eredu::vulkan
