#pragma once
// Internal, AVX2 translation units only (avx2/*.cpp, built with -mavx2 -mfma -mf16c): the small
// vector helpers the matrix-vector and tiled matrix-matrix kernels share. Everything here has
// internal linkage (anonymous namespace), so no AVX2 copy of an inline function can be picked by
// the linker for baseline code (see vec_ops.hpp).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "../vec_ops.hpp"

namespace eredu::cpu::detail {
namespace {

inline float hsum(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v);
  const __m128 hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The exact total of eight int32 lanes.
inline std::int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// The exact totals of four vectors' int32 lanes: [a, b, c, d].
inline __m128i hsum4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// Four F16 values (e.g. the scales of four blocks or rows) packed into one 64-bit word in a general
// register, element 0 lowest, for a vmovq: gathering them with vpinsrw costs two vector operations
// each (a move and an insert), on the vector pipes the one-token products keep full, while the
// shifts and ors here run on the integer pipes (llvm-mca -mcpu=znver3 on the Q4_0 four-row loop:
// 122 -> 100 cycles per 32 block-rows). The empty asm keeps GCC from rebuilding the packing in
// vector registers.
inline std::uint64_t pack_four_halves(std::uint16_t h0, std::uint16_t h1, std::uint16_t h2,
                                      std::uint16_t h3) {
  std::uint64_t q = static_cast<std::uint64_t>(h0) | static_cast<std::uint64_t>(h1) << 16 |
                    static_cast<std::uint64_t>(h2) << 32 | static_cast<std::uint64_t>(h3) << 48;
  __asm__("" : "+r"(q));
  return q;
}

// e^x for x <= 0 (softmax arguments) within about one ulp: x = n ln2 + r with |r| <= ln2 / 2
// (ln2 split in two so n ln2 is exact), e^r by its degree-7 Taylor polynomial (truncation error
// below 1e-8 relative), times 2^n built in the exponent bits. Below -87, where e^x would be
// subnormal, the result is 0 (negligible next to the maximum's e^0 = 1 in a softmax sum).
inline __m256 exp_nonpositive(__m256 x) {
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341F)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375F), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440054690583e-4F), r);
  __m256 p = _mm256_set1_ps(1.0F / 5040.0F);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0F / 720.0F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0F / 120.0F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0F / 24.0F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0F / 6.0F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0F));
  const __m256i two_n =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(two_n));
  return _mm256_and_ps(e, _mm256_cmp_ps(x, _mm256_set1_ps(-87.0F), _CMP_GE_OQ));
}

inline float half_to_float(std::uint16_t h) {
  return _cvtsh_ss(h);
}

inline float round_to_half(float f) {
  return _cvtsh_ss(static_cast<unsigned short>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)));
}

// 16 packed bytes -> 32 bytes: low nibbles (elements 0..15) then high nibbles (16..31).
inline __m256i nibbles_to_bytes(const std::uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// 32 bits -> 32 bytes, 0xFF where the bit (element index) is set.
inline __m256i bits_to_bytes(const std::uint8_t* bits4) {
  std::uint32_t bits;
  std::memcpy(&bits, bits4, 4);
  // Byte k of the result looks at source byte k / 8 ...
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                             0x0202020202020202, 0x0303030303030303));
  // ... and tests bit k % 8 of it.
  const __m256i select = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select);
}

// Integer dot of 32 unsigned bytes with 32 signed bytes, as 8 float lanes.
inline __m256 dot_u8_i8(__m256i u, __m256i s) {
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// Integer dot of two signed byte vectors: move the sign of a onto b so a can be unsigned.
inline __m256 dot_i8_i8(__m256i a, __m256i b) {
  return dot_u8_i8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

inline __m256i load_act(const ActQ8Block& x) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
}

}  // namespace
}  // namespace eredu::cpu::detail
