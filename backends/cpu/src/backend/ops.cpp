// CpuBackend's NeuralBackend operators over the dispatched kernels (kernels.hpp). Every operator
// checks its arguments' geometry and returns kInvalidArgument instead of reading out of bounds.
#include <cstring>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace eredu::cpu {
namespace {

Error op_error(const char* op, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, std::string("cpu ") + op + ": " + message);
}

MatrixView view_of(const CpuWeight& w) {
  return MatrixView{w.dtype, w.data(), w.rows(), w.cols()};
}

CpuTensor make_tensor(std::size_t rows, std::size_t cols) {
  return CpuTensor{rows, cols, std::vector<float>(rows * cols)};
}

// F32 values of a bound vector weight (decoded when stored as F16 / BF16).
std::vector<float> vector_values(const CpuWeight& w) {
  std::vector<float> out(w.cols());
  kernels().get_row(MatrixView{w.dtype, w.data(), 1, w.cols()}, 0, out.data());
  return out;
}

// Rotary embedding of x's heads, angles divided by `factors` (rotated_dims / 2) when given.
Result<CpuTensor> rotate(const CpuTensor& x, const RotarySpec& spec, std::uint32_t first_position,
                         const float* factors, ThreadPool* pool) {
  EREDU_TRY_VOID(spec.validate());
  if (x.cols != static_cast<std::size_t>(spec.heads) * spec.head_dim) {
    return fail(op_error(
        "rotary", "input has " + std::to_string(x.cols) + " features, expected heads * head_dim"));
  }
  CpuTensor y = x;
  std::vector<std::int32_t> positions(x.rows);
  for (std::size_t t = 0; t < x.rows; ++t)
    positions[t] = static_cast<std::int32_t>(first_position + t);
  RopeParams params;
  params.n_rot = spec.rotated_dims;
  params.freq_base = spec.frequency_base;
  params.freq_scale = spec.frequency_scale;
  params.mode = spec.layout == RotaryLayout::kInterleaved ? RopeMode::kNormal : RopeMode::kNeox;
  params.freq_factors = factors;
  kernels().rope(y.data.data(), x.rows, spec.heads, spec.head_dim, positions.data(), params, pool);
  return y;
}

}  // namespace

CpuBackend::CpuBackend(CpuBackendOptions options) {
  std::size_t threads = options.threads;
  if (threads == 0) threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  pool_ = std::make_shared<ThreadPool>(threads);
}

Result<CpuTensor> CpuBackend::embedding(const weight& table,
                                        std::span<const std::uint32_t> tokens) const {
  if (!table.bound() || table.shape.size() != 2) {
    return fail(op_error("embedding", "table '" + table.name + "' is not a bound matrix"));
  }
  CpuTensor out = make_tensor(tokens.size(), table.cols());
  const MatrixView view = view_of(table);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] >= table.rows()) {
      return fail(op_error("embedding", "token id " + std::to_string(tokens[t]) +
                                            " is out of range (vocabulary " +
                                            std::to_string(table.rows()) + ")"));
    }
    kernels().get_row(view, tokens[t], out.data.data() + t * out.cols);
  }
  return out;
}

Result<CpuTensor> CpuBackend::linear(const tensor& x, const weight& w) const {
  if (!w.bound() || w.shape.size() != 2) {
    return fail(op_error("linear", "weight '" + w.name + "' is not a bound matrix"));
  }
  if (x.cols != w.cols()) {
    return fail(op_error("linear", "input has " + std::to_string(x.cols) + " features, weight '" +
                                       w.name + "' expects " + std::to_string(w.cols())));
  }
  CpuTensor y = make_tensor(x.rows, w.rows());
  kernels().matmul(view_of(w), x.data.data(), x.rows, y.data.data(), pool_.get());
  return y;
}

