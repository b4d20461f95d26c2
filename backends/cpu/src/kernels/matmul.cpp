// Threaded matrix-vector / matrix-matrix products over packed weights.
//
// Each output element is produced by one thread with one fixed sequence of operations, so results
// do not depend on the thread count or on which thread takes which piece.
//
// One token (decode) goes to matmul_one_token (one_token_matmul.cpp), which also runs several
// weights that read the same token (Q/K/V, gate/up) as one job over one activation. Up to
// kTokenTile tokens (a speculative verification) take the per-row products below with the
// one-token values: quant_row_dot on the 8-bit activation blocks, F16 / BF16 rows against the
// activations stored in the weights' type, or dot_f32 on the decoded row.
//
// K-quants and IQ4_XS, when the ISA has their integer kernel: the activations are quantized to
// q8_K once per row, and one KQuantGemm serves every token count (rows split across threads for
// one token, the tile grid below for several), giving every element the same value either way.
//
// Several tokens (prompt batches), when the ISA has tiled kernels (float-decoded encodings: more
// than kTokenTile tokens, see matmul()): the activations are quantized
// (or rounded) in parallel, then the output is cut into work items of a block of rows x a chunk of
// tokens, handed out dynamically; each item runs the register-blocked QuantGemm / FloatGemm, which
// reuses every decoded weight block for several tokens. Encodings without an integer kernel are
// decoded one row block at a time into a per-thread float buffer; the matrix is never densified.
//
// Prompts (more than kTokenTile tokens) on a table with prompt kernels (AVX-512: Q4_0 / Q4_1 /
// Q5_0 / Q5_1 / Q8_0, Q2_K..Q6_K, F16, BF16): a work item of 32 rows takes all the tokens when
// there are enough row blocks, and the kernel repacks its rows once (16 rows side by side) or reads
// F16 rows as stored. The K-quant prompt kernels keep the definition's values; Q4_0 .. Q8_0 and
// float prompts round differently from the one-token path, which is why short batches (a
// speculative verification) never take them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "kernel_impl.hpp"
#include "row_groups.hpp"
#include "thread_scratch.hpp"
#include "token_forms.hpp"

namespace eredu::cpu::detail {

namespace {
constexpr std::size_t kTokenTile = 16;  // tokens sharing one pass over the weight rows
constexpr std::size_t kRowGrain = 4;    // rows per scheduling unit

// Tiled path: a work item is up to kGemmTokens tokens of a block of rows. Integer blocks hold 24
// rows (a multiple of the 2-row tile); float blocks are sized so the decoded rows stay within
// about 128 KiB of cache, in multiples of the ISA's row tile, but hold at least 4 row tiles so that
// each activation tile (streamed from a far cache for long rows) serves at least 4 row tiles.
constexpr std::size_t kGemmTokens = 96;
constexpr std::size_t kQuantRowBlock = 24;
constexpr std::size_t kPromptRowBlock = 32;  // two 16-row groups of the AVX-512 prompt tiles
constexpr std::size_t kFloatBlockBytes = std::size_t{128} << 10;
constexpr std::size_t kFloatMinRowTiles = 4;   // long rows: still 4 tiles per activation tile
constexpr std::size_t kFloatMaxRowBlock = 48;  // a multiple of the 3- and 6-row tiles

}  // namespace

const float* decode_row(const VecOps& ops, DType dtype, const void* row, std::size_t n,
                        float* buffer) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(row);
    case DType::kF16:
      ops.f16_to_f32(static_cast<const std::uint16_t*>(row), buffer, n);
      return buffer;
    default:
      reference::dequantize_row(dtype, row, buffer, n);
      return buffer;
  }
}

bool supports_matmul(DType dtype) noexcept {
  return reference::supports_dtype(dtype);
}

void get_row(const VecOps& ops, const MatrixView& table, std::size_t row, float* out) {
  const std::size_t row_bytes = packed_row_bytes(table.dtype, table.cols);
  const void* src = static_cast<const std::byte*>(table.data) + row * row_bytes;
  const float* decoded = decode_row(ops, table.dtype, src, table.cols, out);
  if (decoded != out) std::copy(decoded, decoded + table.cols, out);
}

