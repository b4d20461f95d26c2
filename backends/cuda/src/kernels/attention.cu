// Attention over the KV cache, split-K (flash-decoding): the visible positions of each (token,
// head) are cut into chunks (plan_splits); one warp runs an online softmax over one chunk (lanes
// over the head dimension, so every K/V row is read coalesced) and writes its partial (max, sum,
// weighted V) to scratch; a second kernel merges the chunks. The same kernels serve prefill (each
// token sees positions 0 .. first_position + t) and decode. Also the KV store.
#include <cuda_fp16.h>

#include <algorithm>

#include "../backend/stream.hpp"
#include "dispatch.cuh"
#include "eredu/backends/cuda/decode/half.hpp"
#include "kernels.hpp"

namespace eredu::cuda::kernels {
namespace {

constexpr std::uint32_t kMinChunk = 64;       // positions per warp at least
constexpr std::uint32_t kMaxSplits = 32;      // chunks per (token, head) at most
constexpr std::uint32_t kTargetWarps = 8192;  // enough warps to fill an H200 (132 SMs x 64)
constexpr std::uint32_t kWarpsPerBlock = 4;   // chunks per block
constexpr std::uint32_t kMaxHeadDim = 256;    // 8 values per lane
constexpr std::uint32_t kPerLane = kMaxHeadDim / 32;

__device__ __forceinline__ float load_kv(const void* base, std::uint64_t i, bool f16) {
  if (f16) return __half2float(__ushort_as_half(static_cast<const unsigned short*>(base)[i]));
  return static_cast<const float*>(base)[i];
}

// How the visible positions are cut: `splits` chunks of `chunk` positions per (token, head), with
// splits * chunk >= the positions the last token sees. A decode (few tokens x heads) splits its
// positions over up to kMaxSplits warps so that the GPU is busy; a prompt has warps enough in its
// tokens x heads and splits little or not at all, which also keeps the scratch (tokens x heads x
// splits partials) linear in the prompt's length. A captured pass plans for the cache's capacity.
struct SplitPlan {
  std::uint32_t splits = 1;
  std::uint32_t chunk = kMinChunk;
};

SplitPlan plan_splits(const AttentionArgs& a) {
  // A one-token pass plans for the cache's capacity, captured or not, so that a replayed decode
  // step and an eager one cut (and so sum) the positions alike: bit-identical logits.
  const bool decode = a.n_tokens == 1 && a.capacity_positions > 0;
  const std::uint64_t visible = decode || a.device_position != nullptr
                                    ? a.capacity_positions
                                    : static_cast<std::uint64_t>(a.first_position) + a.n_tokens;
  const std::uint64_t rows =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(a.n_tokens) * a.heads);
  std::uint64_t splits = (visible + kMinChunk - 1) / kMinChunk;
  splits = std::min<std::uint64_t>(splits, kMaxSplits);
  splits = std::min<std::uint64_t>(splits, std::max<std::uint64_t>(1, kTargetWarps / rows));
  splits = std::max<std::uint64_t>(splits, 1);
  SplitPlan plan;
  plan.splits = static_cast<std::uint32_t>(splits);
  plan.chunk =
      static_cast<std::uint32_t>(std::max<std::uint64_t>((visible + splits - 1) / splits, 1));
  return plan;
}

// Scratch per (token, head, split): max, sum, then head_dim weighted values.
__global__ void attention_chunks_kernel(const float* q, const void* keys, const void* values,
                                        float* scratch, AttentionArgs a, SplitPlan plan) {
  const std::uint32_t warp = threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t split = blockIdx.y * kWarpsPerBlock + warp;
  if (split >= plan.splits) return;
  const std::uint32_t th = blockIdx.x;  // token * heads + head
  const std::uint32_t t = th / a.heads;
  const std::uint32_t h = th % a.heads;
  const std::uint32_t kvh = h / (a.heads / a.kv_heads);
  const std::uint64_t row = static_cast<std::uint64_t>(a.kv_heads) * a.head_dim;
  const std::uint32_t first = a.device_position != nullptr ? *a.device_position : a.first_position;
  const std::uint32_t last = first + t;  // the last visible position
  const std::uint32_t begin = split * plan.chunk;
  if (begin > last) return;  // past the visible positions: the merge never reads this chunk
  const std::uint32_t end = min(begin + plan.chunk, last + 1);

  float qr[kPerLane];
  float acc[kPerLane];
#pragma unroll
  for (std::uint32_t k = 0; k < kPerLane; ++k) {
    const std::uint32_t d = lane + 32 * k;
    qr[k] = d < a.head_dim ? q[static_cast<std::uint64_t>(th) * a.head_dim + d] : 0.0F;
    acc[k] = 0.0F;
  }
  float m = -INFINITY;
  float l = 0.0F;
  for (std::uint32_t j = begin; j < end; ++j) {
    const std::uint64_t base = j * row + static_cast<std::uint64_t>(kvh) * a.head_dim;
    float s = 0.0F;
#pragma unroll
    for (std::uint32_t k = 0; k < kPerLane; ++k) {
      const std::uint32_t d = lane + 32 * k;
      if (d < a.head_dim) s += qr[k] * load_kv(keys, base + d, a.f16);
    }
    s = warp_sum(s) * a.scale;
    const float m_new = fmaxf(m, s);
    const float correction = expf(m - m_new);  // 0 on the first position (m = -inf)
    const float p = expf(s - m_new);
    l = l * correction + p;
#pragma unroll
    for (std::uint32_t k = 0; k < kPerLane; ++k) {
      const std::uint32_t d = lane + 32 * k;
      if (d < a.head_dim) acc[k] = acc[k] * correction + p * load_kv(values, base + d, a.f16);
    }
    m = m_new;
  }
  float* out = scratch + (static_cast<std::uint64_t>(th) * plan.splits + split) * (a.head_dim + 2);
  if (lane == 0) {
    out[0] = m;
    out[1] = l;
  }
#pragma unroll
  for (std::uint32_t k = 0; k < kPerLane; ++k) {
    const std::uint32_t d = lane + 32 * k;
    if (d < a.head_dim) out[2 + d] = acc[k];
  }
}

// One warp per (token, head): merges the chunks' partials.
__global__ void attention_merge_kernel(const float* scratch, float* out, AttentionArgs a,
                                       SplitPlan plan) {
  const std::uint32_t th = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (th >= a.n_tokens * a.heads) return;
  const std::uint32_t t = th / a.heads;
  const std::uint32_t first = a.device_position != nullptr ? *a.device_position : a.first_position;
  const std::uint32_t used = (first + t) / plan.chunk + 1;  // chunks with positions (<= splits)
  const float* part = scratch + static_cast<std::uint64_t>(th) * plan.splits * (a.head_dim + 2);
  float m = -INFINITY;
  for (std::uint32_t s = 0; s < used; ++s)
    m = fmaxf(m, part[s * (a.head_dim + 2)]);
  float l = 0.0F;
  for (std::uint32_t s = 0; s < used; ++s) {
    const float* p = part + s * (a.head_dim + 2);
    l += p[1] * expf(p[0] - m);
  }
  for (std::uint32_t d = lane; d < a.head_dim; d += 32) {
    float v = 0.0F;
    for (std::uint32_t s = 0; s < used; ++s) {
      const float* p = part + s * (a.head_dim + 2);
      v += p[2 + d] * expf(p[0] - m);
    }
    out[static_cast<std::uint64_t>(th) * a.head_dim + d] = v / l;
  }
}

// blockIdx.y 0 stores the keys, 1 the values (one launch for both).
__global__ void kv_store_kernel(const float* k, const float* v, void* keys, void* values, bool f16,
                                std::uint64_t row, std::uint64_t first,
                                const std::uint32_t* device_position, std::uint64_t n) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* src = blockIdx.y == 0 ? k : v;
  void* dst = blockIdx.y == 0 ? keys : values;
  const std::uint64_t offset = (device_position != nullptr ? *device_position : first) * row;
  if (f16) {
    static_cast<std::uint16_t*>(dst)[offset + i] = decode::f32_to_f16(src[i]);
  } else {
    static_cast<float*>(dst)[offset + i] = src[i];
  }
}

}  // namespace

