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
#include "eredu/checkpoint/encoding/blocks.hpp"
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

// --- Integer dot products with 8-bit activations (the definitions the SIMD kernels match) ---
//
// The activation row is quantized once to 8-bit blocks: d = max|x| / 127 and
// q = round-half-even(x * (127 / max|x|)) (all zero when max|x| is 0), so |q| <= 127. Weight rows
// keep their codes; each dot product is an exact integer sum per block, and only the scaling is in
// float. Per block b, with D = (weight scale) * (activation scale):
//   Q4_K, Q5_K, Q2_K   acc = fma(D, float(isum), acc); acc = fma(-Dmin, float(msum), acc)
//                      isum = sum_s scale_s * (codes_s . q_s), msum = sum_s min_s * bsum_s,
//                      Dmin = dmin * activation scale
//   Q6_K, Q3_K          acc = fma(D, float(isum - msum), acc), the code offset (32, 4) folded
//                      into msum = sum_s offset * scale_s * bsum_s
//   IQ4_XS              acc = fma(D, float(isum), acc), codes from the IQ4_NL codebook
//   IQ4_NL              acc = fma(D, float(codes . q), acc) per block of 32 (Q8_0 activations)
// starting from acc = 0 and taking the blocks in order. The integer sums fit int32 for any code
// and scale bytes. The fused multiply-adds make the result independent of compiler contraction.

// q8_K activation blocks for n (a multiple of 256) floats.
void quantize_row_q8_K(const float* x, encoding::BlockQ8_K* y, std::size_t n);

// Q8_0 activation blocks for n (a multiple of 32) floats; the scale is rounded to F16 (ggml's
// block_q8_0), so the block dot uses exactly the stored scale.
void quantize_row_q8_0(const float* x, encoding::BlockQ8_0* y, std::size_t n);

// Whether dot_q8_K reads this encoding: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS.
[[nodiscard]] bool has_dot_q8_K(DType dtype) noexcept;

// The dot product of one packed weight row of n_super 256-blocks with q8_K activation blocks.
[[nodiscard]] float dot_q8_K(DType dtype, const void* w_row, const encoding::BlockQ8_K* x,
                             std::size_t n_super);

// The dot product of one IQ4_NL row of n_blocks 32-blocks with Q8_0 activation blocks.
[[nodiscard]] float dot_iq4_nl_q8_0(const void* w_row, const encoding::BlockQ8_0* x,
                                    std::size_t n_blocks);

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