namespace {

// Runs fn(row0, row1, tok0, tok1) over a grid of row blocks x token chunks, dynamically scheduled.
template <typename Fn>
void for_each_tile_item(ThreadPool* pool, std::size_t rows, std::size_t row_block,
                        std::size_t n_tokens, Fn&& fn, std::size_t token_chunk = kGemmTokens) {
  const std::size_t n_row_blocks = (rows + row_block - 1) / row_block;
  const std::size_t n_chunks = (n_tokens + token_chunk - 1) / token_chunk;
  auto items = [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      const std::size_t rb = i / n_chunks;
      const std::size_t tc = i % n_chunks;
      const std::size_t r0 = rb * row_block;
      const std::size_t t0 = tc * token_chunk;
      fn(r0, std::min(rows, r0 + row_block), t0, std::min(n_tokens, t0 + token_chunk));
    }
  };
  parallel_for(pool, n_row_blocks * n_chunks, items, 1, Schedule::kChunked);
}

// Float tiles: a work item decodes its row block once, so it takes all the tokens when there are
// enough row blocks to keep every thread busy (llama1b F16: the row decode was ~15% of a 128-token
// prompt split into 96 + 32 tokens, and 6x the work for 512); only few rows split the tokens too.
std::size_t float_token_chunk(std::size_t rows, std::size_t row_block, std::size_t n_tokens,
                              const ThreadPool* pool) {
  const std::size_t threads = pool != nullptr ? pool->size() : 1;
  const std::size_t n_row_blocks = (rows + row_block - 1) / row_block;
  return n_row_blocks >= 4 * threads ? std::max<std::size_t>(n_tokens, 1) : kGemmTokens;
}

// Tiles that read their rows as stored (F32 rows; F16 / BF16 rows in half_tiled_matmul) repeat no
// work when the tokens are split, so few row blocks split the tokens into chunks of whole tiles
// until every thread has about 4 items to take: stories260K's K and V products (32 rows, one row
// block) were one item of 96 tokens and one of 32, three quarters of the work on one thread.
std::size_t stored_rows_token_chunk(std::size_t rows, std::size_t row_block, std::size_t n_tokens,
                                    const ThreadPool* pool) {
  constexpr std::size_t kChunkTokens = 16;  // whole 4-token tiles, several of them
  const std::size_t threads = pool != nullptr ? pool->size() : 1;
  const std::size_t n_row_blocks = (rows + row_block - 1) / row_block;
  const std::size_t chunks = (4 * threads + n_row_blocks - 1) / n_row_blocks;
  const std::size_t chunk =
      ((n_tokens + chunks - 1) / chunks + kChunkTokens - 1) / kChunkTokens * kChunkTokens;
  return std::max(chunk, kChunkTokens);
}

