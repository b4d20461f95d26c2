// Threaded causal grouped-query attention over a KV cache.
//
// On a table with attention_block (AVX2, AVX-512), every batch is cut into blocks of up to 16
// query rows that read the same KV head, so that the cache is read once per block instead of once
// per row:
//   - a prompt (more than kPromptTokens tokens): the heads of one query group for one or more
//     consecutive tokens;
//   - decode and short batches (a speculative verification): the heads of one query group for one
//     token, cut into smaller chunks of heads where the KV heads alone would leave threads idle.
// The kernel's value for a row does not depend on the other rows of its block (documented by the
// kernels: avx2/attention_block_avx2.cpp, avx512/attention_block_avx512.cpp), so a token's values
// are the same whatever the batch, the block shape or the thread count, and a decoded token gets
// the value the same token gets inside a prompt. Before, decode kept the one-row path below (every
// head reading its KV head's whole cache again, every score with its own horizontal sum): at a
// depth of 4096 it was most of llama1b's decode time.
//
// Otherwise one scheduling unit is one (query token, head) pair, computed entirely by one thread:
// scores, softmax, weighted sum of V.
//
// Keys come in either layout (KeyLayout): the blocks pass theirs to attention_block; the one-row
// path gathers a key row from blocks of 16 positions (a table with attention_block only takes it
// for query groups wider than 16 rows).
#include <algorithm>
#include <cmath>
#include <vector>

#include "eredu/checkpoint/encoding/half.hpp"
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

// How the blocks of attention_blocks are cut: tokens per block, and how many chunks a group's
// heads are cut into (each chunk a block of its own, for one token).
struct BlockShape {
  std::size_t tokens;
  std::size_t head_chunks;
};

// A prompt: as many consecutive tokens as the group's rows fill the block's lanes. Decode and short
// batches: one token, its group's heads cut into chunks only where the (token, KV head) items are
// fewer than the threads, as few chunks as give every thread an item (a block of one or two rows
// costs more per row than a bigger one: smol135m, 3 KV heads of 3 heads, decoded at depth 4096
// on 2 threads 25% slower cut into 6 items than not cut).
BlockShape block_shape(const AttentionArgs& a, std::size_t threads) {
  const std::size_t group = a.n_head / a.n_head_kv;
  if (a.n_tokens > kPromptTokens) return {kAttentionBlockRows / group, 1};
  const std::size_t items = a.n_tokens * a.n_head_kv;
  const std::size_t wanted = (threads + items - 1) / items;
  return {1, std::clamp<std::size_t>(wanted, 1, group)};
}

