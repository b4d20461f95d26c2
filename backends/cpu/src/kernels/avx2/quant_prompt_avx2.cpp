// AVX2 prompt tiles for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL weights: the products of more than
// kTokenTile tokens. Compiled with -mavx2 -mfma -mf16c like the other avx2/ units and reached only
// through vec_ops_avx2() (the AVX-512 table has its own, avx512/quant_prompt_avx512.cpp).
//
// Numerics: those of the AVX-512 prompt tiles, so both tables give the same values (tested bit for
// bit against the definition, test_quant_prompt_tiles.cpp): per (row, token), block after block,
// the exact integer dot S_b of the block's codes with the activation codes, then
// acc = fma(d_w * d_x, float(S_b), acc), and for Q4_1 / Q5_1 acc = fma(m_w, s_x, acc).
//
// Layout: a work item first repacks its rows in groups of 8 (dword g of row r at codes[g][r],
// signed codes). Per 4-code slice and token, _mm256_maddubs_epi16 multiplies the activation bytes,
// broadcast to every lane as unsigned (value + 128), with the 8 rows' codes: two int16 pair sums
// per row of at most 2 * 255 * 8 = 4080 (Q4_0), 2 * 255 * 15 = 7650 (Q4_1), 2 * 255 * 16 = 8160
// (Q5_0) or 2 * 255 * 31 = 15810 (Q5_1), so 8, 4, 4 or 2 slices add up in int16 (at most 32767)
// before one _mm256_madd_epi16 widens them. The
// offset's share, 128 * (sum of the row's codes), is computed at the repack and is the start value
// of every token's sum. Q8_0 multiplies differently (see Q8_0 below).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../prompt_tiles.hpp"
#include "../vec_ops.hpp"
#include "block_codes_avx2.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "simd_avx2.hpp"
#include "transpose_avx2.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

constexpr std::size_t kLanes = 8;  // rows per group, one int32 lane each
constexpr int kTokens = 4;         // tokens per tile

// One block of an 8-row group, repacked (with the rows' minimums for the affine encodings).
template <bool kAffine>
struct GroupBlock {
  alignas(32) std::int32_t codes[8][kLanes];  // 4 codes per row per dword
  alignas(32) std::int32_t start[kLanes];     // -128 * sum of the row's 32 codes
  alignas(32) float d[kLanes];                // the row's block scale
};
template <>
struct GroupBlock<true> : GroupBlock<false> {
  alignas(32) float m[kLanes];  // the row's block minimum
};

// Per encoding: the block's codes (block_codes_avx2.hpp), whether it has a minimum, whether the
// activations enter signed (Q8_0, below), and how many 4-code slices of int16 pair sums fit int16
// (see above).
struct Q4_0 : Q4_0SignedCodes {
  static constexpr bool kAffine = false;
  static constexpr bool kSignTrick = false;
  static constexpr int kSlicesPerWiden = 8;
};

struct Q4_1 : Q4_1Codes {
  static constexpr bool kAffine = true;
  static constexpr bool kSignTrick = false;
  static constexpr int kSlicesPerWiden = 4;
};

struct Q5_0 : Q5_0SignedCodes {
  static constexpr bool kAffine = false;
  static constexpr bool kSignTrick = false;
  static constexpr int kSlicesPerWiden = 4;
};

struct Q5_1 : Q5_1Codes {
  static constexpr bool kAffine = true;
  static constexpr bool kSignTrick = false;
  static constexpr int kSlicesPerWiden = 2;
};

// Q8_0: codes of -128..127 against activation codes + 128 would reach 2 * 255 * 128 per pair sum.
// Instead the activations enter signed (the + 128 undone) and _mm256_maddubs_epi16 multiplies the
// codes' magnitudes (unsigned, at most 128) with the activations carrying the codes' signs: a pair
// sum is at most 2 * 128 * 127 = 32512, so every slice is widened at once, and no offset is
// subtracted.
struct Q8_0 : Q8_0SignedCodes {
  static constexpr bool kAffine = false;
  static constexpr bool kSignTrick = true;
  static constexpr int kSlicesPerWiden = 1;
};

// IQ4_NL's codebook values reach -127 and 113: as Q8_0.
struct IQ4_NL : IQ4_NLSignedCodes {
  static constexpr bool kAffine = false;
  static constexpr bool kSignTrick = true;
  static constexpr int kSlicesPerWiden = 1;
};

// Loads 8 halves and widens them.
inline __m256 widen8(const std::uint16_t (&h)[kLanes]) {
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

template <typename F>
void repack_group(const std::byte* w, std::size_t w_stride, std::size_t rows, std::size_t n_blocks,
                  GroupBlock<F::kAffine>* out) {
  const auto row = [&](std::size_t r) {
    return reinterpret_cast<const typename F::Block*>(w + r * w_stride);
  };
  for (std::size_t b = 0; b < n_blocks; ++b) {
    __m256i z[8];
    alignas(16) std::uint16_t d[kLanes] = {};
    for (std::size_t r = 0; r < kLanes; ++r)
      z[r] = r < rows ? F::codes(row(r)[b]) : _mm256_setzero_si256();
    for (std::size_t r = 0; r < rows; ++r)
      d[r] = row(r)[b].d;
    transpose8(z);
    GroupBlock<F::kAffine>& gb = out[b];
    if constexpr (F::kAffine) {
      alignas(16) std::uint16_t m[kLanes] = {};
      for (std::size_t r = 0; r < rows; ++r)
        m[r] = row(r)[b].m;
      _mm256_store_ps(gb.m, widen8(m));
    }
    __m256i pairs = _mm256_setzero_si256();
    for (int g = 0; g < 8; ++g) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(gb.codes[g]), z[g]);
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_set1_epi8(1), z[g]));
    }
    const __m256i sum = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));  // the rows' code sums
    const __m256i start = F::kSignTrick
                              ? _mm256_setzero_si256()
                              : _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sum, 7));
    _mm256_store_si256(reinterpret_cast<__m256i*>(gb.start), start);
    _mm256_store_ps(gb.d, widen8(d));
  }
}