// K-quants and IQ4_XS on an ISA with their integer kernel, for several tokens: the activations as
// q8_K (made once, in parallel across tokens), then the tiled grid.
void kquant_matmul(const VecOps& ops, KQuantGemm kgemm, const MatrixView& w, TokenForms& forms,
                   float* y, ThreadPool* pool) {
  const std::size_t row_bytes = packed_row_bytes(w.dtype, w.cols);
  const auto* base = static_cast<const std::byte*>(w.data);
  const std::size_t n_super = w.cols / encoding::kQK_K;
  const std::size_t n_tokens = forms.n_tokens();
  const encoding::BlockQ8_K* xq = forms.q8k(pool);
  const RowGroupGemm group_gemm = w.row_groups != nullptr && ops.row_group_products != nullptr
                                      ? ops.row_group_products(w.dtype).gemm
                                      : nullptr;
  if (group_gemm != nullptr) {
    // Rows [0, grouped) from the row groups, whatever the batch (their unpacking into the prompt
    // tiles' layout is cheap); the last rows % 16 as stored. Row blocks are whole groups.
    const RowGroupSplit rows(w, true);
    for_each_tile_item(
        pool, w.rows, kPromptRowBlock, n_tokens,
        [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
          float* yt = y + t0 * w.rows;
          rows.split(
              r0, r1,
              [&](const std::byte* groups, std::size_t n_groups) {
                group_gemm(groups, n_groups, xq + t0 * n_super, n_super, t1 - t0, yt + r0, w.rows);
              },
              [&](std::size_t tail) {
                kgemm(base + tail * row_bytes, row_bytes, r1 - tail, xq + t0 * n_super, n_super,
                      t1 - t0, yt + tail, w.rows);
              });
        },
        float_token_chunk(w.rows, kPromptRowBlock, n_tokens, pool));
    return;
  }
  const KQuantGemm prompt_gemm = n_tokens > kTokenTile && ops.kquant_prompt_gemm != nullptr
                                     ? ops.kquant_prompt_gemm(w.dtype)
                                     : nullptr;
  if (prompt_gemm != nullptr) {
    // A work item repacks its rows once, so it takes all the tokens when there are enough row
    // blocks to keep every thread busy.
    for_each_tile_item(
        pool, w.rows, kPromptRowBlock, n_tokens,
        [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
          prompt_gemm(base + r0 * row_bytes, row_bytes, r1 - r0, xq + t0 * n_super, n_super,
                      t1 - t0, y + t0 * w.rows + r0, w.rows);
        },
        float_token_chunk(w.rows, kPromptRowBlock, n_tokens, pool));
    return;
  }
  for_each_tile_item(pool, w.rows, kQuantRowBlock, n_tokens,
                     [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
                       kgemm(base + r0 * row_bytes, row_bytes, r1 - r0, xq + t0 * n_super, n_super,
                             t1 - t0, y + t0 * w.rows + r0, w.rows);
                     });
}

// Rows per work item of the float tiles: the decoded rows stay within about 128 KiB of cache, in
// multiples of the ISA's row tile, and at least 4 row tiles.
std::size_t float_row_block(const VecOps& ops, std::size_t cols) {
  const std::size_t fit = kFloatBlockBytes / (cols * sizeof(float));
  const std::size_t tile = ops.float_gemm_row_tile;
  return std::clamp(fit / tile * tile, kFloatMinRowTiles * tile, kFloatMaxRowBlock / tile * tile);
}

// F16 / BF16 weights on an ISA with HalfGemm: the activations rounded to the weights' type (the
// values round_act_to_half gives, stored as halves), and the tiles read the rows as stored.
void half_tiled_matmul(const VecOps& ops, HalfGemm gemm, const MatrixView& w, TokenForms& forms,
                       float* y, ThreadPool* pool) {
  const auto* rows = static_cast<const std::uint16_t*>(w.data);
  const std::size_t n_tokens = forms.n_tokens();
  const std::uint16_t* halves = forms.halves(w.dtype, pool);
  const std::size_t row_block = float_row_block(ops, w.cols);
  for_each_tile_item(
      pool, w.rows, row_block, n_tokens,
      [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
        gemm(rows + r0 * w.cols, w.cols, r1 - r0, halves + t0 * w.cols, w.cols, t1 - t0, w.cols,
             y + t0 * w.rows + r0, w.rows);
      },
      stored_rows_token_chunk(w.rows, row_block, n_tokens, pool));
}

