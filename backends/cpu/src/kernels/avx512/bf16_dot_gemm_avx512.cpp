// AVX-512 BF16 prompt tiles: BF16 weights against activations rounded to BF16, through
// vdpbf16ps (two products per lane per instruction, no widening). Compiled with the AVX-512 flags
// plus -mavx512bf16 (backends/cpu/CMakeLists.txt) and chosen by vec_ops_avx512() only when cpuid
// lists AVX512_BF16; without it the table keeps the widening tile (float_gemm_avx512.cpp).
//
// Each element is one 16-lane chain of vdpbf16ps over k in steps of 32 (lane j takes the pairs
// 2j, 2j + 1 of each step), then the tree sum of float_gemm_avx512.cpp and the k % 32 tail as
// fused multiply-adds in order: the 6 x 4 tile of float_tiles_avx512.hpp with a 32-element step.
// vdpbf16ps rounds once per pair step and treats subnormal inputs and results as zero, so the
// values differ from the widening tile's by float rounding; they are tested against a float64
// product (test_tiled_matmul.cpp), and do not depend on the tiling or the thread count. smol135m
// BF16, 128-token prompt, 2 threads on a Zen 5 guest: the widening tile ran 1060-1160 tokens/s,
// this one 1550 (llama.cpp b9749: 980-1630).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../vec_ops.hpp"
#include "float_tiles_avx512.hpp"

namespace eredu::cpu::detail {

namespace {

struct BF16PairSteps : Zmm16Lanes {
  using T = std::uint16_t;
  using Vec = __m512bh;
  static constexpr std::size_t kWidth = 32;
  static __m512bh load(const std::uint16_t* p) {
    return reinterpret_cast<__m512bh>(_mm512_loadu_si512(p));
  }
  static __m512 madd(__m512 acc, __m512bh w, __m512bh x) { return _mm512_dpbf16_ps(acc, w, x); }
  static float load1(const std::uint16_t* p) {
    const std::uint32_t u = static_cast<std::uint32_t>(*p) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

}  // namespace

void bf16_dot_gemm_avx512(const std::uint16_t* w, std::size_t ldw, std::size_t m,
                          const std::uint16_t* x, std::size_t ldx, std::size_t n, std::size_t k,
                          float* y, std::size_t ldy) {
  float_tiles<BF16PairSteps>(w, ldw, m, x, ldx, n, k, y, ldy);
}

}  // namespace eredu::cpu::detail
