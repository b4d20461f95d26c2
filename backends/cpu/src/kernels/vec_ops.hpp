#pragma once
// Internal: the per-ISA primitives the threaded kernels are built from. Each ISA provides one
// VecOps table; the kernels (matmul.cpp, attention.cpp, ...) are written once against it and
// compiled for the baseline, so only the primitives carry ISA-specific code.
//
// Translation units built with -mavx2 (avx2/*.cpp) or the AVX-512 flags (avx512/*.cpp) must not
// include headers with inline functions that other, baseline units also use (the linker would keep
// one copy, possibly the AVX2 one, and a baseline CPU would fault): they include only blocks.hpp
// (plain structs and constants), this header, <immintrin.h> and C headers, and keep everything but
// their exported accessor in an anonymous namespace.

#include <cstddef>
#include <cstdint>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::cpu::detail {

// An activation row quantized to 8-bit blocks of 32 (Q8_0 with a float scale, plus the block's
// scaled sum for the affine formats Q4_1 / Q5_1, as ggml's Q8_1).
struct ActQ8Block {
  float d;  // scale
  float s;  // d * sum(qs)
  std::int8_t qs[32];
};

// sum over blocks of (weight block . activation block) for one packed weight row.
using QuantRowDot = float (*)(const void* w_row, const ActQ8Block* x, std::size_t n_blocks);

// One token's product with m weight rows `w_stride` bytes apart, y[r] = the value quant_row_dot
// gives row r, bit for bit. It lays the activations out once for all its rows in `scratch`
// (quant_matvec_scratch_bytes(n_blocks) bytes, 64-byte aligned), so a decode product spends per
// weight block only what depends on the weights.
using QuantMatvec = void (*)(const void* w, std::size_t w_stride, std::size_t m,
                             const ActQ8Block* x, std::size_t n_blocks, float* y, void* scratch);
constexpr std::size_t quant_matvec_scratch_bytes(std::size_t n_blocks) {
  return 100 * (n_blocks + 1);  // 96 per block laid out for the products, 4 for its scale
}

// Tiled products for several tokens at once, written into y[t * ldy + r] for rows r < m and tokens
// t < n. The weight rows are `w_stride` bytes (or floats) apart, the activation rows `n_blocks`
// blocks (or `ldx` floats) apart.
//
// QuantGemm gives each element exactly the value quant_row_dot gives it (the same operations in
// the same order, only register-blocked over several rows and tokens), so a matmul result does not
// depend on how rows and tokens are grouped.
// `scratch` holds quant_gemm_scratch_floats(m, n_blocks) floats for the call's own use.
using QuantGemm = void (*)(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                           std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy,
                           float* scratch);
constexpr std::size_t quant_gemm_scratch_floats(std::size_t m, std::size_t n_blocks) {
  return 2 * n_blocks * (m + 4);
}
// A prompt's 8-bit activations as the prompt products read them: token t's block b is 32 codes
// plus 128 as unsigned bytes at codes + (t * n_blocks + b) * 32, its scale at d[t * n_blocks + b]
// and its scaled sum (for Q4_1 / Q5_1's minimums) at s[t * n_blocks + b] (the values of the
// ActQ8Blocks they come from).
struct PromptActivations {
  const std::uint8_t* codes;
  const float* d;
  const float* s;
};
// A prompt product for a weight encoding (more than kTokenTile tokens), y[t * ldy + r], with
// numerics of its own (each kernel documents them); it is never used for one token or a short
// batch, so those keep the one-token values.
using QuantPromptGemm = void (*)(const void* w, std::size_t w_stride, std::size_t m,
                                 const PromptActivations& x, std::size_t n_blocks, std::size_t n,
                                 float* y, std::size_t ldy);
// K-quant (and IQ4_XS) products against q8_K activation blocks, for one or more tokens, written
// into y[t * ldy + r]: each element is exactly reference::dot_q8_K of its row and token (same
// integer sums, same fused multiply-adds in the same order), whatever m, n and the tiling.
using KQuantGemm = void (*)(const void* w, std::size_t w_stride, std::size_t m,
                            const encoding::BlockQ8_K* x, std::size_t n_super, std::size_t n,
                            float* y, std::size_t ldy);