// F16 / BF16 rows of up to kTokenTile tokens against the activations stored in the weights' type
// (the rounding round_act_to_half performs, kept in half the bytes so that a long activation row
// stays in L1 while the weights stream past): each element is the value the float token kernel
// gives on the rounded activations, bit for bit. False where the ISA has no such kernel.
bool half_token_rows(const VecOps& ops, const MatrixView& w, TokenForms& forms, float* y,
                     ThreadPool* pool) {
  using HalfTokens = void (*)(const std::uint16_t*, const std::uint16_t*, std::size_t, std::size_t,
                              std::size_t, float*, std::size_t);
  HalfTokens dot = nullptr;
  bool convert = false;
  if (w.dtype == DType::kF16) {
    dot = ops.dot_f16_f16_tokens;
    convert = ops.f32_to_f16 != nullptr;
  } else if (w.dtype == DType::kBF16) {
    dot = ops.dot_bf16_bf16_tokens;
    convert = ops.f32_to_bf16 != nullptr;
  }
  if (dot == nullptr || !convert) return false;
  const std::size_t n_tokens = forms.n_tokens();
  const std::uint16_t* halves = forms.halves(w.dtype, pool);
  const auto* base = static_cast<const std::uint16_t*>(w.data);
  auto rows = [&](std::size_t r0, std::size_t r1) {
    for (std::size_t o = r0; o < r1; ++o)
      dot(base + o * w.cols, halves, w.cols, n_tokens, w.cols, y + o, w.rows);
  };
  parallel_for(pool, w.rows, rows, std::max(kRowGrain, grain_for(w.cols)));
  return true;
}

