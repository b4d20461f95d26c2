#pragma once
// Internal, AVX2 translation units only (avx2/*.cpp): what the AVX2 products of row groups
// (row_groups.hpp) share. A 256-bit register holds half a group, rows 8h .. 8h + 7, one row per
// 32-bit lane (lanes 0-3 in the low 128 bits); these helpers put each row's scale, minimum or
// half-precision factor into its lane. Internal linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../row_groups.hpp"

namespace eredu::cpu::detail {
namespace {

constexpr std::size_t kHalfRows = kRowGroupRows / 2;  // rows per register

// Four activation bytes (one slice) in every lane.
inline __m256i broadcast4(const std::int8_t* q) {
  std::int32_t four;
  std::memcpy(&four, q, 4);
  return _mm256_set1_epi32(four);
}

struct alignas(32) LaneShuffles {
  std::int8_t byte_twice[32];     // byte r of 8 (in both 128-bit lanes) as lane r's two words
  std::int8_t word_twice[2][32];  // word i of each lane into both of its words
};
constexpr LaneShuffles kLaneShuffles = [] {
  LaneShuffles t{};
  for (int b = 0; b < 32; ++b) {
    const int lane = b / 4;          // lanes 0-3 read the low 128 bits, 4-7 the high (same 8 bytes)
    const int dword = (b % 16) / 4;  // the lane's dword within its 128 bits
    t.byte_twice[b] = static_cast<std::int8_t>(b % 2 == 0 ? lane : -128);  // high byte zero
    for (int i = 0; i < 2; ++i)
      t.word_twice[i][b] = static_cast<std::int8_t>(4 * dword + 2 * i + b % 2);
  }
  return t;
}();

// The 8 unsigned bytes at p (row r's at p[r]) as the two int16 words of lane r: one vpmaddwd
// then applies each row's factor to both of its lane's pair sums.
inline __m256i byte_words(const std::uint8_t* p) {
  std::int64_t eight;
  std::memcpy(&eight, p, 8);
  return _mm256_shuffle_epi8(
      _mm256_set1_epi64x(eight),
      _mm256_load_si256(reinterpret_cast<const __m256i*>(kLaneShuffles.byte_twice)));
}

// Word i (0 or 1) of each lane of `pairs` in both of the lane's words.
inline __m256i word_twice(__m256i pairs, int i) {
  return _mm256_shuffle_epi8(
      pairs, _mm256_load_si256(reinterpret_cast<const __m256i*>(kLaneShuffles.word_twice[i])));
}

// The 8 signed bytes at p (row r's at p[r]) sign-extended into both int16 words of lane r.
inline __m256i signed_byte_words(const std::int8_t* p) {
  std::int64_t eight;
  std::memcpy(&eight, p, 8);
  return word_twice(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(eight)), 0);
}

// 8 halves (F16, one per row) widened.
inline __m256 half_floats(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

}  // namespace
}  // namespace eredu::cpu::detail