// FloatGemm: per element one FMA chain over k, as wide as the table's vectors (AVX2: 8 lanes,
// AVX-512: 16), summed across lanes, then the tail of k added in order (the order llamafile's
// tinyBLAS uses for prompt batches, which differs from dot_f32's four-chain order). The value
// depends on the table and k only, never on m, n or the tiling.
using FloatGemm = void (*)(const float* w, std::size_t ldw, std::size_t m, const float* x,
                           std::size_t ldx, std::size_t n, std::size_t k, float* y,
                           std::size_t ldy);
// HalfGemm: FloatGemm's values for F16 (BF16) weights and activations, widened as they are loaded
// (the same chains on the same exact values as FloatGemm on the widened rows), so that the tiles
// read half the bytes and the rows need no widening pass.
using HalfGemm = void (*)(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                          const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                          float* y, std::size_t ldy);

// Products of weights laid out in row groups of 16 (row_groups.hpp), n_groups groups from
// `groups`: one token, y[16 g + r]; several, y[t * ldy + 16 g + r] for tokens t < n. Values:
// kquant_gemm's, bit for bit. Null members: the table reads that encoding's rows as stored.
using RowGroupDecode = void (*)(const void* groups, std::size_t n_groups,
                                const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
using RowGroupGemm = void (*)(const void* groups, std::size_t n_groups,
                              const encoding::BlockQ8_K* x, std::size_t n_super, std::size_t n,
                              float* y, std::size_t ldy);
// The one-token product of row groups of an encoding with blocks of 32 (Q4_0 .. Q8_0, IQ4_NL)
// (activations in 8-bit blocks of 32): y[16 g + r], quant_row_dot's values bit for bit.
using RowGroupDecodeQ8 = void (*)(const void* groups, std::size_t n_groups, const ActQ8Block* x,
                                  std::size_t n_blocks, float* y);
// Their prompt product (more than kTokenTile tokens): y[t * ldy + 16 g + r] for tokens t < n,
// quant_prompt_gemm's values bit for bit.
using RowGroupGemmQ8 = void (*)(const void* groups, std::size_t n_groups,
                                const PromptActivations& x, std::size_t n_blocks, std::size_t n,
                                float* y, std::size_t ldy);
// Set for an encoding this table wants laid out in row groups at load: decode and gemm (q8_K
// activations), or decode_q8 (8-bit blocks of 32) with gemm_q8 where prompts read the groups too
// (short batches take decode_q8 once per token: their values are the one-token ones).
struct RowGroupProducts {
  RowGroupDecode decode = nullptr;
  RowGroupGemm gemm = nullptr;
  RowGroupDecodeQ8 decode_q8 = nullptr;
  RowGroupGemmQ8 gemm_q8 = nullptr;
  bool any() const noexcept {
    return (decode != nullptr && gemm != nullptr) || decode_q8 != nullptr;
  }
};

struct VecOps {
  // Sum of a[i] * b[i] with a fixed order of operations (depends on n only).
  float (*dot_f32)(const float* a, const float* b, std::size_t n);
  // y[i] += alpha * x[i].
  void (*axpy_f32)(float alpha, const float* x, float* y, std::size_t n);
  // Exact F16 -> F32 widening.
  void (*f16_to_f32)(const std::uint16_t* src, float* dst, std::size_t n);
  // F32 -> F16, rounding to nearest even (the rounding of round_act_to_half for F16 weights);
  // null where the ISA has no conversion (only f16_gemm needs it).
  void (*f32_to_f16)(const float* src, std::uint16_t* dst, std::size_t n);
  // F32 -> BF16, rounding to nearest even with NaN kept quiet (the rounding of round_act_to_half
  // for BF16 weights); null where only bf16_gemm would need it and it is absent.
  void (*f32_to_bf16)(const float* src, std::uint16_t* dst, std::size_t n);
  // One weight row against n_tokens activation rows `ldx` floats apart, reading the row once per
  // few tokens: out[t * out_stride] = dot_f32(a, x + t * ldx, n), bit for bit. Null: one dot per
  // token.
  void (*dot_f32_tokens)(const float* a, const float* x, std::size_t ldx, std::size_t n_tokens,
                         std::size_t n, float* out, std::size_t out_stride);
  // The same for an F16 (BF16) weight row against activations stored as F16 (BF16), `ldx` halves
  // apart: dot_f32 of the widened row and the widened activations, bit for bit. These paths round
  // the activations to the weights' type (as ggml does), so storing them so loses nothing and
  // halves what each weight row re-reads from cache. Null: rows decoded, then dot_f32.
  void (*dot_f16_f16_tokens)(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                             std::size_t n_tokens, std::size_t n, float* out,
                             std::size_t out_stride);
  void (*dot_bf16_bf16_tokens)(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                               std::size_t n_tokens, std::size_t n, float* out,
                               std::size_t out_stride);
  // Quantizes n (multiple of 32) floats to ActQ8Blocks; null when the ISA has no integer path.
  void (*quantize_act_q8)(const float* x, ActQ8Block* y, std::size_t n);
  // The integer dot for a weight encoding, or null (then the row is decoded to floats).
  QuantRowDot (*quant_row_dot)(DType dtype);
  // The one-token product for a weight encoding, or null (then quant_row_dot row by row).
  QuantMatvec (*quant_matvec)(DType dtype);
  // Quantizes n (multiple of 256) floats to q8_K blocks (reference::quantize_row_q8_K); null
  // when the ISA has no K-quant integer path.
  void (*quantize_act_q8k)(const float* x, encoding::BlockQ8_K* y, std::size_t n);
  // The K-quant integer product for a weight encoding, or null (then rows are decoded).
  KQuantGemm (*kquant_gemm)(DType dtype);
  // A K-quant product for prompts (more than kTokenTile tokens: it repacks its rows once per work
  // item), with kquant_gemm's values; null, or null for an encoding: kquant_gemm.
  KQuantGemm (*kquant_prompt_gemm)(DType dtype);
  // The products of an encoding's row groups, for the encodings this table wants laid out so at
  // load (both members set), or null: every weight is read as stored.
  RowGroupProducts (*row_group_products)(DType dtype);
  // Rounds activations to the precision of F16 / BF16 weights before the dot products, as ggml
  // does (its vec_dot_type for those weights is F16 / BF16); null: activations stay F32.
  void (*round_act_to_half)(DType weight_dtype, const float* x, float* y, std::size_t n);
  // The tiled integer product for a weight encoding, or null (then rows go through quant_row_dot
  // or are decoded). Used for more than one token.
  QuantGemm (*quant_gemm)(DType dtype);
  // The prompt product for a weight encoding, or null (then quant_gemm); null: none at all.
  QuantPromptGemm (*quant_prompt_gemm)(DType dtype);
  // The tiled float product, or null (then dot_f32 per element). Used for more than one token on
  // weights decoded (or stored) as F32.
  FloatGemm float_gemm;
  // Rows of float_gemm's register tile: the tiled path cuts row blocks in multiples of it (a block
  // of 15 rows ran a 3-row edge tile in every block on the 4-row AVX-512 tiles, ~15% of F16
  // prefill).
  std::size_t float_gemm_row_tile;
  // The tiled product of F16 weights with activations rounded to F16, or null (then the rows are
  // widened for float_gemm). Used for more than kTokenTile tokens, as float_gemm.
  HalfGemm f16_gemm;
  // The same for BF16 weights and activations rounded to BF16, or null.
  HalfGemm bf16_gemm;
  // Attention over KV rows `stride` elements apart (F32, or F16 when `f16`), for dim a multiple of
  // 8; null: the kernel calls dot_f32 / axpy_f32 per row. attention_scores: out[j] = the value
  // dot_f32(q, row j) gives. attention_weighted_sum: out = the value of zero-filling out and then
  // axpy_f32(w[j], row j, out) for j = 0 .. n_rows - 1.
  void (*attention_scores)(const float* q, const void* k, bool f16, std::size_t stride,
                           std::size_t n_rows, std::size_t dim, float* out);
  void (*attention_weighted_sum)(const float* w, const void* v, bool f16, std::size_t stride,
                                 std::size_t n_rows, std::size_t dim, float* out);
  // In place softmax numerator: s[j] = exp(s[j] * scale - max_j(s[j] * scale)); returns the sum.
  // A vectorized exp within about one ulp of std::exp (as ggml's SIMD softmax); null: std::exp and
  // a sequential sum.
  float (*attention_softmax)(float* s, std::size_t n, float scale);
  // out = silu(gate) * up with the vectorized exp (as ggml's SIMD silu); null: std::exp per
  // element. out may equal gate or up.
  void (*silu_mul)(const float* gate, const float* up, float* out, std::size_t n);
  // Attention of up to kAttentionBlockRows query rows that read the same KV head (the heads of a
  // query group, for one or more tokens), or null (then one row at a time through
  // attention_scores / attention_weighted_sum). Numerics of its own (documented by the kernel),
  // but a row's value may not depend on the other rows of its block, so that attention() can use
  // it for prompts, decode and short batches alike and a token's value does not depend on the
  // batch it is in.
  void (*attention_block)(const struct AttentionBlock& block, float* scratch);
};

// The rows of one attention_block call: row r has query q[r] (dim floats), sees the cache
// positions j < visible[r] and writes out[r]; the cache rows of its KV head are `stride` elements
// apart (F16 when f16, else F32), from position 0. Keys are rows the same way when
// key_block_stride is 0; otherwise they are in blocks of 16 positions (KeyLayout::kBlocks16):
// element d of position j at k + j / 16 * key_block_stride + d * 16 + j % 16.
inline constexpr std::size_t kAttentionBlockRows = 16;
struct AttentionBlock {
  const float* q[kAttentionBlockRows];
  float* out[kAttentionBlockRows];
  std::size_t visible[kAttentionBlockRows];
  std::size_t n_rows;
  const void* k;
  const void* v;
  bool f16;
  std::size_t stride;
  std::size_t key_block_stride;
  std::size_t dim;
  float scale;
};
// Floats of scratch attention_block needs for n_keys visible positions and head size dim.
constexpr std::size_t attention_block_scratch(std::size_t n_keys, std::size_t dim) {
  return (n_keys + 8) * kAttentionBlockRows + dim * kAttentionBlockRows +
         8 * ((dim + 15) / 16 * 16) + 8 * (n_keys + 16) + 16;
}

// AVX2 tiled kernels (avx2/gemm_avx2.cpp), reached only through vec_ops_avx2().
inline constexpr std::size_t kFloatGemmRowsAvx2 = 3;  // float_gemm_avx2's register tile rows
QuantGemm quant_gemm_avx2(DType dtype);
void float_gemm_avx2(const float* w, std::size_t ldw, std::size_t m, const float* x,
                     std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy);
void f16_gemm_avx2(const std::uint16_t* w, std::size_t ldw, std::size_t m, const std::uint16_t* x,
                   std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy);

// AVX2 K-quant and IQ4 kernels (avx2/kquant_avx2.cpp), reached only through vec_ops_avx2().
void quantize_act_q8k_avx2(const float* x, encoding::BlockQ8_K* y, std::size_t n);
KQuantGemm kquant_gemm_avx2(DType dtype);
// One-token products y[r] for r < m: what a table's kquant_gemm runs for one token, with its values
// bit for bit. AVX2 Q3_K .. Q6_K: avx2/kquant_decode_avx2.cpp.
using KQuantDecode = void (*)(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q3k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q6k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q4k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q5k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q2k_avx2(const void* w, std::size_t w_stride, std::size_t m,
                            const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_iq4xs_avx2(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
KQuantGemm kquant_prompt_gemm_avx2(DType dtype);
// The K-quant and IQ4_XS row groups' products (avx2/row_groups_avx2.cpp: Q4_K, Q5_K;
// avx2/bit_pair_row_groups_avx2.cpp: Q2_K, Q3_K; avx2/q6k_row_groups_avx2.cpp;
// avx2/iq4xs_row_groups_avx2.cpp); empty for the other encodings.
RowGroupProducts row_group_products_avx2(DType dtype);
RowGroupProducts bit_pair_row_group_products_avx2(DType dtype);
RowGroupProducts q6k_row_group_products_avx2();
RowGroupProducts iq4xs_row_group_products_avx2();
QuantPromptGemm quant_prompt_gemm_avx2(DType dtype);
QuantMatvec quant_matvec_avx2(DType dtype);
QuantMatvec quant_matvec_iq4_nl_avx2();  // avx2/iq4nl_matvec_avx2.cpp
float row_dot_iq4_nl_avx2(const void* w_row, const ActQ8Block* x, std::size_t n_blocks);
void gemm_iq4_nl_avx2(const void* w, std::size_t w_stride, std::size_t m, const ActQ8Block* x,
                      std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy,
                      float* scratch);

// AVX-512 kernels (avx512/*.cpp), reached only through vec_ops_avx512(); null for an encoding
// they do not cover (the table then keeps the AVX2 kernel).
inline constexpr std::size_t kFloatGemmRowsAvx512 = 6;  // float_gemm_avx512's register tile rows
// How far ahead the AVX-512 Q4_0 / Q8_0 row dots (short batches) hint the weight stream. The AVX2
// kernels' ~0.5 KiB (tuned on a Zen 4 guest) left a Zen 5 guest's decode waiting on memory:
// 2-4 KiB gave llama1b decode Q4_0 39 -> 49-51, Q8_0 27 -> 33-40, Q6_K 38 -> 44-58 tokens/s
// (2 threads, interleaved sweeps of 0.5-9 KiB).
inline constexpr std::size_t kAvx512DecodeAheadBytes = 4096;
// The one-token products that take rows in groups of four (the AVX-512 K-quant decode and Q4_0 /
// Q8_0 products, the AVX2 Q4_0 product) hint the group's bytes as one stream, at least this far
// ahead of the group, into L2 (_MM_HINT_T1), as the F16 token kernels do:
// on a Zen 4 guest llama1b Q4_K_M decode went 34.9 -> 37.2 tokens/s (medians of 5 interleaved
// runs). For Q4_0 / Q8_0 one row at a time this hint changed Q4_0 nothing and slowed Q8_0
// (18.8 -> 16.5 on llama1b); four rows at a time it took them from 40 / 24 (one group ahead into
// L1) to 47 / 29 (avx512/quant_matvec_avx512.cpp).
inline constexpr std::size_t kGroupStreamAheadBytes = 8192;
KQuantGemm kquant_gemm_avx512(DType dtype);
// One-token Q2_K .. Q6_K products (avx512/kquant_decode_avx512.cpp) and IQ4_XS
// (avx512/iq4xs_decode_avx512.cpp).
void kquant_decode_iq4xs_avx512(const void* w, std::size_t w_stride, std::size_t m,
                                const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q2k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q3k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q4k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q5k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
void kquant_decode_q6k_avx512(const void* w, std::size_t w_stride, std::size_t m,
                              const encoding::BlockQ8_K* x, std::size_t n_super, float* y);
QuantRowDot quant_row_dot_avx512(DType dtype);
QuantMatvec quant_matvec_avx512(DType dtype);
// Q4_1 / Q5_0 / Q5_1 (two rows per register, the AVX2 row dots' values); null for the others.
QuantMatvec quant_matvec_row_pairs_avx512(DType dtype);
// IQ4_NL (four rows side by side, the row dot's values: avx512/iq4nl_matvec_avx512.cpp).
QuantMatvec quant_matvec_iq4_nl_avx512();
QuantGemm quant_gemm_avx512(DType dtype);
QuantPromptGemm quant_prompt_gemm_avx512(DType dtype);
KQuantGemm kquant_prompt_gemm_avx512(DType dtype);
// Q2_K..Q6_K, IQ4_XS, IQ4_NL and Q4_0 .. Q8_0 row groups (avx512/row_groups_avx512.cpp); empty for
// the other encodings.
RowGroupProducts row_group_products_avx512(DType dtype);
// The IQ4_NL one (avx512/iq4nl_row_groups_avx512.cpp), the Q4_0, Q8_0, Q4_1, Q5_0 and Q5_1 ones
// (avx512/block32_row_groups_avx512.cpp).
RowGroupDecodeQ8 iq4nl_row_group_decode_avx512();
RowGroupDecodeQ8 q4_0_row_group_decode_avx512();
RowGroupDecodeQ8 q8_0_row_group_decode_avx512();
RowGroupDecodeQ8 q4_1_row_group_decode_avx512();
RowGroupDecodeQ8 q5_0_row_group_decode_avx512();
RowGroupDecodeQ8 q5_1_row_group_decode_avx512();
// Their prompt products (avx512/quant_prompt_avx512.cpp).
RowGroupGemmQ8 row_group_prompt_gemm_avx512(DType dtype);
void bf16_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                      const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                      float* y, std::size_t ldy);
// BF16 products through vdpbf16ps (bf16_dot_gemm_avx512.cpp, built with -mavx512bf16): only
// where cpuid lists AVX512_BF16.
void bf16_dot_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                          const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                          float* y, std::size_t ldy);
void f16_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m, const std::uint16_t* x,
                     std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy);
// The same F16 products in 256-bit vectors (the AVX2 table's values bit for bit): chosen where the
// CPU splits 512-bit operations in two (CpuFeatures::avx512_split).
void f16_gemm_avx512_half_width(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                                const std::uint16_t* x, std::size_t ldx, std::size_t n,
                                std::size_t k, float* y, std::size_t ldy);
void float_gemm_avx512(const float* w, std::size_t ldw, std::size_t m, const float* x,
                       std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy);
void attention_block_avx512(const AttentionBlock& block, float* scratch);
// AVX2 attention of a block of query rows (avx2/attention_block_avx2.cpp), reached only through
// vec_ops_avx2(); the values of attention_block_avx512, bit for bit.
void attention_block_avx2(const AttentionBlock& block, float* scratch);
void dot_f16_f16_tokens_avx512(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                               std::size_t n_tokens, std::size_t n, float* out,
                               std::size_t out_stride);
void dot_bf16_bf16_tokens_avx512(const std::uint16_t* a, const std::uint16_t* x, std::size_t ldx,
                                 std::size_t n_tokens, std::size_t n, float* out,
                                 std::size_t out_stride);

const VecOps& vec_ops_generic() noexcept;
const VecOps& vec_ops_avx2() noexcept;  // call only when the CPU has AVX2 + FMA + F16C
// Call only when isa_supported(Isa::kAvx512): AVX-512 F/BW/VL/DQ + VNNI with the OS's support.
const VecOps& vec_ops_avx512() noexcept;
// The AMX prompt tiles (amx/quant_prompt_amx.cpp): the AVX-512 prompt tiles' values bit for bit.
QuantPromptGemm quant_prompt_gemm_amx(DType dtype);
// The same for a load's row groups of those encodings (amx/quant_prompt_amx.cpp).
RowGroupGemmQ8 row_group_prompt_gemm_amx(DType dtype);
// The AMX prompt tiles for Q2_K..Q6_K (amx/kquant_prompt_amx.cpp; the definition's values bit for
// bit), and the AVX-512 ones for IQ4_XS.
KQuantGemm kquant_prompt_gemm_amx(DType dtype);
// Row groups: the AVX-512 decode, K-quant prompts on the AMX tiles (amx/kquant_prompt_amx.cpp).
RowGroupProducts row_group_products_amx(DType dtype);
// Call only when isa_supported(Isa::kAmx): the AVX-512 table's requirements plus AMX-TILE and
// AMX-INT8, with the tile state enabled and granted to this process.
const VecOps& vec_ops_amx() noexcept;

}  // namespace eredu::cpu::detail