// The prompt-batch path; false when this ISA has no tiled kernel for the encoding.
bool tiled_matmul(const VecOps& ops, const MatrixView& w, TokenForms& forms, float* y,
                  ThreadPool* pool) {
  const std::size_t row_bytes = packed_row_bytes(w.dtype, w.cols);
  const auto* base = static_cast<const std::byte*>(w.data);
  const std::size_t n_tokens = forms.n_tokens();

  const QuantPromptGemm prompt_gemm =
      n_tokens > kTokenTile && ops.quantize_act_q8 != nullptr && ops.quant_prompt_gemm != nullptr
          ? ops.quant_prompt_gemm(w.dtype)
          : nullptr;
  if (prompt_gemm != nullptr) {
    // Quantized, then laid out as the prompt products read them (codes + 128, scales apart).
    const std::size_t n_blocks = w.cols / 32;
    const PromptActivations xp = forms.prompt_q8(pool);
    // Rows [0, grouped) from the row groups where the table laid the weight out in them (so a
    // prompt does not read the stored rows back in), the rest as stored. A work item repacks its
    // rows once, so it takes all the tokens when there are enough row blocks to keep every
    // thread busy. Row blocks are whole groups.
    const RowGroupGemmQ8 group_gemm = w.row_groups != nullptr && ops.row_group_products != nullptr
                                          ? ops.row_group_products(w.dtype).gemm_q8
                                          : nullptr;
    const RowGroupSplit rows(w, group_gemm != nullptr);
    for_each_tile_item(
        pool, w.rows, kPromptRowBlock, n_tokens,
        [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
          const PromptActivations xt{xp.codes + t0 * n_blocks * 32, xp.d + t0 * n_blocks,
                                     xp.s + t0 * n_blocks};
          float* yt = y + t0 * w.rows;
          rows.split(
              r0, r1,
              [&](const std::byte* groups, std::size_t n_groups) {
                group_gemm(groups, n_groups, xt, n_blocks, t1 - t0, yt + r0, w.rows);
              },
              [&](std::size_t tail) {
                prompt_gemm(base + tail * row_bytes, row_bytes, r1 - tail, xt, n_blocks, t1 - t0,
                            yt + tail, w.rows);
              });
        },
        float_token_chunk(w.rows, kPromptRowBlock, n_tokens, pool));
    return true;
  }

  const QuantGemm qgemm = ops.quantize_act_q8 != nullptr && ops.quant_gemm != nullptr
                              ? ops.quant_gemm(w.dtype)
                              : nullptr;
  if (qgemm != nullptr) {
    const std::size_t n_blocks = w.cols / 32;
    const ActQ8Block* xq = forms.q8(pool);
    const RowGroupDecodeQ8 group_decode =
        w.row_groups != nullptr && ops.row_group_products != nullptr
            ? ops.row_group_products(w.dtype).decode_q8
            : nullptr;
    if (group_decode != nullptr) {
      // A short batch of a weight in row groups: the one-token product of the groups once per
      // token (the short batch's values are the one-token ones by definition), a work item's
      // groups staying in cache from one token to the next; the last rows % 16 as stored.
      const RowGroupSplit rows(w, true);
      for_each_tile_item(pool, w.rows, kPromptRowBlock, n_tokens,
                         [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
                           rows.split(
                               r0, r1,
                               [&](const std::byte* groups, std::size_t n_groups) {
                                 for (std::size_t t = t0; t < t1; ++t)
                                   group_decode(groups, n_groups, xq + t * n_blocks, n_blocks,
                                                y + t * w.rows + r0);
                               },
                               [&](std::size_t tail) {
                                 float* scratch = thread_scratch<float, TileRows>(
                                     quant_gemm_scratch_floats(kQuantRowBlock, n_blocks));
                                 qgemm(base + tail * row_bytes, row_bytes, r1 - tail,
                                       xq + t0 * n_blocks, n_blocks, t1 - t0,
                                       y + t0 * w.rows + tail, w.rows, scratch);
                               });
                         });
      return true;
    }
    for_each_tile_item(pool, w.rows, kQuantRowBlock, n_tokens,
                       [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
                         float* scratch = thread_scratch<float, TileRows>(
                             quant_gemm_scratch_floats(kQuantRowBlock, n_blocks));
                         qgemm(base + r0 * row_bytes, row_bytes, r1 - r0, xq + t0 * n_blocks,
                               n_blocks, t1 - t0, y + t0 * w.rows + r0, w.rows, scratch);
                       });
    return true;
  }

  if (w.dtype == DType::kF16 && ops.f16_gemm != nullptr && ops.f32_to_f16 != nullptr) {
    half_tiled_matmul(ops, ops.f16_gemm, w, forms, y, pool);
    return true;
  }
  if (w.dtype == DType::kBF16 && ops.bf16_gemm != nullptr && ops.f32_to_bf16 != nullptr) {
    half_tiled_matmul(ops, ops.bf16_gemm, w, forms, y, pool);
    return true;
  }
  if (ops.float_gemm == nullptr) return false;
  const float* x = forms.f32();
  if (ops.round_act_to_half != nullptr && (w.dtype == DType::kF16 || w.dtype == DType::kBF16))
    x = forms.rounded(w.dtype, pool);
  const std::size_t row_block = float_row_block(ops, w.cols);
  for_each_tile_item(
      pool, w.rows, row_block, n_tokens,
      [&](std::size_t r0, std::size_t r1, std::size_t t0, std::size_t t1) {
        const float* rows = nullptr;
        if (w.dtype == DType::kF32) {
          rows = static_cast<const float*>(w.data) + r0 * w.cols;
        } else {
          float* buffer = thread_scratch<float, TileRows>(row_block * w.cols);
          for (std::size_t r = r0; r < r1; ++r) {
            const float* decoded =
                decode_row(ops, w.dtype, base + r * row_bytes, w.cols, buffer + (r - r0) * w.cols);
            (void)decoded;  // never the row itself: only F32 rows are returned in place
          }
          rows = buffer;
        }
        ops.float_gemm(rows, w.cols, r1 - r0, x + t0 * w.cols, w.cols, t1 - t0, w.cols,
                       y + t0 * w.rows + r0, w.rows);
      },
      w.dtype == DType::kF32 ? stored_rows_token_chunk(w.rows, row_block, n_tokens, pool)
                             : float_token_chunk(w.rows, row_block, n_tokens, pool));
  return true;
}

