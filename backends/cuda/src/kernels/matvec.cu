// Matrix-vector products for decode: one warp per weight row. Quantized weights meet q8_1
// activation blocks through the dot building blocks (dot/block_dot.hpp: dp4a over each 32-element
// sub-block, lanes over the sub-blocks of the row, so a warp reads 32 consecutive sub-blocks at a
// time); float weights (F32, F16, BF16) meet float activations. Each warp keeps the partial sums of
// up to 8 tokens, so a small batch reads each weight row once.
#include <cuda_fp16.h>

#include <cstdint>

#include "../backend/stream.hpp"
#include "dispatch.cuh"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr unsigned kWarps = 4;  // rows per block

// Sub-blocks (quantized) or 16-byte groups (F16 / BF16) a lane loads before its first product:
// a warp then has that many of its row's loads in flight at once instead of one per round trip to
// memory. A decode step's matrices are small (512 to 8192 rows, one warp each), so few warps share
// an SM and each one's latency, not the bandwidth, would bound a sequential loop.
constexpr int kQuantizedUnroll = 4;
constexpr int kHalfUnroll = 8;

template <typename T, int NT>
__global__ void matvec_quantized_kernel(const std::uint8_t* __restrict__ w, std::uint32_t rows,
                                        std::uint32_t n_sub, std::uint64_t row_bytes,
                                        const dot::BlockQ8_1* __restrict__ act,
                                        std::uint32_t n_tokens, float* __restrict__ y) {
  constexpr int kSubPerBlock = T::Format::kBlockElements / dot::kQK8_1;
  const std::uint32_t r = blockIdx.x * kWarps + threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t t0 = blockIdx.y * NT;
  if (r >= rows) return;
  const std::uint8_t* row = w + r * row_bytes;
  float sum[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t)
    sum[t] = 0.0F;
  for (std::uint32_t s0 = lane; s0 < n_sub; s0 += 32 * kQuantizedUnroll) {
    // The weights' codes and scales of kQuantizedUnroll sub-blocks first, for every token of the
    // group; then the products, in the order a one-at-a-time loop adds them.
    dot::SubBlockWeights<T> weights[kQuantizedUnroll];
#pragma unroll
    for (int u = 0; u < kQuantizedUnroll; ++u) {
      const std::uint32_t s = s0 + 32 * u;
      if (s < n_sub) {
        weights[u] = dot::load_sub_block<T>(row + (s / kSubPerBlock) * T::Format::kBlockBytes,
                                            static_cast<int>(s % kSubPerBlock));
      }
    }
#pragma unroll
    for (int u = 0; u < kQuantizedUnroll; ++u) {
      const std::uint32_t s = s0 + 32 * u;
      if (s >= n_sub) break;
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t0 + t < n_tokens) {
          sum[t] += dot::sub_block_dot<T>(weights[u],
                                          act[static_cast<std::uint64_t>(t0 + t) * n_sub + s]);
        }
      }
    }
  }
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    const float v = warp_sum(sum[t]);
    if (lane == 0 && t0 + t < n_tokens) y[static_cast<std::uint64_t>(t0 + t) * rows + r] = v;
  }
}

template <typename Format, int NT>
__global__ void matvec_float_kernel(const std::uint8_t* w, std::uint32_t rows, std::uint32_t cols,
                                    std::uint64_t row_bytes, const float* x, std::uint32_t n_tokens,
                                    float* y) {
  const std::uint32_t r = blockIdx.x * kWarps + threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (r >= rows) return;
  const std::uint8_t* row = w + r * row_bytes;
  float sum[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t)
    sum[t] = 0.0F;
  for (std::uint32_t i = lane; i < cols; i += 32) {
    const float wv = Format::decode(row + static_cast<std::uint64_t>(i) * Format::kBlockBytes, 0);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (t < static_cast<int>(n_tokens))
        sum[t] += wv * x[static_cast<std::uint64_t>(t) * cols + i];
    }
  }
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    const float v = warp_sum(sum[t]);
    if (lane == 0 && t < static_cast<int>(n_tokens))
      y[static_cast<std::uint64_t>(t) * rows + r] = v;
  }
}

