#pragma once
// Op-parity harness: runs one backend's implementation of each op against the scalar CPU
// reference (eredu::cpu::reference) on random shapes, odd sizes included, and judges
//   * NMSE = sum (a - b)^2 / sum b^2 (b the reference) against a per-op, per-dtype threshold
//     (threshold 0 means bit-identical, used for "threaded equals single-threaded");
//   * NaN/Inf parity: a NaN on either side fails; infinities must match;
//   * sentinels: every output lives inside a guarded buffer whose guard zones hold a signalling
//     NaN pattern checked after the op (out-of-bounds writes), and whose payload is pre-filled with
//     another NaN pattern (elements the op forgot to write show up as NaN);
//   * "unsupported": an op or dtype a backend does not provide returns OpStatus::kUnsupported with
//     a message and the test is skipped with it (GTEST_SKIP), never failed or silently passed.
//
// A backend plugs in by describing its ops as an OpTable (host pointers in, host pointers out; a
// device backend uploads, runs and downloads inside its functions) and instantiating the suite in
// op_parity_suite.hpp with one line.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::testing::op_parity {

using cpu::AttentionArgs;
using cpu::MatrixView;
using cpu::RopeParams;

enum class OpStatus { kOk, kUnsupported };
struct OpResult {
  OpStatus status = OpStatus::kOk;
  std::string message;  // why it is unsupported
};
inline OpResult ok() {
  return {};
}
inline OpResult unsupported(std::string why) {
  return {OpStatus::kUnsupported, std::move(why)};
}

// Per-op NMSE thresholds. Defaults follow llama.cpp's test-backend-ops (1e-7 element-wise, 5e-4
// for matrix products with quantized activations) tightened where our reference allows it.
struct Thresholds {
  double matmul_f32 = 1e-7;
  double matmul_f16 = 1e-4;        // activations may be rounded to F16 (as ggml does)
  double matmul_bf16 = 5e-4;       // activations may be rounded to BF16 (as ggml does)
  double matmul_quantized = 5e-4;  // block-quantized weights (activations may be quantized too)
  // The same products judged by the error over the magnitude of their terms (see
  // outputs_match_terms): what the matmul sweep uses for block-quantized weights.
  double matmul_quantized_terms = 1e-5;
  double rms_norm = 1e-7;
  double rope = 1e-7;
  double attention = 1e-6;
  double elementwise = 1e-7;  // swiglu, add, softmax
  double get_row = 0.0;       // decoding is exact: bit-identical to the reference decoders
};

// One backend's ops. An empty function means the op is unsupported.
struct OpTable {
  std::string name;
  std::string unavailable;  // non-empty: the backend cannot run here (why); the suite skips
  Thresholds thresholds;
  std::function<OpResult(const MatrixView& w, const float* x, std::size_t n_tokens, float* y)>
      matmul;
  std::function<OpResult(const float* x, const float* weight, std::size_t n_rows, std::size_t n,
                         float eps, float* y)>
      rms_norm;
  std::function<OpResult(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
                         const std::int32_t* positions, const RopeParams& params)>
      rope;
  std::function<OpResult(const AttentionArgs& args)> attention;
  std::function<OpResult(const float* gate, const float* up, std::size_t n, float* out)> swiglu;
  std::function<OpResult(const float* a, const float* b, std::size_t n, float* out)> add;
  std::function<OpResult(const MatrixView& table, std::size_t row, float* out)> get_row;
  std::function<OpResult(float* x, std::size_t n)> softmax;
  // Operator-level checks (a kernel table leaves them empty):
  // out[i] = row tokens[i] of `table` ([n][table.cols]; ids may repeat).
  std::function<OpResult(const MatrixView& table, const std::uint32_t* tokens, std::size_t n,
                         float* out)>
      embedding;
  // y = w . hidden[n_rows - 1]: the logits of the last of n_rows hidden rows.
  std::function<OpResult(const MatrixView& w, const float* hidden, std::size_t n_rows, float* y)>
      logits;
};