// Several tokens through one weight, reading the activation forms `forms` makes (or already made
// for another weight of the same input).
void matmul_tokens(const VecOps& ops, const MatrixView& w, TokenForms& forms, float* y,
                   ThreadPool* pool) {
  const std::size_t n_tokens = forms.n_tokens();
  if (w.rows * w.cols * n_tokens < 2 * kMinParallelWork) pool = nullptr;  // not worth a wake-up
  const KQuantGemm kgemm = ops.quantize_act_q8k != nullptr && ops.kquant_gemm != nullptr
                               ? ops.kquant_gemm(w.dtype)
                               : nullptr;
  if (kgemm != nullptr) return kquant_matmul(ops, kgemm, w, forms, y, pool);
  // Float-decoded encodings (F32, F16, BF16, ...): a batch of up to kTokenTile tokens takes the
  // one-token kernels below, token by token over each decoded row, so every element is the
  // one-token path's value bit for bit (FloatGemm rounds differently: one accumulator per element
  // instead of dot_f32's four). A speculative verification of up to 15 drafts therefore scores
  // each position exactly as a decode would; longer batches (prompts) keep the faster tiles.
  const bool integer_tiles = ops.quantize_act_q8 != nullptr && ops.quant_gemm != nullptr &&
                             ops.quant_gemm(w.dtype) != nullptr;
  if ((integer_tiles || n_tokens > kTokenTile) && tiled_matmul(ops, w, forms, y, pool)) return;
  const std::size_t row_bytes = packed_row_bytes(w.dtype, w.cols);
  const auto* base = static_cast<const std::byte*>(w.data);

  // Integer path: the 8-bit activation blocks.
  const QuantRowDot qdot = ops.quantize_act_q8 != nullptr ? ops.quant_row_dot(w.dtype) : nullptr;
  const std::size_t n_blocks = w.cols / 32;
  const ActQ8Block* xq = qdot != nullptr ? forms.q8(pool) : nullptr;

  // F16 / BF16 rows against the activations stored in the weights' type: the values below, bit
  // for bit.
  if (half_token_rows(ops, w, forms, y, pool)) return;

  const float* x = forms.f32();
  auto rows = [&](std::size_t r0, std::size_t r1) {
    float* buffer = qdot != nullptr ? nullptr : thread_scratch<float, DecodedRow>(w.cols);
    for (std::size_t t0 = 0; t0 < n_tokens; t0 += kTokenTile) {
      const std::size_t t1 = std::min(n_tokens, t0 + kTokenTile);
      for (std::size_t o = r0; o < r1; ++o) {
        const void* row = base + o * row_bytes;
        if (qdot != nullptr) {
          for (std::size_t t = t0; t < t1; ++t) {
            y[t * w.rows + o] = qdot(row, xq + t * n_blocks, n_blocks);
          }
          continue;
        }
        const float* decoded = decode_row(ops, w.dtype, row, w.cols, buffer);
        if (t1 - t0 > 1 && ops.dot_f32_tokens != nullptr) {
          ops.dot_f32_tokens(decoded, x + t0 * w.cols, w.cols, t1 - t0, w.cols, y + t0 * w.rows + o,
                             w.rows);
          continue;
        }
        for (std::size_t t = t0; t < t1; ++t) {
          y[t * w.rows + o] = ops.dot_f32(decoded, x + t * w.cols, w.cols);
        }
      }
    }
  };
  parallel_for(pool, w.rows, rows, std::max(kRowGrain, grain_for(w.cols)));
}

}  // namespace

void matmul(const VecOps& ops, const MatrixView& w, const float* x, std::size_t n_tokens, float* y,
            ThreadPool* pool) {
  if (w.rows == 0 || n_tokens == 0) return;
  if (n_tokens == 1) return matmul_one_token(ops, {&w, 1}, x, {&y, 1}, pool);
  TokenForms forms(ops, x, n_tokens, w.cols);
  matmul_tokens(ops, w, forms, y, pool);
}

void matmul_shared_input(const VecOps& ops, std::span<const MatrixView> ws, const float* x,
                         std::size_t n_tokens, std::span<float* const> ys, ThreadPool* pool) {
  if (ws.empty() || n_tokens == 0) return;
  if (n_tokens == 1) return matmul_one_token(ops, ws, x, ys, pool);
  TokenForms forms(ops, x, n_tokens, ws[0].cols);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    if (ws[i].rows > 0) matmul_tokens(ops, ws[i], forms, ys[i], pool);
  }
}

}  // namespace eredu::cpu::detail
