// AVX-512 tiled float products for prompt batches: weights stored or decoded as F32 (FloatGemm),
// and F16 (BF16) weights with F16 (BF16) activations widened as they are loaded (HalfGemm).
// Compiled with the AVX-512 flags (backends/cpu/CMakeLists.txt) and reached only through
// vec_ops_avx512().
//
// Each element is one 16-lane FMA chain over k in steps of 16, then a fixed horizontal sum (the
// two 8-lane halves added, then the AVX2 hsum) and the k % 16 tail in order (the tile itself is
// float_tiles_avx512.hpp, shared with the vdpbf16ps products). An RM x RN tile keeps
// one accumulator per (row, token): per step RM weight loads and RN activation loads feed RM * RN
// multiply-adds, with no broadcast or lane insert between them. The values differ from the AVX2
// table's (8-lane chains) by float rounding only; they are tested against a float64 product, and
// do not depend on the tiling or the thread count. F16 and BF16 operands are widened exactly, so
// HalfGemm gives FloatGemm's value on the widened rows.
//
// Measured on a 2-core Zen 5 guest (llama1b F16, 128-token prompt, 2 threads, interleaved): the
// tile that reproduced the AVX2 chains (two tokens' 8-lane chains per register, a broadcast and an
// insert per operand pair, F32 rows widened into a buffer first) ran 104-121 tokens/s; the same
// 16-lane tile on widened F32 rows ran no faster (the F32 operands streamed from L2 at ~50 bytes a
// cycle); on the F16 rows as stored, 6 x 4, it runs 181-188.
//
// Zen 4 runs each 512-bit operation as two 256-bit halves, and there a 512-bit F16 widening costs
// more than two 256-bit ones: from L1, the 6 x 4 tile widening both operands ran 101-108 GFLOP/s
// per core, with only one widened 117 (the fused multiply-add peak), and a 6 x 4 tile of 256-bit
// vectors widening both 117. On such a CPU (CpuFeatures::avx512_split) the table takes
// F16HalfWidthSteps: the AVX2 table's 8-lane chains, so its values, in the 6 x 4 tile. On a 2-core
// Zen 4 guest: the 2048 x 8192 F16 product over 128 tokens, one thread, 2.90 -> 3.17 thousand
// tokens/s; llama1b F16 pp128 at 2 threads 94-96 -> 104-106 tokens/s, smol135m 588-745 -> 714-806
// (interleaved rounds). A 4 x 4 tile of them ran the same, 6 x 3 and 8 x 3 slower; widening each
// activation chunk once into floats on the stack (16-lane tile, accumulators kept between chunks)
// changed nothing.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../avx2/simd_avx2.hpp"
#include "../vec_ops.hpp"
#include "float_tiles_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

// How an operand's elements load as floats: 16 at a time, and one by one for the tail; one
// fused multiply-add per step.
template <typename Element>
struct WideningSteps : Zmm16Lanes {
  using T = Element;
  using Vec = __m512;
  static constexpr std::size_t kWidth = 16;
  static __m512 madd(__m512 acc, __m512 w, __m512 x) { return _mm512_fmadd_ps(w, x, acc); }
};

struct F32Steps : WideningSteps<float> {
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static float load1(const float* p) { return *p; }
};

struct F16Steps : WideningSteps<std::uint16_t> {
  static __m512 load(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static float load1(const std::uint16_t* p) { return half_to_float(*p); }
};

// F16 in 256-bit vectors: 8-lane chains, the AVX2 table's F16 tile (gemm_avx2.cpp) step for step,
// in a 6 x 4 tile instead of its 3 x 4 (the 32 registers hold 24 accumulators).
struct F16HalfWidthSteps : Ymm8Lanes {
  using T = std::uint16_t;
  using Vec = __m256;
  static constexpr std::size_t kWidth = 8;
  static __m256 load(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256 madd(__m256 acc, __m256 w, __m256 x) { return _mm256_fmadd_ps(w, x, acc); }
  static float load1(const std::uint16_t* p) { return half_to_float(*p); }
};

struct BF16Steps : WideningSteps<std::uint16_t> {
  static __m512 load(const std::uint16_t* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static float load1(const std::uint16_t* p) {
    const std::uint32_t bits = static_cast<std::uint32_t>(*p) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
};

}  // namespace

void float_gemm_avx512(const float* w, std::size_t ldw, std::size_t m, const float* x,
                       std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  float_tiles<F32Steps>(w, ldw, m, x, ldx, n, k, y, ldy);
}

void f16_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m, const std::uint16_t* x,
                     std::size_t ldx, std::size_t n, std::size_t k, float* y, std::size_t ldy) {
  float_tiles<F16Steps>(w, ldw, m, x, ldx, n, k, y, ldy);
}

void f16_gemm_avx512_half_width(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                                const std::uint16_t* x, std::size_t ldx, std::size_t n,
                                std::size_t k, float* y, std::size_t ldy) {
  float_tiles<F16HalfWidthSteps>(w, ldw, m, x, ldx, n, k, y, ldy);
}

void bf16_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                      const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                      float* y, std::size_t ldy) {
  float_tiles<BF16Steps>(w, ldw, m, x, ldx, n, k, y, ldy);
}

}  // namespace eredu::cpu::detail
