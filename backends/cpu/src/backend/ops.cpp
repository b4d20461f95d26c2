// CpuBackend's NeuralBackend operators over the dispatched kernels (kernels.hpp). Every operator
// checks its arguments' geometry and returns kInvalidArgument instead of reading out of bounds.
//
// Errors stay values: every buffer an operator allocates goes through allocate() / make_tensor(),
// and every kernel call through run_kernel(), which turn std::bad_alloc (the operator's own
// buffers, a kernel's scratch on this thread, or on a pool worker, whose exception the pool
// rethrows here) into kCapacityExhausted. The backend and its pool stay usable afterwards.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
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

Error capacity_error(const char* op, const std::string& what) {
  return Error(ErrorCode::kCapacityExhausted,
               std::string("cpu ") + op + ": cannot allocate " + what);
}

// "N bytes" for `count` elements of `size` bytes, also when N does not fit a size_t.
std::string bytes_of(std::size_t count, std::size_t size) {
  if (size != 0 && count > SIZE_MAX / size) {
    return std::to_string(count) + " x " + std::to_string(size) + " bytes";
  }
  return std::to_string(count * size) + " bytes";
}

// `count` value-initialized elements (in a Vector), or kCapacityExhausted.
template <typename T, typename Vector = std::vector<T>>
Result<Vector> allocate(const char* op, std::size_t count) {
  try {
    return Vector(count);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {  // more than a vector can ever hold
  }
  return fail(capacity_error(op, bytes_of(count, sizeof(T))));
}

// A [rows, cols] tensor whose values the caller writes, or kCapacityExhausted.
Result<CpuTensor> make_tensor(const char* op, std::size_t rows, std::size_t cols) {
  if (cols != 0 && rows > SIZE_MAX / cols) {
    return fail(capacity_error(
        op, "a tensor of " + std::to_string(rows) + " x " + std::to_string(cols) + " floats"));
  }
  EREDU_TRY(auto data, (allocate<float, ActivationValues>(op, rows * cols)));
  return CpuTensor{rows, cols, std::move(data)};
}

// Rows [first, first + n) of `x` as a new tensor, or kCapacityExhausted.
Result<CpuTensor> copy_rows(const char* op, const CpuTensor& x, std::size_t first, std::size_t n) {
  EREDU_TRY(auto y, make_tensor(op, n, x.cols));
  const auto begin = x.data.begin() + static_cast<std::ptrdiff_t>(first * x.cols);
  std::copy(begin, begin + static_cast<std::ptrdiff_t>(n * x.cols), y.data.begin());
  return y;
}

// The positions first, first + 1, ... of `n` tokens, or kCapacityExhausted.
Result<std::vector<std::int32_t>> token_positions(const char* op, std::uint32_t first,
                                                  std::size_t n) {
  EREDU_TRY(auto positions, allocate<std::int32_t>(op, n));
  for (std::size_t t = 0; t < n; ++t)
    positions[t] = static_cast<std::int32_t>(first + t);
  return positions;
}

// Runs one kernel call. Kernels are exception-neutral; the only thing they (or the pool jobs
// they submit) may throw is an allocation failure of their scratch buffers.
template <typename F>
Result<void> run_kernel(const char* op, F&& kernel) {
  try {
    kernel();
    return ok();
  } catch (const std::bad_alloc&) {
    return fail(capacity_error(op, "kernel scratch memory"));
  } catch (const std::length_error&) {
    return fail(capacity_error(op, "kernel scratch memory (length error)"));
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, std::string("cpu ") + op + ": kernel failed: " + e.what());
  } catch (...) {
    return fail(ErrorCode::kInternal, std::string("cpu ") + op + ": kernel failed");
  }
}

// `w` is a bound matrix that reads x's features.
Result<void> check_linear_weight(const CpuTensor& x, const CpuWeight& w) {
  if (!w.bound() || w.shape.size() != 2) {
    return fail(op_error("linear", "weight '" + w.name + "' is not a bound matrix"));
  }
  if (x.cols != w.cols()) {
    return fail(op_error("linear", "input has " + std::to_string(x.cols) + " features, weight '" +
                                       w.name + "' expects " + std::to_string(w.cols())));
  }
  return ok();
}

// F32 values of a bound vector weight (decoded when stored as F16 / BF16), or kCapacityExhausted.
Result<std::vector<float>> vector_values(const char* op, const CpuWeight& w) {
  EREDU_TRY(auto out, allocate<float>(op, w.cols()));
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
  EREDU_TRY(CpuTensor y, copy_rows("rotary", x, 0, x.rows));
  EREDU_TRY(auto positions, token_positions("rotary", first_position, x.rows));
  RopeParams params;
  params.n_rot = spec.rotated_dims;
  params.freq_base = spec.frequency_base;
  params.freq_scale = spec.frequency_scale;
  params.mode = spec.layout == RotaryLayout::kInterleaved ? RopeMode::kNormal : RopeMode::kNeox;
  params.freq_factors = factors;
  EREDU_TRY_VOID(run_kernel("rotary", [&] {
    kernels().rope(y.data.data(), x.rows, spec.heads, spec.head_dim, positions.data(), params,
                   pool);
  }));
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
  EREDU_TRY(CpuTensor out, make_tensor("embedding", tokens.size(), table.cols()));
  const MatrixView view = matrix_view(table);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] >= table.rows()) {
      return fail(op_error("embedding", "token id " + std::to_string(tokens[t]) +
                                            " is out of range (vocabulary " +
                                            std::to_string(table.rows()) + ")"));
    }
  }
  EREDU_TRY_VOID(run_kernel("embedding", [&] {
    for (std::size_t t = 0; t < tokens.size(); ++t)
      kernels().get_row(view, tokens[t], out.data.data() + t * out.cols);
  }));
  return out;
}

