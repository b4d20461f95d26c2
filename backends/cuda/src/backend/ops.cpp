// CudaBackend's NeuralBackend operators: each checks its arguments' geometry (kInvalidArgument
// instead of an out-of-bounds kernel), takes its output from the stream's pool and enqueues its
// kernels (src/kernels/). Nothing waits here. In a dry run (forward_state.hpp) an operator stops
// after its checks: it signs the pass and returns a placeholder of its output's shape.
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "../kernels/kernels.hpp"
#include "eredu/backends/cuda/cuda_backend.hpp"
#include "stream.hpp"

namespace eredu::cuda {
namespace {

Error op_error(const char* op, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, std::string("cuda ") + op + ": " + message);
}

// Kernels index rows, columns and tokens with 32-bit integers (their products with 64).
Result<std::uint32_t> u32(std::uint64_t v, const char* what) {
  if (v > UINT32_MAX / 4) {
    return fail(ErrorCode::kLimitExceeded,
                std::string("cuda: ") + what + " " + std::to_string(v) + " is too large");
  }
  return static_cast<std::uint32_t>(v);
}

Result<CudaTensor> make_tensor(CudaStream& stream, std::size_t rows, std::size_t cols) {
  EREDU_TRY(DeviceBufferPtr buffer, stream.allocate(rows * cols * sizeof(float)));
  CudaTensor t;
  t.rows = rows;
  t.cols = cols;
  t.buffer = std::move(buffer);
  try {
    t.quantized = std::make_shared<DeviceBufferPtr>();
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for a tensor handle");
  }
  return t;
}

// Operator kinds in the pass's signature.
enum class OpKind : std::uint8_t {
  kEmbedding = 1,
  kLinear,
  kRmsNorm,
  kRotary,
  kAttention,
  kSwiglu,
  kAdd,
  kLogits,
  kBias,
};

std::uintptr_t address(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

std::uint32_t float_bits(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// A dry run's output: the shape only.
CudaTensor placeholder(std::size_t rows, std::size_t cols) {
  CudaTensor t;
  t.rows = rows;
  t.cols = cols;
  return t;
}

Result<void> check_tensor(CudaStream& stream, const char* op, const CudaTensor& t) {
  if (stream.forward().dry()) return ok();  // placeholders have shapes only
  if (t.buffer == nullptr || t.buffer->size() < t.rows * t.cols * sizeof(float)) {
    return fail(op_error(op, "input tensor has no device buffer of its size"));
  }
  return ok();
}

Result<void> check_vector(const char* op, const CudaWeight& v, std::size_t n, const char* what) {
  if (!v.bound() || v.shape.size() != 1 || v.cols() != n || v.dtype != DType::kF32) {
    return fail(op_error(op, std::string(what) + " '" + v.name + "' does not match " +
                                 std::to_string(n) + " features"));
  }
  return ok();
}

Result<CudaTensor> normalize_rows(CudaStream& stream, const CudaTensor& x, const CudaWeight& gain,
                                  std::size_t rows, std::size_t cols, float eps) {
  EREDU_TRY(std::uint32_t n_rows, u32(rows, "rms_norm rows"));
  EREDU_TRY(std::uint32_t n, u32(cols, "rms_norm width"));
  ForwardState& pass = stream.forward();
  pass.sign(OpKind::kRmsNorm, rows, cols, address(gain.blocks()), float_bits(eps));
  if (pass.dry()) return placeholder(x.rows, x.cols);
  EREDU_TRY(CudaTensor y, make_tensor(stream, x.rows, x.cols));
  EREDU_TRY_VOID(stream.enter());
  EREDU_TRY_VOID(kernels::rms_norm(x.data(), static_cast<const float*>(gain.buffer->data()),
                                   y.data(), n_rows, n, eps, stream.handle()));
  return y;
}

}  // namespace

Result<CudaTensor> CudaBackend::upload(std::span<const float> values, std::size_t rows,
                                       std::size_t cols) const {
  if (values.size() != rows * cols) {
    return fail(op_error("upload", std::to_string(values.size()) + " values for a " +
                                       std::to_string(rows) + " x " + std::to_string(cols) +
                                       " tensor"));
  }
  EREDU_TRY(CudaTensor t, make_tensor(*stream_, rows, cols));
  EREDU_TRY_VOID(stream_->upload(t.data(), std::as_bytes(values)));
  return t;
}

Result<CudaTensor> CudaBackend::embedding(const weight& table,
                                          std::span<const std::uint32_t> tokens) const {
  if (!table.bound() || table.shape.size() != 2) {
    return fail(op_error("embedding", "table '" + table.name + "' is not a bound matrix"));
  }
  if (!kernels::supports_weight_dtype(table.dtype)) {
    return fail(Error(ErrorCode::kUnsupported, "cuda embedding: no kernel for " +
                                                   std::string(to_string(table.dtype)) +
                                                   " (table '" + table.name + "')"));
  }
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] >= table.rows()) {
      return fail(op_error("embedding", "token id " + std::to_string(tokens[t]) +
                                            " is out of range (vocabulary " +
                                            std::to_string(table.rows()) + ")"));
    }
  }
  EREDU_TRY(std::uint32_t n, u32(tokens.size(), "embedding tokens"));
  EREDU_TRY(std::uint32_t cols, u32(table.cols(), "embedding cols"));
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kEmbedding, n, address(table.blocks()), table.dtype);
  ++pass.embeddings;
  if (pass.dry()) {
    try {
      pass.token_ids.assign(tokens.begin(), tokens.end());
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kCapacityExhausted, "cuda embedding: out of host memory");
    }
    return placeholder(tokens.size(), table.cols());
  }
  EREDU_TRY(CudaTensor out, make_tensor(*stream_, tokens.size(), table.cols()));
  if (n == 0 || cols == 0) return out;
  const std::uint32_t* ids = nullptr;
  DeviceBufferPtr uploaded;
  if (pass.capturing()) {
    // A captured decode step reads its token from the graph's step buffer (one token, after the
    // position), written before every replay.
    if (n != 1) return fail(op_error("embedding", "a captured pass embeds exactly one token"));
    ids = pass.device_step + 1;
  } else {
    // The ids go through the runtime's staging (pageable source), so `tokens` may go away now.
    EREDU_TRY(uploaded, stream_->allocate(tokens.size() * sizeof(std::uint32_t)));
    EREDU_TRY_VOID(stream_->upload(uploaded->data(), std::as_bytes(tokens)));
    ids = static_cast<const std::uint32_t*>(uploaded->data());
  }
  EREDU_TRY_VOID(kernels::embed(table.dtype, table.blocks(), packed_row_bytes(table.dtype, cols),
                                cols, ids, n, out.data(), stream_->handle()));
  return out;
}