// F16 / BF16 rows whose columns are a multiple of 8 (every real model's): each lane reads 8
// consecutive weights as one 16-byte load, so a warp reads 512 contiguous bytes per step.
template <bool kBf16, int NT>
__global__ void matvec_half8_kernel(const std::uint8_t* __restrict__ w, std::uint32_t rows,
                                    std::uint32_t cols, const float* __restrict__ x,
                                    std::uint32_t n_tokens, float* __restrict__ y) {
  const std::uint32_t r = blockIdx.x * kWarps + threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (r >= rows) return;
  const uint4* row = reinterpret_cast<const uint4*>(w + static_cast<std::uint64_t>(r) * cols * 2);
  const std::uint32_t groups = cols / 8;
  float sum[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t)
    sum[t] = 0.0F;
  for (std::uint32_t g0 = lane; g0 < groups; g0 += 32 * kHalfUnroll) {
    // kHalfUnroll 16-byte loads in flight, then the products in the one-at-a-time order.
    uint4 packed[kHalfUnroll];
#pragma unroll
    for (int u = 0; u < kHalfUnroll; ++u) {
      const std::uint32_t g = g0 + 32 * u;
      packed[u] = g < groups ? row[g] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kHalfUnroll; ++u) {
      const std::uint32_t g = g0 + 32 * u;
      if (g >= groups) break;
      const std::uint32_t words[4] = {packed[u].x, packed[u].y, packed[u].z, packed[u].w};
      float wv[8];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const auto lo = static_cast<std::uint16_t>(words[k] & 0xFFFFu);
        const auto hi = static_cast<std::uint16_t>(words[k] >> 16);
        wv[2 * k] = kBf16 ? decode::bf16_to_f32(lo) : __half2float(__ushort_as_half(lo));
        wv[2 * k + 1] = kBf16 ? decode::bf16_to_f32(hi) : __half2float(__ushort_as_half(hi));
      }
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t < static_cast<int>(n_tokens)) {
          const float4* xv =
              reinterpret_cast<const float4*>(x + static_cast<std::uint64_t>(t) * cols + 8 * g);
          const float4 a = xv[0];
          const float4 b = xv[1];
          sum[t] += wv[0] * a.x + wv[1] * a.y + wv[2] * a.z + wv[3] * a.w + wv[4] * b.x +
                    wv[5] * b.y + wv[6] * b.z + wv[7] * b.w;
        }
      }
    }
  }
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    const float v = warp_sum(sum[t]);
    if (lane == 0 && t < static_cast<int>(n_tokens))
      y[static_cast<std::uint64_t>(t) * rows + r] = v;
  }
}

// One warp per block of 32, one value per lane: the loads are one coalesced 128-byte read and the
// max and the code sum warp reductions. Both reductions are exact, so the block is
// dot::quantize_block_q8_1's (the host's) bit for bit.
constexpr unsigned kQuantizeWarps = 8;

__device__ __forceinline__ int warp_sum_int(int v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

__global__ void quantize_q8_1_kernel(const float* __restrict__ x, dot::BlockQ8_1* __restrict__ y,
                                     std::uint64_t n_blocks) {
  const std::uint64_t b =
      static_cast<std::uint64_t>(blockIdx.x) * kQuantizeWarps + threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (b >= n_blocks) return;  // the whole warp: b is the same for its lanes
  const float v = x[dot::kQK8_1 * b + lane];
  const float max_abs = warp_max(fabsf(v));
  const float d = max_abs / 127.0F;
  const float id = max_abs != 0.0F ? 127.0F / max_abs : 0.0F;
  const int q = dot::round_half_even(v * id);
  y[b].qs[lane] = static_cast<std::int8_t>(q);
  const int sum = warp_sum_int(q);
  if (lane == 0) {
    y[b].d = decode::f32_to_f16(d);
    y[b].s = decode::f32_to_f16(d * static_cast<float>(sum));
  }
}

// The token group size of a launch: the smallest of 1, 2, 4, 8 that holds the batch.
template <typename Launch>
Result<void> by_token_group(std::uint32_t n_tokens, Launch&& launch) {
  if (n_tokens <= 1) return launch(std::integral_constant<int, 1>{});
  if (n_tokens <= 2) return launch(std::integral_constant<int, 2>{});
  if (n_tokens <= 4) return launch(std::integral_constant<int, 4>{});
  return launch(std::integral_constant<int, 8>{});
}

}  // namespace