Result<CpuTensor> CpuBackend::rms_norm(const tensor& x, const weight& gain,
                                       const RmsNormSpec& spec) const {
  if (!gain.bound() || gain.shape.size() != 1 || gain.cols() != x.cols) {
    return fail(op_error("rms_norm", "gain '" + gain.name + "' does not match " +
                                         std::to_string(x.cols) + " features"));
  }
  const float* g = static_cast<const float*>(gain.data());
  std::vector<float> decoded;
  if (gain.dtype != DType::kF32) {  // F16 / BF16 gains: decode the (small) vector once per call
    decoded.resize(x.cols);
    kernels().get_row(MatrixView{gain.dtype, gain.data(), 1, x.cols}, 0, decoded.data());
    g = decoded.data();
  }
  CpuTensor y = make_tensor(x.rows, x.cols);
  kernels().rms_norm(x.data.data(), g, x.rows, x.cols, spec.epsilon, y.data.data(), pool_.get());
  return y;
}

Result<CpuTensor> CpuBackend::rotary(const tensor& x, const RotarySpec& spec,
                                     std::uint32_t first_position) const {
  return rotate(x, spec, first_position, nullptr, pool_.get());
}

Result<CpuKvCache> CpuBackend::create_kv_cache(const KvCacheSpec& spec) const {
  return create_kv_cache_of(spec, KvCacheType::kF32);
}

Result<CpuKvCache> CpuBackend::create_kv_cache_of(const KvCacheSpec& spec, KvCacheType type) const {
  EREDU_TRY(auto elements, spec.elements_per_tensor());
  const std::uint64_t bytes = elements * (type == KvCacheType::kF16 ? 2 : 4);
  if (bytes / (type == KvCacheType::kF16 ? 2 : 4) != elements || bytes > (1ull << 40)) {
    return fail(ErrorCode::kLimitExceeded,
                "kv cache of " + std::to_string(elements) + " elements per tensor is too large");
  }
  CpuKvCache cache;
  cache.spec = spec;
  cache.dtype = type == KvCacheType::kF16 ? DType::kF16 : DType::kF32;
  try {
    cache.keys.resize(bytes);
    cache.values.resize(bytes);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted,
                "kv cache: cannot allocate " + std::to_string(2 * bytes) + " bytes");
  }
  return cache;
}

namespace {
// Writes rows [first, first + n) of one layer of `dst` from the F32 rows of `src`.
void store_rows(std::vector<std::byte>& dst, const CpuKvCache& cache, std::uint32_t layer,
                std::uint32_t first, const CpuTensor& src) {
  const std::size_t row = cache.row_elements();
  std::byte* base = dst.data() + layer * cache.layer_bytes();
  for (std::size_t t = 0; t < src.rows; ++t) {
    const float* in = src.data.data() + t * row;
    std::byte* out = base + (first + t) * row * cache.element_bytes();
    if (cache.dtype == DType::kF16) {
      auto* h = reinterpret_cast<std::uint16_t*>(out);
      for (std::size_t i = 0; i < row; ++i)
        h[i] = encoding::fp32_to_fp16(in[i]);
    } else {
      std::memcpy(out, in, row * sizeof(float));
    }
  }
}
}  // namespace

Result<CpuTensor> CpuBackend::attention(const tensor& q, const tensor& k, const tensor& v,
                                        kv_cache& cache, const AttentionSpec& spec,
                                        std::uint32_t first_position) const {
  EREDU_TRY_VOID(spec.validate());
  const KvCacheSpec& geo = cache.spec;
  if (spec.layer >= geo.layers || spec.kv_heads != geo.kv_heads || spec.head_dim != geo.head_dim) {
    return fail(op_error("attention", "spec does not match the cache geometry"));
  }
  const std::size_t n = q.rows;
  if (n == 0 || k.rows != n || v.rows != n ||
      q.cols != static_cast<std::size_t>(spec.heads) * spec.head_dim ||
      k.cols != cache.row_elements() || v.cols != cache.row_elements()) {
    return fail(op_error("attention", "q/k/v shapes do not match the spec"));
  }
  if (static_cast<std::uint64_t>(first_position) + n > geo.max_positions) {
    return fail(Error(ErrorCode::kLimitExceeded,
                      "cpu attention: positions up to " + std::to_string(first_position + n) +
                          " exceed the kv cache's " + std::to_string(geo.max_positions)));
  }
  store_rows(cache.keys, cache, spec.layer, first_position, k);
  store_rows(cache.values, cache, spec.layer, first_position, v);
  std::vector<std::int32_t> positions(n);
  for (std::size_t t = 0; t < n; ++t)
    positions[t] = static_cast<std::int32_t>(first_position + t);
  CpuTensor out = make_tensor(n, q.cols);
  AttentionArgs args;
  args.q = q.data.data();
  args.k = cache.keys.data() + spec.layer * cache.layer_bytes();
  args.v = cache.values.data() + spec.layer * cache.layer_bytes();
  args.kv_dtype = cache.dtype;
  args.positions = positions.data();
  args.n_tokens = n;
  args.n_head = spec.heads;
  args.n_head_kv = spec.kv_heads;
  args.head_dim = spec.head_dim;
  args.n_kv = first_position + n;
  args.scale = spec.scale;
  args.out = out.data.data();
  kernels().attention(args, pool_.get());
  return out;
}