Result<CudaTensor> CudaBackend::linear(const tensor& x, const weight& w) const {
  if (!w.bound() || w.shape.size() != 2) {
    return fail(op_error("linear", "weight '" + w.name + "' is not a bound matrix"));
  }
  if (x.cols != w.cols()) {
    return fail(op_error("linear", "input has " + std::to_string(x.cols) + " features, weight '" +
                                       w.name + "' expects " + std::to_string(w.cols())));
  }
  EREDU_TRY_VOID(check_tensor(*stream_, "linear", x));
  if (!kernels::supports_weight_dtype(w.dtype)) {
    return fail(Error(ErrorCode::kUnsupported, "cuda linear: no kernel for " +
                                                   std::string(to_string(w.dtype)) + " (weight '" +
                                                   w.name + "')"));
  }
  kernels::LinearArgs args;
  args.dtype = w.dtype;
  args.w = w.blocks();
  EREDU_TRY(args.rows, u32(w.rows(), "linear rows"));
  EREDU_TRY(args.cols, u32(w.cols(), "linear cols"));
  EREDU_TRY(args.n_tokens, u32(x.rows, "linear tokens"));
  args.row_bytes = packed_row_bytes(w.dtype, w.cols());
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kLinear, x.rows, x.cols, address(w.blocks()), w.dtype, w.rows());
  if (pass.dry()) return placeholder(x.rows, w.rows());
  EREDU_TRY(CudaTensor y, make_tensor(*stream_, x.rows, w.rows()));
  if (args.rows == 0 || args.n_tokens == 0) return y;
  EREDU_TRY_VOID(stream_->enter());
  if (kernels::uses_quantized_activations(w.dtype)) {
    // The activation's q8_1 blocks: made once per activation (see CudaTensor::quantized), freed in
    // stream order with the tensor, after every product that reads them.
    DeviceBufferPtr blocks = x.quantized != nullptr ? *x.quantized : nullptr;
    if (blocks == nullptr) {
      const std::size_t n_blocks =
          static_cast<std::size_t>(args.n_tokens) * (args.cols / dot::kQK8_1);
      EREDU_TRY(blocks, stream_->allocate(n_blocks * sizeof(dot::BlockQ8_1)));
      EREDU_TRY_VOID(kernels::quantize_q8_1(x.data(), static_cast<dot::BlockQ8_1*>(blocks->data()),
                                            args.n_tokens, args.cols, stream_->handle()));
      if (x.quantized != nullptr) *x.quantized = blocks;
    }
    EREDU_TRY_VOID(kernels::matvec(args, nullptr,
                                   static_cast<const dot::BlockQ8_1*>(blocks->data()), y.data(),
                                   stream_->handle()));
    return y;
  }
  if (args.n_tokens <= kernels::kMatvecMaxTokens) {
    EREDU_TRY_VOID(kernels::matvec(args, x.data(), nullptr, y.data(), stream_->handle()));
  } else if (w.dtype == DType::kF16) {
    // Tensor cores through cuBLAS; the F16 copy of the activations lives until this returns.
    EREDU_TRY(cublasHandle_t blas, stream_->cublas());
    EREDU_TRY(DeviceBufferPtr x16, stream_->allocate(x.rows * x.cols * 2));
    EREDU_TRY_VOID(
        kernels::matmul_f16_cublas(blas, args, x.data(), x16->data(), y.data(), stream_->handle()));
  } else {
    EREDU_TRY_VOID(kernels::matmul(args, x.data(), y.data(), stream_->handle()));
  }
  return y;
}