std::uint64_t attention_scratch_bytes(const AttentionArgs& a) noexcept {
  return static_cast<std::uint64_t>(a.n_tokens) * a.heads * plan_splits(a).splits *
         (a.head_dim + 2) * sizeof(float);
}

Result<void> attention(const float* q, const void* keys, const void* values, float* out,
                       const AttentionArgs& args, float* scratch, cudaStream_t stream) {
  if (args.head_dim > kMaxHeadDim) {
    return fail(ErrorCode::kUnsupported, "cuda attention: head_dim " +
                                             std::to_string(args.head_dim) + " exceeds " +
                                             std::to_string(kMaxHeadDim));
  }
  if (args.n_tokens == 0) return ok();
  const SplitPlan plan = plan_splits(args);
  const dim3 grid(args.n_tokens * args.heads, (plan.splits + kWarpsPerBlock - 1) / kWarpsPerBlock);
  attention_chunks_kernel<<<grid, kWarpsPerBlock * 32, 0, stream>>>(q, keys, values, scratch, args,
                                                                    plan);
  EREDU_TRY_VOID(check_launch("attention"));
  constexpr unsigned kMergeWarps = 4;
  const unsigned merge_grid = (args.n_tokens * args.heads + kMergeWarps - 1) / kMergeWarps;
  attention_merge_kernel<<<merge_grid, kMergeWarps * 32, 0, stream>>>(scratch, out, args, plan);
  return check_launch("attention merge");
}

Result<void> kv_store(const float* k, const float* v, void* keys, void* values, bool f16,
                      std::uint64_t row, std::uint64_t first, const std::uint32_t* device_position,
                      std::uint64_t n, cudaStream_t stream) {
  const std::uint64_t count = row * n;
  if (count == 0) return ok();
  constexpr unsigned kThreads = 256;
  const unsigned grid = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  kv_store_kernel<<<dim3(grid, 2), kThreads, 0, stream>>>(k, v, keys, values, f16, row, first,
                                                          device_position, count);
  return check_launch("kv store");
}

}  // namespace eredu::cuda::kernels
