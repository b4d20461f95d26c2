// AVX-512 VNNI products of K-quant (Q2_K..Q6_K) and IQ4_XS weights laid out in groups of 16 rows
// (row_groups.hpp), for one token (decode) and for several (prompts, short batches). Each value is
// the definition's, reference::dot_q8_K, bit for bit: per 256-block the exact integer sums
// (row_groups_avx512.hpp), then the definition's one or two fused multiply-adds, block after
// block, one float chain per row (row r in lane r).
//
// One token, per block of a group: a code vector holds one 4-element slice of the 16 rows per
// nibble (Q4_K, Q5_K, Q6_K, IQ4_XS; Q5_K and Q6_K with their top bits from one or two more
// vectors, IQ4_XS looked up in the codebook) or per bit pair (Q2_K, Q3_K; Q3_K's third bit from
// another vector), so a vpdpbusd with the slice's 4 activation bytes broadcast from memory adds 4
// products to every row's lane. The rows' scales apply per unit of scale with one vpmulld (a
// 16-byte load, widened), or for two units of 16 at once with one vpdpwssd (Q2_K, Q3_K: the two
// units' sums as the int16 halves of a lane); minimum terms are vpdpwssd of the rows' minimums
// with the activation's sums, code offsets (Q6_K, IQ4_XS) a subtraction per unit. No lane is ever
// reduced across.
//
// Several tokens: each group's blocks are unpacked, once per call, into the prompt tiles' layout
// (kquant_prompt_groups_avx512.hpp: a byte per code, int32 scales, float d / dmin), and the prompt
// tile forms the same exact sums there; the row-group layout is that layout with the codes still
// packed, so the unpacking is a few masks per vector.
//
// IQ4_NL and Q4_0 .. Q8_0 (blocks of 32, q8_0 activations) have their one-token products in
// iq4nl_row_groups_avx512.cpp and block32_row_groups_avx512.cpp, their prompt products in
// quant_prompt_avx512.cpp (repacked from the groups); short batches take the one-token product
// once per token (matmul.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../prompt_tiles.hpp"
#include "../row_groups.hpp"
#include "../vec_ops.hpp"
#include "kquant_prompt_groups_avx512.hpp"
#include "row_groups_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

static_assert(kRowGroupRows == kquant_tiles::kLanes, "a row group is a prompt tile's row group");

constexpr std::size_t kPreparedChunk = 64;
// activation blocks per pass: rows of up to 16384

template <typename L>
void decode(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
            float* y) {
  using Block = typename L::Block;
  const auto* blocks = static_cast<const Block*>(groups);
  alignas(64) std::int32_t prepared[L::kPrepared * kPreparedChunk];
  for (std::size_t b0 = 0; b0 < n_super; b0 += kPreparedChunk) {
    const std::size_t n = std::min(kPreparedChunk, n_super - b0);
    for (std::size_t b = 0; b < n; ++b)
      L::prepare(x[b0 + b], prepared + L::kPrepared * b);
    for (std::size_t g = 0; g < n_groups; ++g) {
      const Block* gb = blocks + g * n_super + b0;
      float* yg = y + g * kRowGroupRows;
      __m512 acc = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(yg);
      for (std::size_t b = 0; b < n; ++b) {
        // A group's blocks are one stream: hinted into L2 kGroupStreamAheadBytes ahead where the
        // layout is read as two planes (row_groups_avx512.hpp: kStreamHinted). One Zen 4 thread
        // from memory (16384 x 8192): Q6_K 11.5-14.4 -> 22.8-28.2 GB/s with the hint.
        if constexpr (L::kStreamHinted) {
          const char* ahead = reinterpret_cast<const char*>(gb + b) + kGroupStreamAheadBytes;
          for (std::size_t line = 0; line < sizeof(Block); line += 64)
            _mm_prefetch(ahead + line, _MM_HINT_T1);
        }
        const std::int32_t* p = prepared + L::kPrepared * b;
        acc = kquant_tiles::finish_block<typename L::F>(
            row_groups::halves_to_floats(gb[b].d), L::dmin(gb[b]), L::isum(gb[b], x[b0 + b], p),
            L::msum(gb[b], p), x[b0 + b].d, acc);
      }
      _mm512_storeu_ps(yg, acc);
    }
  }
}

template <typename L>
void gemm(const void* groups, std::size_t n_groups, const enc::BlockQ8_K* x, std::size_t n_super,
          std::size_t n, float* y, std::size_t ldy) {
  using kquant_tiles::GroupBlock;
  using kquant_tiles::kLanes;
  using kquant_tiles::kTokens;
  const auto* blocks = static_cast<const typename L::Block*>(groups);
  GroupBlock* unpacked = group_scratch<GroupBlock>(n_groups * n_super);
  run_prompt_item<kLanes, kTokens>(
      n_groups * kLanes, n,
      [&](std::size_t g, std::size_t) {
        L::unpack(blocks + g * n_super, n_super, unpacked + g * n_super);
      },
      [&](std::size_t g, std::size_t, std::size_t t0, std::size_t rn, auto token) {
        const enc::BlockQ8_K* xt[kTokens];
        for (std::size_t t = 0; t < kTokens; ++t)
          xt[t] = x + token(t) * n_super;
        kquant_tiles::tile<typename L::F, kTokens>(unpacked + g * n_super, n_super, xt, rn,
                                                   static_cast<__mmask16>(0xFFFF),
                                                   y + t0 * ldy + g * kLanes, ldy);
      });
}

}  // namespace

RowGroupProducts row_group_products_avx512(DType dtype) {
  switch (dtype) {
    case DType::kQ2_K:
      return {decode<row_groups::Q2KGroups>, gemm<row_groups::Q2KGroups>};
    case DType::kQ3_K:
      return {decode<row_groups::Q3KGroups>, gemm<row_groups::Q3KGroups>};
    case DType::kQ4_K:
      return {decode<row_groups::Q4KGroups>, gemm<row_groups::Q4KGroups>};
    case DType::kQ5_K:
      return {decode<row_groups::Q5KGroups>, gemm<row_groups::Q5KGroups>};
    case DType::kQ6_K:
      return {decode<row_groups::Q6KGroups>, gemm<row_groups::Q6KGroups>};
    case DType::kIQ4_XS:
      return {decode<row_groups::IQ4XSGroups>, gemm<row_groups::IQ4XSGroups>};
    case DType::kIQ4_NL:
      return {.decode_q8 = iq4nl_row_group_decode_avx512(),
              .gemm_q8 = row_group_prompt_gemm_avx512(dtype)};
    case DType::kQ4_0:
      return {.decode_q8 = q4_0_row_group_decode_avx512(),
              .gemm_q8 = row_group_prompt_gemm_avx512(dtype)};
    case DType::kQ8_0:
      return {.decode_q8 = q8_0_row_group_decode_avx512(),
              .gemm_q8 = row_group_prompt_gemm_avx512(dtype)};
    case DType::kQ4_1:
      return {.decode_q8 = q4_1_row_group_decode_avx512(),
              .gemm_q8 = row_group_prompt_gemm_avx512(dtype)};
    case DType::kQ5_0:
      return {.decode_q8 = q5_0_row_group_decode_avx512(),
              .gemm_q8 = row_group_prompt_gemm_avx512(dtype)};
    case DType::kQ5_1:
      return {.decode_q8 = q5_1_row_group_decode_avx512(),
              .gemm_q8 = row_group_prompt_gemm_avx512(dtype)};
    default:
      return {};
  }
}

}  // namespace eredu::cpu::detail