Result<CpuTensor> CpuBackend::linear(const tensor& x, const weight& w) const {
  EREDU_TRY_VOID(check_linear_weight(x, w));
  EREDU_TRY(CpuTensor y, make_tensor("linear", x.rows, w.rows()));
  EREDU_TRY_VOID(run_kernel("linear", [&] {
    kernels().matmul(matrix_view(w), x.data.data(), x.rows, y.data.data(), pool_.get());
  }));
  return y;
}

Result<std::vector<CpuTensor>> CpuBackend::linear_shared_input(
    const tensor& x, std::span<const weight* const> ws) const {
  EREDU_TRY(auto views, allocate<MatrixView>("linear", ws.size()));
  EREDU_TRY(auto outputs, allocate<float*>("linear", ws.size()));
  std::vector<CpuTensor> ys;
  try {
    ys.reserve(ws.size());
  } catch (const std::bad_alloc&) {
    return fail(capacity_error("linear", bytes_of(ws.size(), sizeof(CpuTensor))));
  }
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const weight& w = *ws[i];
    EREDU_TRY_VOID(check_linear_weight(x, w));
    EREDU_TRY(CpuTensor y, make_tensor("linear", x.rows, w.rows()));
    views[i] = matrix_view(w);
    outputs[i] = y.data.data();
    ys.push_back(std::move(y));  // reserved: cannot throw, and moving keeps the data in place
  }
  EREDU_TRY_VOID(run_kernel("linear", [&] {
    kernels().matmul_shared_input(views, x.data.data(), x.rows, outputs, pool_.get());
  }));
  return ys;
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
    EREDU_TRY(decoded, allocate<float>("rms_norm", x.cols));
    EREDU_TRY_VOID(run_kernel("rms_norm", [&] {
      kernels().get_row(MatrixView{gain.dtype, gain.data(), 1, x.cols}, 0, decoded.data());
    }));
    g = decoded.data();
  }
  EREDU_TRY(CpuTensor y, make_tensor("rms_norm", x.rows, x.cols));
  EREDU_TRY_VOID(run_kernel("rms_norm", [&] {
    kernels().rms_norm(x.data.data(), g, x.rows, x.cols, spec.epsilon, y.data.data(), pool_.get());
  }));
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
  cache.key_layout = kernels().key_layout;
  // max_positions in whole blocks of 16: at most 15 positions more than checked above.
  const std::uint64_t held = static_cast<std::uint64_t>(spec.layers) * cache.layer_bytes();
  try {
    EREDU_TRY(cache.keys, ZeroedPages::map(held, "kv cache keys"));
    EREDU_TRY(cache.values, ZeroedPages::map(held, "kv cache values"));
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted,
                "kv cache: cannot allocate " + std::to_string(2 * held) + " bytes");
  }
  return cache;
}