// The scalar CPU reference as an OpTable: the oracle every other table is compared with.
inline OpTable reference_table() {
  namespace ref = cpu::reference;
  OpTable t;
  t.name = "reference";
  t.thresholds = Thresholds{0, 0, 0, 0, 0, 0, 0, 0, 0};
  t.matmul = [](const MatrixView& w, const float* x, std::size_t n, float* y) {
    if (!ref::supports_dtype(w.dtype)) return unsupported(std::string(to_string(w.dtype)));
    ref::matmul(w, x, n, y);
    return ok();
  };
  t.rms_norm = [](const float* x, const float* w, std::size_t r, std::size_t n, float eps,
                  float* y) {
    ref::rms_norm(x, w, r, n, eps, y);
    return ok();
  };
  t.rope = [](float* x, std::size_t nt, std::size_t nh, std::size_t hd, const std::int32_t* p,
              const RopeParams& params) {
    ref::rope(x, nt, nh, hd, p, params);
    return ok();
  };
  t.attention = [](const AttentionArgs& a) {
    ref::attention(a);
    return ok();
  };
  t.swiglu = [](const float* g, const float* u, std::size_t n, float* o) {
    ref::swiglu(g, u, n, o);
    return ok();
  };
  t.add = [](const float* a, const float* b, std::size_t n, float* o) {
    ref::add(a, b, n, o);
    return ok();
  };
  t.get_row = [](const MatrixView& table, std::size_t row, float* out) {
    if (!ref::supports_dtype(table.dtype)) return unsupported(std::string(to_string(table.dtype)));
    ref::get_row(table, row, out);
    return ok();
  };
  t.softmax = [](float* x, std::size_t n) {
    ref::softmax(x, n);
    return ok();
  };
  t.embedding = [](const MatrixView& table, const std::uint32_t* tokens, std::size_t n,
                   float* out) {
    if (!ref::supports_dtype(table.dtype)) return unsupported(std::string(to_string(table.dtype)));
    for (std::size_t i = 0; i < n; ++i)
      ref::get_row(table, tokens[i], out + i * table.cols);
    return ok();
  };
  t.logits = [](const MatrixView& w, const float* hidden, std::size_t n_rows, float* y) {
    if (!ref::supports_dtype(w.dtype)) return unsupported(std::string(to_string(w.dtype)));
    ref::matmul(w, hidden + (n_rows - 1) * w.cols, 1, y);
    return ok();
  };
  return t;
}

// ---------------------------------------------------------------------------------------------
// Guarded output buffers.

inline constexpr std::size_t kGuardFloats = 64;
inline constexpr std::uint32_t kGuardBits = 0x7FA5A5A5U;      // a NaN payload nothing computes
inline constexpr std::uint32_t kUnwrittenBits = 0x7FC0FFEEU;  // pre-fill of the payload

class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t n) : n_(n), storage_(n + 2 * kGuardFloats) {
    for (float& f : storage_)
      f = std::bit_cast<float>(kGuardBits);
    for (std::size_t i = 0; i < n_; ++i)
      data()[i] = std::bit_cast<float>(kUnwrittenBits);
  }
  // Copies `values` into the payload (for in-place ops).
  void assign(const std::vector<float>& values) {
    std::memcpy(data(), values.data(), n_ * sizeof(float));
  }
  float* data() { return storage_.data() + kGuardFloats; }
  const float* data() const { return storage_.data() + kGuardFloats; }
  std::size_t size() const { return n_; }
  std::vector<float> values() const { return {data(), data() + n_}; }

  // Index (relative to the payload; negative before it) of the first damaged guard float.
  ::testing::AssertionResult guards_intact() const {
    for (std::size_t i = 0; i < storage_.size(); ++i) {
      if (i >= kGuardFloats && i < kGuardFloats + n_) continue;
      if (std::bit_cast<std::uint32_t>(storage_[i]) != kGuardBits) {
        return ::testing::AssertionFailure()
               << "out-of-bounds write at payload offset "
               << static_cast<long long>(i) - static_cast<long long>(kGuardFloats)
               << " (payload size " << n_ << ")";
      }
    }
    return ::testing::AssertionSuccess();
  }

 private:
  std::size_t n_;
  std::vector<float> storage_;
};

