#pragma once
// Scalar reference kernels: the numerical oracle for every backend.
//
// Plain loops, one thread, float64 accumulation, no SIMD and no cleverness, so that each can be
// read against its formula. Optimized kernels (kernels.hpp) and other backends are tested against
// these with NMSE thresholds (tests/support/op_parity.hpp). Preconditions are those of the
// argument types in kernel_types.hpp; `y`/`out` never alias inputs unless stated.

#include <cstddef>
#include <cstdint>

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::cpu::reference {

// Encodings the reference matmul and row lookup can read: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q2_K..Q6_K, IQ4_NL, IQ4_XS.
[[nodiscard]] bool supports_dtype(DType dtype) noexcept;

// Decodes `n` elements (a multiple of the block size) of a packed row into out.
void dequantize_row(DType dtype, const void* row, float* out, std::size_t n);

// y[t][o] = sum_i W[o][i] * x[t][i] for t < n_tokens; x is [n_tokens][w.cols], y
// [n_tokens][w.rows].
void matmul(const MatrixView& w, const float* x, std::size_t n_tokens, float* y);

// Per row r < n_rows of n elements: y = x / sqrt(mean(x^2) + eps) * weight (weight may be null:
// no scaling). y may equal x.
void rms_norm(const float* x, const float* weight, std::size_t n_rows, std::size_t n, float eps,
              float* y);

// Rotates x [n_tokens][n_heads][head_dim] in place; token t is at position positions[t].
void rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
          const std::int32_t* positions, const RopeParams& params);

void attention(const AttentionArgs& args);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)). out may equal gate or up.
void swiglu(const float* gate, const float* up, std::size_t n, float* out);

// out[i] = a[i] + b[i]. out may equal a or b.
void add(const float* a, const float* b, std::size_t n, float* out);

// out = row `row` of `table`, decoded (embedding lookup).
void get_row(const MatrixView& table, std::size_t row, float* out);

// In place: x = exp(x - max) / sum.
void softmax(float* x, std::size_t n);

}  // namespace eredu::cpu::reference