// Work items of one KV head x a block of consecutive tokens (or of one token and a chunk of the
// group's heads), whose query rows fill at most kAttentionBlockRows lanes.
void attention_blocks(const VecOps& ops, const AttentionArgs& a, ThreadPool* pool) {
  const std::size_t group = a.n_head / a.n_head_kv;
  const std::size_t kv_pos_stride = a.n_head_kv * a.head_dim;
  const bool f16 = a.kv_dtype == DType::kF16;
  const bool key_blocks = a.key_layout == KeyLayout::kBlocks16;
  const BlockShape shape = block_shape(a, pool != nullptr ? pool->size() : 1);
  const std::size_t tokens_per_block = shape.tokens;
  const std::size_t heads_per_chunk = (group + shape.head_chunks - 1) / shape.head_chunks;
  const std::size_t n_chunks = (group + heads_per_chunk - 1) / heads_per_chunk;
  const std::size_t n_token_blocks = (a.n_tokens + tokens_per_block - 1) / tokens_per_block;
  const std::size_t element = f16 ? sizeof(std::uint16_t) : sizeof(float);
  auto items = [&](std::size_t i0, std::size_t i1) {
    thread_local std::vector<float> buffer;
    const std::size_t need = attention_block_scratch(a.n_kv, a.head_dim);
    if (buffer.size() < need) buffer.resize(need);
    for (std::size_t item = i0; item < i1; ++item) {
      const std::size_t chunk = item % n_chunks;
      const std::size_t kv_head = item / n_chunks % a.n_head_kv;
      const std::size_t t0 = item / n_chunks / a.n_head_kv * tokens_per_block;
      const std::size_t t1 = std::min(t0 + tokens_per_block, a.n_tokens);
      const std::size_t h0 = kv_head * group + chunk * heads_per_chunk;
      const std::size_t h1 = std::min(h0 + heads_per_chunk, (kv_head + 1) * group);
      AttentionBlock b{};
      for (std::size_t t = t0; t < t1; ++t) {
        for (std::size_t h = h0; h < h1; ++h) {
          const std::size_t row = t * a.n_head + h;
          b.q[b.n_rows] = a.q + row * a.head_dim;
          b.out[b.n_rows] = a.out + row * a.head_dim;
          b.visible[b.n_rows] = static_cast<std::size_t>(a.positions[t]) + 1;
          ++b.n_rows;
        }
      }
      const std::size_t key_start = kv_head * a.head_dim * (key_blocks ? kKeyBlockPositions : 1);
      b.k = static_cast<const std::byte*>(a.k) + key_start * element;
      b.v = static_cast<const std::byte*>(a.v) + kv_head * a.head_dim * element;
      b.f16 = f16;
      b.stride = kv_pos_stride;
      b.key_block_stride = key_blocks ? kv_pos_stride * kKeyBlockPositions : 0;
      b.dim = a.head_dim;
      b.scale = a.scale;
      ops.attention_block(b, buffer.data());
    }
  };
  // Later tokens see more positions: small pieces, handed out dynamically.
  parallel_for(pool, n_token_blocks * a.n_head_kv * n_chunks, items,
               grain_for(4 * a.n_kv * a.head_dim * kAttentionBlockRows), Schedule::kChunked);
}

}  // namespace

void attention(const VecOps& ops, const AttentionArgs& a, ThreadPool* pool) {
  const std::size_t group = a.n_head / a.n_head_kv;
  const std::size_t kv_pos_stride = a.n_head_kv * a.head_dim;
  const bool f16 = a.kv_dtype == DType::kF16;
  if (ops.attention_block != nullptr && group <= kAttentionBlockRows) {
    attention_blocks(ops, a, pool);
    return;
  }

  // Row j of V for one KV head, as floats (decoded into `buffer` when the cache is F16).
  auto kv_row = [&](const void* base, std::size_t j, std::size_t kv_head, float* buffer) {
    const std::size_t offset = j * kv_pos_stride + kv_head * a.head_dim;
    if (!f16) return static_cast<const float*>(base) + offset;
    ops.f16_to_f32(static_cast<const std::uint16_t*>(base) + offset, buffer, a.head_dim);
    return static_cast<const float*>(buffer);
  };
  // Row j of K: as V's where keys are rows; gathered (every 16th element) where they are blocks.
  const bool key_rows = a.key_layout == KeyLayout::kRows;
  auto key_row = [&](std::size_t j, std::size_t kv_head, float* buffer) {
    if (key_rows) return kv_row(a.k, j, kv_head, buffer);
    for (std::size_t d = 0; d < a.head_dim; ++d) {
      const std::size_t at = key_offset(a.key_layout, j, kv_head * a.head_dim + d, kv_pos_stride);
      buffer[d] = f16 ? encoding::fp16_to_fp32(static_cast<const std::uint16_t*>(a.k)[at])
                      : static_cast<const float*>(a.k)[at];
    }
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
      if (batched && key_rows) {
        const std::size_t head_offset = kv_head * a.head_dim;
        ops.attention_scores(q, kv_base(a.k, head_offset), f16, kv_pos_stride, n_visible,
                             a.head_dim, s.scores.data());
      } else {
        for (std::size_t j = 0; j < n_visible; ++j) {
          const float* k = key_row(j, kv_head, s.row.data());
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
