#pragma once
// The launchers of CudaBackend's kernels, one op family per .cu file beside this header
// (templated kernel -> launcher -> this typed entry). Every pointer is device memory; every
// launch is asynchronous on `stream` and returns the launch status (cudaGetLastError) as an
// eredu::Error. Shapes are checked by the operators (src/backend/ops.cpp) before they get here;
// a launcher checks only what its kernel assumes beyond them (alignment, block multiples).

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "eredu/backends/cuda/dot/act_q8_1.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cuda::kernels {

// Whether embed and the matrix products have a kernel for weights of `dtype`: F32, F16, BF16,
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K..Q6_K, IQ4_NL, IQ4_XS.
[[nodiscard]] bool supports_weight_dtype(DType dtype) noexcept;
// Whether the decode matrix-vector product of `dtype` goes through q8_1 activations and dp4a
// (every quantized format) rather than float activations (F32, F16, BF16).
[[nodiscard]] bool uses_quantized_activations(DType dtype) noexcept;

// embed.cu: out[t][c] = decode(table row ids[t], element c), for t < n_tokens, c < cols.
[[nodiscard]] Result<void> embed(DType dtype, const std::uint8_t* table, std::uint64_t row_bytes,
                                 std::uint32_t cols, const std::uint32_t* ids,
                                 std::uint32_t n_tokens, float* out, cudaStream_t stream);

// norm.cu: y = x * rsqrt(mean(x^2) + eps) * gain over `rows` rows of `cols` values (gain has
// `cols` values; the rows of a per-head norm are the heads).
[[nodiscard]] Result<void> rms_norm(const float* x, const float* gain, float* y, std::uint32_t rows,
                                    std::uint32_t cols, float eps, cudaStream_t stream);

// rope.cu: rotary embedding of [n_tokens][heads][head_dim] x into y (y may not alias x), pairs
// (2i, 2i+1) or (i, i + n_pairs) (`neox`) rotated by angle
//   (first_position + t) * scale * base^(-2i / rotated_dims) / factors[i]
// computed in float64 as the CPU reference does; factors may be null (1). Dimensions past
// 2 * n_pairs are copied. With `device_position` set, first_position is read from there (a
// captured graph's step buffer) instead.
struct RopeArgs {
  std::uint32_t n_tokens = 0;
  std::uint32_t heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t n_pairs = 0;
  std::uint32_t first_position = 0;
  const std::uint32_t* device_position = nullptr;
  float base = 10000.0F;
  float scale = 1.0F;
  bool neox = false;
};
[[nodiscard]] Result<void> rope(const float* x, float* y, const float* factors,
                                const RopeArgs& args, cudaStream_t stream);

// elementwise.cu: y = a + b; y = silu(gate) * up; y[r][c] = x[r][c] + bias[c].
[[nodiscard]] Result<void> add(const float* a, const float* b, float* y, std::uint64_t n,
                               cudaStream_t stream);
[[nodiscard]] Result<void> swiglu(const float* gate, const float* up, float* y, std::uint64_t n,
                                  cudaStream_t stream);
[[nodiscard]] Result<void> bias_add(const float* x, const float* bias, float* y, std::uint64_t n,
                                    std::uint32_t cols, cudaStream_t stream);

// attention.cu: KV rows of `n` tokens stored at position `first` (or *device_position when
// given), F32 as is or F16 (round to nearest even, as the CPU's fp32_to_fp16), into
// [capacity][row] caches.
[[nodiscard]] Result<void> kv_store(const float* k, const float* v, void* keys, void* values,
                                    bool f16, std::uint64_t row, std::uint64_t first,
                                    const std::uint32_t* device_position, std::uint64_t n,
                                    cudaStream_t stream);

// attention.cu: causal grouped-query attention of n_tokens queries [n_tokens][heads][head_dim]
// at positions first_position.. over the cache (positions 0 .. first_position + t visible to
// token t), out [n_tokens][heads][head_dim]. Query head h reads KV head h / (heads / kv_heads).
struct AttentionArgs {
  std::uint32_t n_tokens = 0;
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t first_position = 0;
  float scale = 1.0F;
  bool f16 = true;
  // The positions the cache holds: a one-token pass (a decode step) cuts them into the same chunks
  // whether captured or not (chunks past the visible positions exit at once).
  std::uint32_t capacity_positions = 0;
  // A captured graph: the first position is read from here.
  const std::uint32_t* device_position = nullptr;
};
// `scratch` holds the split-K partial results: at least attention_scratch_bytes(args).
[[nodiscard]] std::uint64_t attention_scratch_bytes(const AttentionArgs& args) noexcept;
[[nodiscard]] Result<void> attention(const float* q, const void* keys, const void* values,
                                     float* out, const AttentionArgs& args, float* scratch,
                                     cudaStream_t stream);

// matvec.cu: quantizes `rows` rows of `cols` floats (cols a multiple of 32) into q8_1 blocks,
// cols / 32 per row.
[[nodiscard]] Result<void> quantize_q8_1(const float* x, dot::BlockQ8_1* y, std::uint32_t rows,
                                         std::uint32_t cols, cudaStream_t stream);

// Linear layers: y[t][o] = sum_i W[o][i] * x[t][i] for o < rows, t < n_tokens, W packed rows of
// `row_bytes`.
struct LinearArgs {
  DType dtype = DType::kF32;
  const std::uint8_t* w = nullptr;
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;
  std::uint64_t row_bytes = 0;
  std::uint32_t n_tokens = 0;
};
// The most tokens the float matrix-vector kernel takes; larger batches of float weights go to
// matmul.
inline constexpr std::uint32_t kMatvecMaxTokens = 8;
// matvec.cu: one warp per weight row and group of up to 8 tokens (grid.y over the groups).
// Quantized formats read `act` (q8_1 of x, from quantize_q8_1; any number of tokens: decode and
// prefill alike, as the CPU backend quantizes activations for every batch), the float formats
// read `x` (at most kMatvecMaxTokens tokens).
[[nodiscard]] Result<void> matvec(const LinearArgs& args, const float* x, const dot::BlockQ8_1* act,
                                  float* y, cudaStream_t stream);
// matmul.cu, prefill: 64 x 64 output tiles, weights decoded to floats in shared memory.
[[nodiscard]] Result<void> matmul(const LinearArgs& args, const float* x, float* y,
                                  cudaStream_t stream);

// matmul_cublas.cu, prefill with F16 weights: the activations are rounded to F16 into `x16`
// (n_tokens * cols halves; round to nearest even) and multiplied by cuBLAS (cublasGemmEx, F16
// inputs, F32 accumulation and output) on the tensor cores -- llama.cpp's CUDA path does the same.
[[nodiscard]] Result<void> matmul_f16_cublas(cublasHandle_t handle, const LinearArgs& args,
                                             const float* x, void* x16, float* y,
                                             cudaStream_t stream);

}  // namespace eredu::cuda::kernels