Result<CudaTensor> CudaBackend::rms_norm(const tensor& x, const weight& gain,
                                         const RmsNormSpec& spec) const {
  EREDU_TRY_VOID(check_vector("rms_norm", gain, x.cols, "gain"));
  EREDU_TRY_VOID(check_tensor(*stream_, "rms_norm", x));
  return normalize_rows(*stream_, x, gain, x.rows, x.cols, spec.epsilon);
}

Result<CudaTensor> CudaBackend::rotary(const tensor& x, const RotarySpec& spec,
                                       std::uint32_t first_position) const {
  return rotate(x, spec, first_position, nullptr);
}

Result<CudaTensor> CudaBackend::rotate(const tensor& x, const RotarySpec& spec,
                                       std::uint32_t first_position, const float* factors) const {
  EREDU_TRY_VOID(spec.validate());
  if (x.cols != static_cast<std::size_t>(spec.heads) * spec.head_dim) {
    return fail(op_error(
        "rotary", "input has " + std::to_string(x.cols) + " features, expected heads * head_dim"));
  }
  EREDU_TRY_VOID(check_tensor(*stream_, "rotary", x));
  kernels::RopeArgs args;
  EREDU_TRY(args.n_tokens, u32(x.rows, "rotary tokens"));
  args.heads = spec.heads;
  args.head_dim = spec.head_dim;
  args.n_pairs = spec.rotated_dims / 2;
  args.first_position = first_position;
  args.base = spec.frequency_base;
  args.scale = spec.frequency_scale;
  args.neox = spec.layout != RotaryLayout::kInterleaved;
  if (static_cast<std::uint64_t>(first_position) + x.rows > UINT32_MAX) {
    return fail(op_error("rotary", "positions exceed 32 bits"));
  }
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kRotary, x.rows, spec.heads, spec.head_dim, spec.rotated_dims,
            float_bits(spec.frequency_base), float_bits(spec.frequency_scale), args.neox,
            address(factors));
  if (pass.dry()) return placeholder(x.rows, x.cols);
  if (pass.capturing()) args.device_position = pass.device_step;
  EREDU_TRY(CudaTensor y, make_tensor(*stream_, x.rows, x.cols));
  EREDU_TRY_VOID(stream_->enter());
  EREDU_TRY_VOID(kernels::rope(x.data(), y.data(), factors, args, stream_->handle()));
  return y;
}

Result<CudaKvCache> CudaBackend::create_kv_cache(const KvCacheSpec& spec) const {
  return create_kv_cache_of(spec, KvCacheType::kF32);
}