namespace detail {

// The checks both comparisons share: unwritten elements, NaN on either side, infinities that must
// match, bit-identity when threshold == 0; then sum (a - b)^2 over sum d^2, where d is the
// reference value itself, or magnitude[i] when `magnitude` is given (see outputs_match_terms).
inline ::testing::AssertionResult outputs_match_over(const std::string& what, const float* actual,
                                                     const float* expected, std::size_t n,
                                                     const double* magnitude, double threshold) {
  double err = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const float a = actual[i];
    const float b = expected[i];
    if (std::bit_cast<std::uint32_t>(a) == kUnwrittenBits) {
      return ::testing::AssertionFailure() << what << ": element " << i << " was never written";
    }
    if (std::isnan(a) || std::isnan(b)) {
      return ::testing::AssertionFailure()
             << what << ": NaN at element " << i << " (actual " << a << ", reference " << b << ")";
    }
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b) {
        return ::testing::AssertionFailure() << what << ": infinity mismatch at element " << i
                                             << " (actual " << a << ", reference " << b << ")";
      }
      continue;
    }
    if (threshold == 0.0 && std::bit_cast<std::uint32_t>(a) != std::bit_cast<std::uint32_t>(b)) {
      return ::testing::AssertionFailure()
             << what << ": not bit-identical at element " << i << " (" << a << " vs " << b << ")";
    }
    const double d = static_cast<double>(a) - static_cast<double>(b);
    const double scale = magnitude != nullptr ? magnitude[i] : static_cast<double>(b);
    err += d * d;
    norm += scale * scale;
  }
  const double ratio = norm > 0.0 ? err / norm : err;
  const char* metric = magnitude != nullptr ? "squared error over the terms' magnitudes" : "NMSE";
  if (ratio > threshold) {
    return ::testing::AssertionFailure()
           << what << ": " << metric << " " << ratio << " exceeds threshold " << threshold;
  }
  return ::testing::AssertionSuccess() << what << ": " << metric << " " << ratio;
}

}  // namespace detail

// Compares `actual` with the reference `expected` by NMSE. threshold == 0: bit-identical.
inline ::testing::AssertionResult outputs_match(const std::string& what, const float* actual,
                                                const float* expected, std::size_t n,
                                                double threshold) {
  return detail::outputs_match_over(what, actual, expected, n, nullptr, threshold);
}

// Compares `actual` with `expected` by the squared error over the squared magnitudes of each
// output's terms: sum (a - b)^2 / sum m^2, where m[k] = sum_i |w_ki x_i|. A product with quantized
// activations errs in proportion to m, not to |sum_i w_ki x_i|: an output whose terms cancel (one
// sweep seed's single Q3_K block dots to -0.25 where its terms' magnitudes sum to about 20) has a
// relative error of 7% however exact the kernel, so plain NMSE over a handful of outputs judges
// the seed, not the kernel. Over m, a wrong scale of one 16-element group still errs by ~1e-3.
inline ::testing::AssertionResult outputs_match_terms(const std::string& what, const float* actual,
                                                      const float* expected,
                                                      const std::vector<double>& magnitude,
                                                      double threshold) {
  return detail::outputs_match_over(what, actual, expected, magnitude.size(), magnitude.data(),
                                    threshold);
}

// ---------------------------------------------------------------------------------------------
// Random inputs.

inline std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float lo = -1.0F,
                                        float hi = 1.0F) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v)
    f = dist(rng);
  return v;
}

// Byte offsets of the F16 scale fields in one block of `dtype` (the rest of a block is codes, for
// which any bit pattern is valid).
inline std::vector<std::size_t> half_field_offsets(DType dtype) {
  namespace enc = eredu::encoding;
  switch (dtype) {
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ8_0:
    case DType::kIQ4_NL:
    case DType::kIQ4_XS:
      return {0};
    case DType::kQ4_1:
    case DType::kQ5_1:
    case DType::kQ4_K:
    case DType::kQ5_K:
      return {0, 2};
    case DType::kQ2_K:
      return {offsetof(enc::BlockQ2_K, d), offsetof(enc::BlockQ2_K, dmin)};
    case DType::kQ3_K:
      return {offsetof(enc::BlockQ3_K, d)};
    case DType::kQ6_K:
      return {offsetof(enc::BlockQ6_K, d)};
    default:
      return {};
  }
}

// A weight's row groups as a kernel table packs them at load (KernelTable::pack_row_groups), in
// storage aligned as the packing needs; `data` is null where the table reads the encoding as
// stored.
struct PackedRowGroups {
  std::vector<std::byte> storage;
  const void* data = nullptr;
};
inline PackedRowGroups pack_row_groups(const cpu::KernelTable& k, DType dtype,
                                       const std::vector<std::byte>& rows, std::size_t n_rows,
                                       std::size_t cols) {
  PackedRowGroups g;
  const std::size_t bytes = k.row_group_bytes(dtype, n_rows, cols);
  if (bytes == 0) return g;
  g.storage.resize(bytes + 64);
  void* at = g.storage.data();
  std::size_t space = g.storage.size();
  void* aligned = std::align(64, bytes, at, space);
  k.pack_row_groups(dtype, rows.data(), n_rows, cols, aligned);
  g.data = aligned;
  return g;
}

