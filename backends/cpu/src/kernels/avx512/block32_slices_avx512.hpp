#pragma once
// Internal, AVX-512 translation units only: the codes of one block of 16 rows laid out in the row
// groups of the encodings with blocks of 32 (row_groups.hpp: Nibble32RowGroupPair and the Q4_1 /
// Q5_0 / Q5_1 pairs), slice by slice, shared by their one-token products
// (block32_row_groups_avx512.cpp) and the prompt tiles' repack of the groups
// (quant_prompt_avx512.cpp). Slice j holds elements 4j .. 4j + 3 of each row (row r in lane r).
// Internal linkage (anonymous namespace), see vec_ops.hpp.
#include <immintrin.h>

#include <cstdint>

namespace eredu::cpu::detail {
namespace {

// The low 4 bits of slice j: the low nibbles of code vector j for j < 4, the high nibbles of code
// vector j - 4 after, as bytes 0 .. 15.
inline __m512i low_bits(const std::uint8_t (&codes)[4][64], int j) {
  const __m512i v = _mm512_load_si512(codes[j % 4]);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  return j < 4 ? _mm512_and_si512(v, nibble) : _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
}

// The 5-bit codes of slice j: its low bits with the fifth bits (bit j of each byte of `high`) as
// bit 4, bytes 0 .. 31.
inline __m512i five_bits(const std::uint8_t (&codes)[4][64], const std::uint8_t (&high)[64],
                         int j) {
  const __m512i h = _mm512_load_si512(high);
  const __m512i at4 = j < 4    ? _mm512_slli_epi16(h, 4 - j)
                      : j == 4 ? h
                               : _mm512_srli_epi16(h, j - 4);
  // low | (at4 & 0x10): the 16-bit shifts may carry a neighbouring byte's bits into bits 0-3 or
  // 5-7 of a byte, never into bit 4.
  return _mm512_ternarylogic_epi32(low_bits(codes, j), at4, _mm512_set1_epi8(0x10), 0xF8);
}

}  // namespace
}  // namespace eredu::cpu::detail