Result<CpuTensor> CpuBackend::swiglu(const tensor& gate, const tensor& up) const {
  if (gate.rows != up.rows || gate.cols != up.cols) {
    return fail(op_error("swiglu", "gate and up differ in shape"));
  }
  CpuTensor y = make_tensor(gate.rows, gate.cols);
  kernels().swiglu(gate.data.data(), up.data.data(), y.data.size(), y.data.data(), pool_.get());
  return y;
}

Result<CpuTensor> CpuBackend::add(const tensor& a, const tensor& b) const {
  if (a.rows != b.rows || a.cols != b.cols)
    return fail(op_error("add", "operands differ in shape"));
  CpuTensor y = make_tensor(a.rows, a.cols);
  kernels().add(a.data.data(), b.data.data(), y.data.size(), y.data.data(), pool_.get());
  return y;
}

Result<CpuTensor> CpuBackend::logits(const tensor& hidden, const weight& output) const {
  if (hidden.rows == 0) return fail(op_error("logits", "no hidden rows"));
  CpuTensor last{1, hidden.cols,
                 std::vector<float>(hidden.data.end() - static_cast<std::ptrdiff_t>(hidden.cols),
                                    hidden.data.end())};
  return linear(last, output);
}

// --- Optional operators ---

Result<CpuTensor> CpuBackend::add_bias(const tensor& x, const weight& bias) const {
  if (!bias.bound() || bias.shape.size() != 1 || bias.cols() != x.cols) {
    return fail(op_error("add_bias", "bias '" + bias.name + "' does not match " +
                                         std::to_string(x.cols) + " features"));
  }
  const std::vector<float> b = vector_values(bias);
  CpuTensor y = make_tensor(x.rows, x.cols);
  for (std::size_t t = 0; t < x.rows; ++t) {
    // One row of x plus the bias (the elementwise kernel, row by row: biases are short).
    kernels().add(x.data.data() + t * x.cols, b.data(), x.cols, y.data.data() + t * x.cols,
                  nullptr);
  }
  return y;
}

Result<CpuTensor> CpuBackend::head_rms_norm(const tensor& x, const weight& gain,
                                            const RmsNormSpec& spec) const {
  const std::size_t head = gain.cols();
  if (!gain.bound() || gain.shape.size() != 1 || head == 0 || x.cols % head != 0) {
    return fail(op_error("head_rms_norm", "gain '" + gain.name + "' of " + std::to_string(head) +
                                              " does not divide " + std::to_string(x.cols) +
                                              " features into heads"));
  }
  const std::vector<float> g = vector_values(gain);
  CpuTensor y = make_tensor(x.rows, x.cols);
  // Heads are contiguous slices of a row: the rows x heads slices are rows of `head` values.
  kernels().rms_norm(x.data.data(), g.data(), x.rows * (x.cols / head), head, spec.epsilon,
                     y.data.data(), pool_.get());
  return y;
}

Result<CpuTensor> CpuBackend::rotary_scaled(const tensor& x, const RotarySpec& spec,
                                            std::uint32_t first_position,
                                            const weight& factors) const {
  if (!factors.bound() || factors.shape.size() != 1 || factors.cols() != spec.rotated_dims / 2) {
    return fail(op_error("rotary_scaled", "factors '" + factors.name + "' must hold " +
                                              std::to_string(spec.rotated_dims / 2) + " values"));
  }
  const std::vector<float> f = vector_values(factors);
  return rotate(x, spec, first_position, f.data(), pool_.get());
}

}  // namespace eredu::cpu