Result<CudaKvCache> CudaBackend::create_kv_cache_of(const KvCacheSpec& spec,
                                                    KvCacheType type) const {
  EREDU_TRY(auto elements, spec.elements_per_tensor());
  if (spec.layers == 0 || elements == 0) {
    return fail(ErrorCode::kInvalidArgument, "cuda: KV cache dimensions must be non-zero");
  }
  if (elements > (1ull << 40)) {
    return fail(ErrorCode::kLimitExceeded,
                "kv cache of " + std::to_string(elements) + " elements per tensor is too large");
  }
  const bool f16 = type == KvCacheType::kF16;
  // `elements` counts every layer; each layer has its own K and V buffer.
  const std::size_t bytes = static_cast<std::size_t>(elements / spec.layers) * (f16 ? 2 : 4);
  std::shared_ptr<CudaKvCacheStorage> storage;
  try {
    storage = std::make_shared<CudaKvCacheStorage>();
    storage->keys.reserve(spec.layers);
    storage->values.reserve(spec.layers);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted, "cuda: out of host memory for a KV cache");
  }
  storage->dtype = f16 ? DType::kF16 : DType::kF32;
  for (std::uint32_t l = 0; l < spec.layers; ++l) {
    EREDU_TRY(DeviceBufferPtr k, stream_->allocate(bytes));
    EREDU_TRY(DeviceBufferPtr v, stream_->allocate(bytes));
    storage->keys.push_back(std::move(k));
    storage->values.push_back(std::move(v));
  }
  return CudaKvCache{spec, std::move(storage)};
}

Result<CudaTensor> CudaBackend::attention(const tensor& q, const tensor& k, const tensor& v,
                                          kv_cache& cache, const AttentionSpec& spec,
                                          std::uint32_t first_position) const {
  EREDU_TRY_VOID(spec.validate());
  const KvCacheSpec& geo = cache.spec;
  if (cache.storage == nullptr || spec.layer >= geo.layers || spec.kv_heads != geo.kv_heads ||
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
  EREDU_TRY_VOID(check_tensor(*stream_, "attention", q));
  EREDU_TRY_VOID(check_tensor(*stream_, "attention", k));
  EREDU_TRY_VOID(check_tensor(*stream_, "attention", v));
  CudaKvCacheStorage& kv = *cache.storage;
  if (static_cast<std::uint64_t>(first_position) + n > geo.max_positions) {
    return fail(Error(ErrorCode::kLimitExceeded,
                      "cuda attention: positions up to " + std::to_string(first_position + n) +
                          " exceed the kv cache's " + std::to_string(geo.max_positions)));
  }
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kAttention, n, spec.layer, spec.heads, spec.kv_heads, spec.head_dim,
            float_bits(spec.scale), address(cache.storage.get()), kv.dtype);
  if (pass.dry()) return placeholder(n, q.cols);
  if (first_position > kv.length) {
    return fail(op_error("attention", "position " + std::to_string(first_position) +
                                          " is past the cache's length " +
                                          std::to_string(kv.length)));
  }
  kernels::AttentionArgs args;
  EREDU_TRY(args.n_tokens, u32(n, "attention tokens"));
  args.heads = spec.heads;
  args.kv_heads = spec.kv_heads;
  args.head_dim = spec.head_dim;
  args.first_position = first_position;
  args.scale = spec.scale;
  args.f16 = kv.dtype == DType::kF16;
  args.capacity_positions = geo.max_positions;
  if (pass.capturing()) args.device_position = pass.device_step;
  EREDU_TRY(CudaTensor out, make_tensor(*stream_, n, q.cols));
  EREDU_TRY(DeviceBufferPtr scratch, stream_->allocate(kernels::attention_scratch_bytes(args)));
  EREDU_TRY_VOID(stream_->enter());
  void* keys = kv.keys[spec.layer]->data();
  void* values = kv.values[spec.layer]->data();
  EREDU_TRY_VOID(kernels::kv_store(k.data(), v.data(), keys, values, args.f16, row, first_position,
                                   args.device_position, n, stream_->handle()));
  // The cache's length covers these rows from now on (rolled back if the pass is abandoned).
  if (first_position + n > kv.length) kv.length = first_position + n;
  EREDU_TRY_VOID(kernels::attention(q.data(), keys, values, out.data(), args,
                                    static_cast<float*>(scratch->data()), stream_->handle()));
  return out;
}

Result<CudaTensor> CudaBackend::swiglu(const tensor& gate, const tensor& up) const {
  if (gate.rows != up.rows || gate.cols != up.cols) {
    return fail(op_error("swiglu", "operands differ in shape"));
  }
  EREDU_TRY_VOID(check_tensor(*stream_, "swiglu", gate));
  EREDU_TRY_VOID(check_tensor(*stream_, "swiglu", up));
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kSwiglu, gate.rows, gate.cols);
  if (pass.dry()) return placeholder(gate.rows, gate.cols);
  EREDU_TRY(CudaTensor y, make_tensor(*stream_, gate.rows, gate.cols));
  EREDU_TRY_VOID(stream_->enter());
  EREDU_TRY_VOID(
      kernels::swiglu(gate.data(), up.data(), y.data(), gate.rows * gate.cols, stream_->handle()));
  return y;
}