inline __m256i load8(const void* p) {
  return _mm256_load_si256(static_cast<const __m256i*>(p));
}

// A token tile's activations: token t's codes, scales and scaled sums.
template <int T>
struct TokenTile {
  const std::uint8_t* xu[T];
  const float* xd[T];
  const float* xs[T];
};

// One group of 8 rows x T tokens over all blocks: token t writes its row values to y + t * ldy
// (the first `rows`), for t < rn.
template <typename F, int T>
void tile(const GroupBlock<F::kAffine>* group, std::size_t n_blocks, const TokenTile<T>& x,
          std::size_t rn, std::size_t rows, float* y, std::size_t ldy) {
  __m256 acc[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
    acc[t] = _mm256_setzero_ps();
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const GroupBlock<F::kAffine>& gb = group[b];
    __m256i sum[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
      sum[t] = load8(gb.start);
#pragma GCC unroll 2
    for (int g0 = 0; g0 < 8; g0 += F::kSlicesPerWiden) {
      __m256i pairs[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t)
        pairs[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int g = g0; g < g0 + F::kSlicesPerWiden; ++g) {
        const __m256i codes = load8(gb.codes[g]);
        [[maybe_unused]] const __m256i magnitudes = _mm256_abs_epi8(codes);  // 128 for -128
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          std::uint32_t four;
          std::memcpy(&four, x.xu[t] + 32 * b + 4 * g, 4);
          __m256i p;
          if constexpr (F::kSignTrick) {
            const __m256i xv = _mm256_set1_epi32(static_cast<int>(four ^ 0x80808080U));
            p = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(xv, codes));
          } else {
            p = _mm256_maddubs_epi16(_mm256_set1_epi32(static_cast<int>(four)), codes);
          }
          pairs[t] = _mm256_add_epi16(pairs[t], p);
        }
      }
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t)
        sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(pairs[t], _mm256_set1_epi16(1)));
    }
    const __m256 wd = _mm256_load_ps(gb.d);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m256 scale = _mm256_mul_ps(wd, _mm256_set1_ps(x.xd[t][b]));
      acc[t] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sum[t]), acc[t]);
      if constexpr (F::kAffine)
        acc[t] = _mm256_fmadd_ps(_mm256_load_ps(gb.m), _mm256_set1_ps(x.xs[t][b]), acc[t]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    if (static_cast<std::size_t>(t) >= rn) continue;
    if (rows == kLanes) {
      _mm256_storeu_ps(y + t * ldy, acc[t]);
    } else {
      alignas(32) float v[kLanes];
      _mm256_store_ps(v, acc[t]);
      std::memcpy(y + t * ldy, v, rows * sizeof(float));
    }
  }
}

template <typename F>
void prompt_gemm(const void* w, std::size_t w_stride, std::size_t m, const PromptActivations& x,
                 std::size_t n_blocks, std::size_t n, float* y, std::size_t ldy) {
  using Group = GroupBlock<F::kAffine>;
  Group* groups = group_scratch<Group>((m + kLanes - 1) / kLanes * n_blocks);
  const auto* wb = static_cast<const std::byte*>(w);
  run_prompt_item<kLanes, kTokens>(
      m, n,
      [&](std::size_t g, std::size_t rows) {
        repack_group<F>(wb + g * kLanes * w_stride, w_stride, rows, n_blocks,
                        groups + g * n_blocks);
      },
      [&](std::size_t g, std::size_t rows, std::size_t t0, std::size_t rn, auto token) {
        TokenTile<kTokens> xt;
        for (std::size_t t = 0; t < kTokens; ++t) {
          xt.xu[t] = x.codes + token(t) * n_blocks * 32;
          xt.xd[t] = x.d + token(t) * n_blocks;
          xt.xs[t] = x.s + token(t) * n_blocks;
        }
        tile<F, kTokens>(groups + g * n_blocks, n_blocks, xt, rn, rows, y + t0 * ldy + g * kLanes,
                         ldy);
      });
}

}  // namespace

QuantPromptGemm quant_prompt_gemm_avx2(DType dtype) {
  switch (dtype) {
    case DType::kQ4_0:
      return prompt_gemm<Q4_0>;
    case DType::kQ4_1:
      return prompt_gemm<Q4_1>;
    case DType::kQ5_0:
      return prompt_gemm<Q5_0>;
    case DType::kQ5_1:
      return prompt_gemm<Q5_1>;
    case DType::kQ8_0:
      return prompt_gemm<Q8_0>;
    case DType::kIQ4_NL:
      return prompt_gemm<IQ4_NL>;
    default:
      return nullptr;
  }
}

}  // namespace eredu::cpu::detail