bool supports_weight_dtype(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      return true;
    default:
      return uses_quantized_activations(dtype);
  }
}

bool uses_quantized_activations(DType dtype) noexcept {
  switch (dtype) {
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kIQ4_NL:
    case DType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

Result<void> quantize_q8_1(const float* x, dot::BlockQ8_1* y, std::uint32_t rows,
                           std::uint32_t cols, cudaStream_t stream) {
  if (cols % dot::kQK8_1 != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "cuda quantize_q8_1: " + std::to_string(cols) + " columns is not a multiple of 32");
  }
  const std::uint64_t n_blocks = static_cast<std::uint64_t>(rows) * (cols / dot::kQK8_1);
  if (n_blocks == 0) return ok();
  quantize_q8_1_kernel<<<static_cast<unsigned>((n_blocks + kQuantizeWarps - 1) / kQuantizeWarps),
                         kQuantizeWarps * 32, 0, stream>>>(x, y, n_blocks);
  return check_launch("quantize_q8_1");
}

Result<void> matvec(const LinearArgs& a, const float* x, const dot::BlockQ8_1* act, float* y,
                    cudaStream_t stream) {
  if (a.rows == 0 || a.n_tokens == 0) return ok();
  const unsigned row_blocks = (a.rows + kWarps - 1) / kWarps;
  if (uses_quantized_activations(a.dtype)) {
    return with_dot_traits(a.dtype, "linear", [&](auto traits) -> Result<void> {
      using T = decltype(traits);
      return by_token_group(a.n_tokens, [&](auto group) -> Result<void> {
        constexpr int NT = decltype(group)::value;
        const dim3 grid(row_blocks, (a.n_tokens + NT - 1) / NT);
        matvec_quantized_kernel<T, NT><<<grid, kWarps * 32, 0, stream>>>(
            a.w, a.rows, a.cols / dot::kQK8_1, a.row_bytes, act, a.n_tokens, y);
        return check_launch("linear (matvec)");
      });
    });
  }
  if (a.n_tokens > kMatvecMaxTokens) {
    return fail(ErrorCode::kInvalidArgument, "cuda matvec: " + std::to_string(a.n_tokens) +
                                                 " tokens exceed " +
                                                 std::to_string(kMatvecMaxTokens));
  }
  // 16-byte loads need 16-byte aligned rows and activations: 8 | cols (the buffers come from the
  // pool, 256-byte aligned).
  const bool half8 = (a.dtype == DType::kF16 || a.dtype == DType::kBF16) && a.cols % 8 == 0 &&
                     reinterpret_cast<std::uintptr_t>(a.w) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
  if (half8) {
    return by_token_group(a.n_tokens, [&](auto group) -> Result<void> {
      constexpr int NT = decltype(group)::value;
      if (a.dtype == DType::kBF16) {
        matvec_half8_kernel<true, NT>
            <<<row_blocks, kWarps * 32, 0, stream>>>(a.w, a.rows, a.cols, x, a.n_tokens, y);
      } else {
        matvec_half8_kernel<false, NT>
            <<<row_blocks, kWarps * 32, 0, stream>>>(a.w, a.rows, a.cols, x, a.n_tokens, y);
      }
      return check_launch("linear (matvec)");
    });
  }
  return with_float_format(a.dtype, "linear", [&](auto format) -> Result<void> {
    using Format = decltype(format);
    return by_token_group(a.n_tokens, [&](auto group) -> Result<void> {
      constexpr int NT = decltype(group)::value;
      matvec_float_kernel<Format, NT><<<row_blocks, kWarps * 32, 0, stream>>>(
          a.w, a.rows, a.cols, a.row_bytes, x, a.n_tokens, y);
      return check_launch("linear (matvec)");
    });
  });
}

}  // namespace eredu::cuda::kernels