Result<CudaTensor> CudaBackend::add(const tensor& a, const tensor& b) const {
  if (a.rows != b.rows || a.cols != b.cols)
    return fail(op_error("add", "operands differ in shape"));
  EREDU_TRY_VOID(check_tensor(*stream_, "add", a));
  EREDU_TRY_VOID(check_tensor(*stream_, "add", b));
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kAdd, a.rows, a.cols);
  if (pass.dry()) return placeholder(a.rows, a.cols);
  EREDU_TRY(CudaTensor y, make_tensor(*stream_, a.rows, a.cols));
  EREDU_TRY_VOID(stream_->enter());
  EREDU_TRY_VOID(kernels::add(a.data(), b.data(), y.data(), a.rows * a.cols, stream_->handle()));
  return y;
}

Result<CudaTensor> CudaBackend::logits(const tensor& hidden, const weight& output) const {
  if (hidden.rows == 0) return fail(op_error("logits", "no hidden rows"));
  EREDU_TRY_VOID(check_tensor(*stream_, "logits", hidden));
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kLogits, hidden.rows, hidden.cols);
  if (pass.dry()) return linear(placeholder(1, hidden.cols), output);
  EREDU_TRY(CudaTensor last, make_tensor(*stream_, 1, hidden.cols));
  const std::size_t row_bytes = hidden.cols * sizeof(float);
  EREDU_TRY_VOID(stream_->copy(
      last.data(),
      static_cast<const std::byte*>(hidden.buffer->data()) + (hidden.rows - 1) * row_bytes,
      row_bytes));
  return linear(last, output);
}

// --- Optional operators ---

Result<CudaTensor> CudaBackend::add_bias(const tensor& x, const weight& bias) const {
  EREDU_TRY_VOID(check_vector("add_bias", bias, x.cols, "bias"));
  EREDU_TRY_VOID(check_tensor(*stream_, "add_bias", x));
  EREDU_TRY(std::uint32_t cols, u32(x.cols, "add_bias width"));
  ForwardState& pass = stream_->forward();
  pass.sign(OpKind::kBias, x.rows, x.cols, address(bias.blocks()));
  if (pass.dry()) return placeholder(x.rows, x.cols);
  EREDU_TRY(CudaTensor y, make_tensor(*stream_, x.rows, x.cols));
  EREDU_TRY_VOID(stream_->enter());
  EREDU_TRY_VOID(kernels::bias_add(x.data(), static_cast<const float*>(bias.buffer->data()),
                                   y.data(), x.rows * x.cols, cols, stream_->handle()));
  return y;
}

Result<CudaTensor> CudaBackend::head_rms_norm(const tensor& x, const weight& gain,
                                              const RmsNormSpec& spec) const {
  const std::size_t head = gain.cols();
  if (!gain.bound() || gain.shape.size() != 1 || head == 0 || x.cols % head != 0 ||
      gain.dtype != DType::kF32) {
    return fail(op_error("head_rms_norm", "gain '" + gain.name + "' of " + std::to_string(head) +
                                              " does not divide " + std::to_string(x.cols) +
                                              " features into heads"));
  }
  EREDU_TRY_VOID(check_tensor(*stream_, "head_rms_norm", x));
  // Heads are contiguous slices of a row: rows * heads rows of `head`.
  return normalize_rows(*stream_, x, gain, x.rows * (x.cols / head), head, spec.epsilon);
}

Result<CudaTensor> CudaBackend::rotary_scaled(const tensor& x, const RotarySpec& spec,
                                              std::uint32_t first_position,
                                              const weight& factors) const {
  if (!factors.bound() || factors.dtype != DType::kF32 || factors.shape.size() != 1 ||
      factors.cols() != spec.rotated_dims / 2) {
    return fail(op_error("rotary_scaled", "factors '" + factors.name + "' must hold " +
                                              std::to_string(spec.rotated_dims / 2) + " values"));
  }
  return rotate(x, spec, first_position, static_cast<const float*>(factors.buffer->data()));
}

}  // namespace eredu::cuda