// A random packed [rows, cols] matrix: float types from uniform [-1, 1]; block types from random
// code bytes with small random F16 scales, so every code path of the decoders is exercised.
inline std::vector<std::byte> random_packed_matrix(std::mt19937& rng, DType dtype, std::size_t rows,
                                                   std::size_t cols) {
  const std::size_t row_bytes = cpu::packed_row_bytes(dtype, cols);
  std::vector<std::byte> bytes(rows * row_bytes);
  if (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) {
    const std::vector<float> v = random_floats(rng, rows * cols);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (dtype == DType::kF32) {
        std::memcpy(bytes.data() + 4 * i, &v[i], 4);
      } else {
        const std::uint16_t h =
            dtype == DType::kF16 ? encoding::fp32_to_fp16(v[i]) : encoding::fp32_to_bf16(v[i]);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
    }
    return bytes;
  }
  std::uniform_int_distribution<int> byte_dist(0, 255);
  for (std::byte& b : bytes)
    b = static_cast<std::byte>(byte_dist(rng));
  const DTypeInfo& info = dtype_info(dtype);
  std::uniform_real_distribution<float> scale_dist(0.002F, 0.02F);
  std::bernoulli_distribution negative(0.25);
  for (std::size_t block = 0; block < bytes.size() / info.block_bytes; ++block) {
    for (std::size_t offset : half_field_offsets(dtype)) {
      const float s = scale_dist(rng) * (negative(rng) ? -1.0F : 1.0F);
      const std::uint16_t h = encoding::fp32_to_fp16(s);
      std::memcpy(bytes.data() + block * info.block_bytes + offset, &h, 2);
    }
  }
  return bytes;
}

// Every weight encoding the matmul parity sweep covers.
inline const std::vector<DType>& matmul_dtypes() {
  static const std::vector<DType> dtypes = {
      DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ8_0,   DType::kQ4_0,
      DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ2_K,   DType::kQ3_K,
      DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS};
  return dtypes;
}

// The float64 product of the reference decoding of w's rows with `tokens` activation rows
// ([tokens][w.cols]), values[t * w.rows + r], and each output's sum of |w_ri x_ti| (the magnitude
// outputs_match_terms judges against).
struct Float64Product {
  std::vector<float> values;
  std::vector<double> magnitude;
};
inline Float64Product float64_product(const MatrixView& w, const float* x, std::size_t tokens) {
  Float64Product p{std::vector<float>(tokens * w.rows), std::vector<double>(tokens * w.rows)};
  std::vector<float> row(w.cols);
  const std::size_t row_bytes = cpu::packed_row_bytes(w.dtype, w.cols);
  for (std::size_t r = 0; r < w.rows; ++r) {
    cpu::reference::dequantize_row(w.dtype, static_cast<const std::byte*>(w.data) + r * row_bytes,
                                   row.data(), w.cols);
    for (std::size_t t = 0; t < tokens; ++t) {
      double sum = 0.0, m = 0.0;
      for (std::size_t k = 0; k < w.cols; ++k) {
        const double term = static_cast<double>(row[k]) * x[t * w.cols + k];
        sum += term;
        m += std::abs(term);
      }
      p.values[t * w.rows + r] = static_cast<float>(sum);
      p.magnitude[t * w.rows + r] = m;
    }
  }
  return p;
}

inline double matmul_threshold(const Thresholds& t, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return t.matmul_f32;
    case DType::kF16:
      return t.matmul_f16;
    case DType::kBF16:
      return t.matmul_bf16;
    default:
      return t.matmul_quantized;
  }
}

// Skips the current test with the backend's message when an op reports "unsupported".
#define EREDU_OP_PARITY_RUN(table_name, result_expr)                                    \
  do {                                                                                  \
    const ::eredu::testing::op_parity::OpResult eredu_op_result_ = (result_expr);       \
    if (eredu_op_result_.status == ::eredu::testing::op_parity::OpStatus::kUnsupported) \
      GTEST_SKIP() << (table_name) << ": unsupported: " << eredu_op_result_.message;    \
  } while (false)

}  // namespace eredu::testing::op_parity
