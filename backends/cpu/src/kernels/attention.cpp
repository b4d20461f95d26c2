// Threaded causal grouped-query attention over a KV cache. One scheduling unit is one
// (query token, head) pair, computed entirely by one thread: scores, softmax, weighted sum of V.
// Prompts (more than kPromptTokens tokens) on a table with attention_block take blocks of up to
// 16 rows instead: the heads of one query group for one or more consecutive tokens, which read
// the same KV head, so that the cache is read once per block (numerics: the kernel's, e.g.
// avx512/attention_block_avx512.cpp). Decode and short batches (a speculative verification) keep
// the one-row path, whose values do not depend on the batch.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_impl.hpp"

namespace eredu::cpu::detail {

namespace {
struct AttentionScratch {
  std::vector<float> scores;
  std::vector<float> row;  // one decoded F16 K or V row
};

AttentionScratch& scratch(std::size_t n_kv, std::size_t head_dim) {
  thread_local AttentionScratch s;
  if (s.scores.size() < n_kv) s.scores.resize(n_kv);
  if (s.row.size() < head_dim) s.row.resize(head_dim);
  return s;
}

// Batches of more tokens than this are prompts (the matmul's kTokenTile).
constexpr std::size_t kPromptTokens = 16;

// The prompt path: work items of one KV head x a block of consecutive tokens, whose query rows
// (group heads x tokens) fill at most kAttentionBlockRows lanes.
void attention_blocks(const VecOps& ops, const AttentionArgs& a, ThreadPool* pool) {
  const std::size_t group = a.n_head / a.n_head_kv;
  const std::size_t kv_pos_stride = a.n_head_kv * a.head_dim;
  const bool f16 = a.kv_dtype == DType::kF16;
  const std::size_t tokens_per_block = kAttentionBlockRows / group;
  const std::size_t n_token_blocks = (a.n_tokens + tokens_per_block - 1) / tokens_per_block;
  const std::size_t element = f16 ? sizeof(std::uint16_t) : sizeof(float);
  auto items = [&](std::size_t i0, std::size_t i1) {
    thread_local std::vector<float> buffer;
    const std::size_t need = attention_block_scratch(a.n_kv, a.head_dim);
    if (buffer.size() < need) buffer.resize(need);
    for (std::size_t item = i0; item < i1; ++item) {
      const std::size_t kv_head = item % a.n_head_kv;
      const std::size_t t0 = item / a.n_head_kv * tokens_per_block;
      const std::size_t t1 = std::min(t0 + tokens_per_block, a.n_tokens);
      AttentionBlock b{};
      for (std::size_t t = t0; t < t1; ++t) {
        for (std::size_t h = kv_head * group; h < (kv_head + 1) * group; ++h) {
          const std::size_t row = t * a.n_head + h;
          b.q[b.n_rows] = a.q + row * a.head_dim;
          b.out[b.n_rows] = a.out + row * a.head_dim;
          b.visible[b.n_rows] = static_cast<std::size_t>(a.positions[t]) + 1;
          ++b.n_rows;
        }
      }
      b.k = static_cast<const std::byte*>(a.k) + kv_head * a.head_dim * element;
      b.v = static_cast<const std::byte*>(a.v) + kv_head * a.head_dim * element;
      b.f16 = f16;
      b.stride = kv_pos_stride;
      b.dim = a.head_dim;
      b.scale = a.scale;
      ops.attention_block(b, buffer.data());
    }
  };
  // Later tokens see more positions: small pieces, handed out dynamically.
  parallel_for(pool, n_token_blocks * a.n_head_kv, items,
               grain_for(4 * a.n_kv * a.head_dim * kAttentionBlockRows), Schedule::kChunked);
}

}  // namespace

void attention(const VecOps& ops, const AttentionArgs& a, ThreadPool* pool) {
  const std::size_t group = a.n_head / a.n_head_kv;
  const std::size_t kv_pos_stride = a.n_head_kv * a.head_dim;
  const bool f16 = a.kv_dtype == DType::kF16;
  if (a.n_tokens > kPromptTokens && ops.attention_block != nullptr && a.head_dim % 16 == 0 &&
      group <= kAttentionBlockRows) {
    attention_blocks(ops, a, pool);
    return;
  }

  // Row j of K or V for one KV head, as floats (decoded into `buffer` when the cache is F16).
  auto kv_row = [&](const void* base, std::size_t j, std::size_t kv_head, float* buffer) {
    const std::size_t offset = j * kv_pos_stride + kv_head * a.head_dim;
    if (!f16) return static_cast<const float*>(base) + offset;
    ops.f16_to_f32(static_cast<const std::uint16_t*>(base) + offset, buffer, a.head_dim);
    return static_cast<const float*>(buffer);
  };

  // The cache rows of one KV head, from position 0, for the batched primitives.
  auto kv_base = [&](const void* base, std::size_t offset) -> const void* {
    if (f16) return static_cast<const std::uint16_t*>(base) + offset;
    return static_cast<const float*>(base) + offset;
  };
  const bool batched = ops.attention_scores != nullptr && ops.attention_weighted_sum != nullptr &&
                       a.head_dim % 8 == 0;

  auto items = [&](std::size_t i0, std::size_t i1) {
    AttentionScratch& s = scratch(a.n_kv, a.head_dim);
    for (std::size_t item = i0; item < i1; ++item) {
      const std::size_t t = item / a.n_head;
      const std::size_t h = item % a.n_head;
      const std::size_t kv_head = h / group;
      const std::size_t n_visible = static_cast<std::size_t>(a.positions[t]) + 1;
      const float* q = a.q + item * a.head_dim;
      float* out = a.out + item * a.head_dim;
      if (batched) {
        const std::size_t head_offset = kv_head * a.head_dim;
        ops.attention_scores(q, kv_base(a.k, head_offset), f16, kv_pos_stride, n_visible,
                             a.head_dim, s.scores.data());
      } else {
        for (std::size_t j = 0; j < n_visible; ++j) {
          const float* k = kv_row(a.k, j, kv_head, s.row.data());
          s.scores[j] = ops.dot_f32(q, k, a.head_dim);
        }
      }
      float sum = 0.0F;
      if (ops.attention_softmax != nullptr) {
        sum = ops.attention_softmax(s.scores.data(), n_visible, a.scale);
      } else {
        float max_score = -INFINITY;
        for (std::size_t j = 0; j < n_visible; ++j) {
          s.scores[j] = s.scores[j] * a.scale;
          max_score = std::max(max_score, s.scores[j]);
        }
        for (std::size_t j = 0; j < n_visible; ++j) {
          s.scores[j] = std::exp(s.scores[j] - max_score);
          sum += s.scores[j];
        }
      }
      if (batched) {
        ops.attention_weighted_sum(s.scores.data(), kv_base(a.v, kv_head * a.head_dim), f16,
                                   kv_pos_stride, n_visible, a.head_dim, out);
      } else {
        std::fill(out, out + a.head_dim, 0.0F);
        for (std::size_t j = 0; j < n_visible; ++j) {
          ops.axpy_f32(s.scores[j], kv_row(a.v, j, kv_head, s.row.data()), out, a.head_dim);
        }
      }
      const float inv_sum = 1.0F / sum;
      for (std::size_t d = 0; d < a.head_dim; ++d)
        out[d] *= inv_sum;
    }
  };
  // Causal rows differ in length (token t sees positions[t] + 1 keys), so equal index ranges are
  // not equal work: hand out small pieces dynamically.
  parallel_for(pool, a.n_tokens * a.n_head, items, grain_for(2 * a.n_kv * a.head_dim),
               Schedule::kChunked);
}

}  // namespace eredu::cpu::detail