namespace {
// Writes rows [first, first + n) of one layer of `dst` from the F32 rows of `src`, as rows.
void store_rows(ZeroedPages& dst, const CpuKvCache& cache, std::uint32_t layer, std::uint32_t first,
                const CpuTensor& src) {
  const std::size_t row = cache.row_elements();
  std::byte* base = dst.data() + layer * cache.layer_bytes();
  for (std::size_t t = 0; t < src.rows; ++t) {
    const float* in = src.data.data() + t * row;
    std::byte* out = base + (first + t) * row * cache.element_bytes();
    if (cache.dtype == DType::kF16) {
      kernels().to_f16(in, row, reinterpret_cast<std::uint16_t*>(out));
    } else {
      std::memcpy(out, in, row * sizeof(float));
    }
  }
}

// Writes the keys of positions [first, first + n) of one layer in the cache's key layout: rows as
// above, or each element into its lane of the position's block of 16. F16 is rounded by the
// scalar encoder, which every table's to_f16 matches bit for bit (test_f16_rows.cpp), so a key
// holds the same bits in either layout.
void store_keys(ZeroedPages& dst, const CpuKvCache& cache, std::uint32_t layer, std::uint32_t first,
                const CpuTensor& src) {
  if (cache.key_layout == KeyLayout::kRows) return store_rows(dst, cache, layer, first, src);
  const std::size_t row = cache.row_elements();
  std::byte* base = dst.data() + layer * cache.layer_bytes();
  for (std::size_t t = 0; t < src.rows; ++t) {
    const float* in = src.data.data() + t * row;
    const std::size_t j = first + t;
    if (cache.dtype == DType::kF16) {
      auto* out = reinterpret_cast<std::uint16_t*>(base);
      for (std::size_t e = 0; e < row; ++e)
        out[key_offset(KeyLayout::kBlocks16, j, e, row)] = encoding::fp32_to_fp16(in[e]);
    } else {
      auto* out = reinterpret_cast<float*>(base);
      for (std::size_t e = 0; e < row; ++e)
        out[key_offset(KeyLayout::kBlocks16, j, e, row)] = in[e];
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
  // Allocate before touching the cache; the rows stored below are past the session's position
  // until the whole forward pass succeeds, so a later failure leaves nothing visible behind.
  EREDU_TRY(auto positions, token_positions("attention", first_position, n));
  EREDU_TRY(CpuTensor out, make_tensor("attention", n, q.cols));
  store_keys(cache.keys, cache, spec.layer, first_position, k);
  store_rows(cache.values, cache, spec.layer, first_position, v);
  AttentionArgs args;
  args.q = q.data.data();
  args.k = cache.keys.data() + spec.layer * cache.layer_bytes();
  args.v = cache.values.data() + spec.layer * cache.layer_bytes();
  args.kv_dtype = cache.dtype;
  args.key_layout = cache.key_layout;
  args.positions = positions.data();
  args.n_tokens = n;
  args.n_head = spec.heads;
  args.n_head_kv = spec.kv_heads;
  args.head_dim = spec.head_dim;
  args.n_kv = first_position + n;
  args.scale = spec.scale;
  args.out = out.data.data();
  EREDU_TRY_VOID(run_kernel("attention", [&] { kernels().attention(args, pool_.get()); }));
  return out;
}

Result<CpuTensor> CpuBackend::swiglu(const tensor& gate, const tensor& up) const {
  if (gate.rows != up.rows || gate.cols != up.cols) {
    return fail(op_error("swiglu", "gate and up differ in shape"));
  }
  EREDU_TRY(CpuTensor y, make_tensor("swiglu", gate.rows, gate.cols));
  EREDU_TRY_VOID(run_kernel("swiglu", [&] {
    kernels().swiglu(gate.data.data(), up.data.data(), y.data.size(), y.data.data(), pool_.get());
  }));
  return y;
}

Result<CpuTensor> CpuBackend::add(const tensor& a, const tensor& b) const {
  if (a.rows != b.rows || a.cols != b.cols)
    return fail(op_error("add", "operands differ in shape"));
  EREDU_TRY(CpuTensor y, make_tensor("add", a.rows, a.cols));
  EREDU_TRY_VOID(run_kernel("add", [&] {
    kernels().add(a.data.data(), b.data.data(), y.data.size(), y.data.data(), pool_.get());
  }));
  return y;
}

Result<CpuTensor> CpuBackend::logits(const tensor& hidden, const weight& output) const {
  if (hidden.rows == 0) return fail(op_error("logits", "no hidden rows"));
  EREDU_TRY(CpuTensor last, copy_rows("logits", hidden, hidden.rows - 1, 1));
  return linear(last, output);
}

// --- Optional operators ---

Result<CpuTensor> CpuBackend::add_bias(const tensor& x, const weight& bias) const {
  if (!bias.bound() || bias.shape.size() != 1 || bias.cols() != x.cols) {
    return fail(op_error("add_bias", "bias '" + bias.name + "' does not match " +
                                         std::to_string(x.cols) + " features"));
  }
  EREDU_TRY(const std::vector<float> b, vector_values("add_bias", bias));
  EREDU_TRY(CpuTensor y, make_tensor("add_bias", x.rows, x.cols));
  EREDU_TRY_VOID(run_kernel("add_bias", [&] {
    for (std::size_t t = 0; t < x.rows; ++t) {
      // One row of x plus the bias (the elementwise kernel, row by row: biases are short).
      kernels().add(x.data.data() + t * x.cols, b.data(), x.cols, y.data.data() + t * x.cols,
                    nullptr);
    }
  }));
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
  EREDU_TRY(const std::vector<float> g, vector_values("head_rms_norm", gain));
  EREDU_TRY(CpuTensor y, make_tensor("head_rms_norm", x.rows, x.cols));
  // Heads are contiguous slices of a row: the rows x heads slices are rows of `head` values.
  EREDU_TRY_VOID(run_kernel("head_rms_norm", [&] {
    kernels().rms_norm(x.data.data(), g.data(), x.rows * (x.cols / head), head, spec.epsilon,
                       y.data.data(), pool_.get());
  }));
  return y;
}

Result<CpuTensor> CpuBackend::rotary_scaled(const tensor& x, const RotarySpec& spec,
                                            std::uint32_t first_position,
                                            const weight& factors) const {
  if (!factors.bound() || factors.shape.size() != 1 || factors.cols() != spec.rotated_dims / 2) {
    return fail(op_error("rotary_scaled", "factors '" + factors.name + "' must hold " +
                                              std::to_string(spec.rotated_dims / 2) + " values"));
  }
  EREDU_TRY(const std::vector<float> f, vector_values("rotary_scaled", factors));
  return rotate(x, spec, first_position, f.data(), pool_.get());
}

}  // namespace eredu::cpu
