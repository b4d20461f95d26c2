// Packing of weights into row groups (row_groups.hpp), once at load: plain C++, for any CPU.
#include "row_groups.hpp"

#include <cstring>

#include "eredu/checkpoint/encoding/dequantize_block.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Row r of a Q4_K / Q5_K group from its block's qs, scales, d and dmin (as stored). Sub-block u
// of a Q4_K block is the low (u even) or high (u odd) nibbles of qs[32 * (u / 2) ..]: its elements
// 4k + i are bytes lo[4k + i], its elements 16 + 4k + i bytes hi[4k + i] (Q5_K's qs alike).
template <typename Block, typename Group>
void pack_k4_row(const Block& b, std::size_t r, Group& out) {
  for (int u = 0; u < 8; ++u) {
    const enc::detail::ScaleMin sm = enc::detail::k4_scale_min(u, b.scales);
    out.scales[u][r] = sm.scale;
    out.mins[u / 2][r][u % 2] = sm.min;
    // 8 bytes at a time: nibble `shift` of each lo byte, and of each hi byte above it.
    const std::uint8_t* lo = b.qs + 32 * (u / 2);
    const std::uint8_t* hi = lo + 16;
    const int shift = 4 * (u % 2);
    constexpr std::uint64_t kNibbles = 0x0F0F0F0F0F0F0F0FULL;
    for (int half = 0; half < 2; ++half) {
      std::uint64_t l;
      std::uint64_t h;
      std::memcpy(&l, lo + 8 * half, 8);
      std::memcpy(&h, hi + 8 * half, 8);
      const std::uint64_t packed = ((l >> shift) & kNibbles) | (((h >> shift) & kNibbles) << 4);
      std::memcpy(code_vector(out, u, 2 * half) + 4 * r, &packed, 4);
      std::memcpy(code_vector(out, u, 2 * half + 1) + 4 * r,
                  reinterpret_cast<const char*>(&packed) + 4, 4);
    }
  }
  out.d[r] = b.d;
  out.dmin[r] = b.dmin;
}

// Row r of a Q6_K group from its block b. Sub-block u (elements 32u .. 32u + 31) of a Q6_K block is
// half h = u / 4, position k = u % 4: element j's low 4 bits are nibble k / 2 of ql[64h + 32 (k %
// 2)
// + j], its top 2 bits bits 2k, 2k + 1 of qh[32h + j].
void pack_q6k_row(const enc::BlockQ6_K& b, std::size_t r, Q6KRowGroupBlock& out) {
  constexpr std::uint64_t kNibbles = 0x0F0F0F0F0F0F0F0FULL;
  constexpr std::uint64_t kPairs = 0x0303030303030303ULL;
  for (int u = 0; u < 8; ++u) {
    const int h = u / 4;
    const int k = u % 4;
    const std::uint8_t* ql = b.ql + 64 * h + 32 * (k % 2);
    const std::uint8_t* qh = b.qh + 32 * h;
    const int low_shift = 4 * (k / 2);
    for (int half = 0; half < 2; ++half) {
      std::uint64_t l;
      std::uint64_t hh;
      std::memcpy(&l, ql + 8 * half, 8);
      std::memcpy(&hh, ql + 16 + 8 * half, 8);
      const std::uint64_t packed =
          ((l >> low_shift) & kNibbles) | (((hh >> low_shift) & kNibbles) << 4);
      std::memcpy(&out.units[u].low[2 * half][4 * r], &packed, 4);
      std::memcpy(&out.units[u].low[2 * half + 1][4 * r],
                  reinterpret_cast<const char*>(&packed) + 4, 4);
    }
    // Elements 16q + 4s + i: bytes i and 4 + i of the first 8 (s = 0, 1), of the next 8 (s = 2, 3).
    for (int q = 0; q < 2; ++q) {
      std::uint64_t first;
      std::uint64_t second;
      std::memcpy(&first, qh + 16 * q, 8);
      std::memcpy(&second, qh + 16 * q + 8, 8);
      first = (first >> (2 * k)) & kPairs;
      second = (second >> (2 * k)) & kPairs;
      const auto bits = static_cast<std::uint32_t>(first | (first >> 32) << 2 | second << 4 |
                                                   (second >> 32) << 6);
      std::memcpy(&out.units[u].high[q][4 * r], &bits, 4);
    }
  }
  for (int j = 0; j < 16; ++j)
    out.scales[j][r] = b.scales[j];
  out.d[r] = b.d;
}

// Four bytes of a row from 16 bytes q[0..15] as stored, 4 at a time: byte i of word k is q[4k + i].
std::uint32_t word_at(const std::uint8_t* q, int k) {
  std::uint32_t w;
  std::memcpy(&w, q + 4 * k, 4);
  return w;
}

// Element 16u + 4q + i of a Q2_K / Q3_K block: chunk c = u / 2 (of 32), position j = 16 (u % 2) +
// 4q + i in it; its low 2 bits are bits 2 (c % 4), + 1 of qs[32 (c / 4) + j], its Q3_K hmask bit
// bit c of hmask[j].
// The 2-bit codes of unit u of a row into bytes 4r .. 4r + 3 of `out` (bits 2q, 2q + 1 of byte
// 4r + i: element 16u + 4q + i, from byte 4q + i of the unit's 16 qs bytes).
void pack_2bit_unit(const std::uint8_t (&qs)[enc::kQK_K / 4], int u, std::size_t r,
                    std::uint8_t (&out)[64]) {
  const int c = u / 2;
  const std::uint8_t* q = qs + 32 * (c / 4) + 16 * (u % 2);
  const int shift = 2 * (c % 4);
  constexpr std::uint32_t kPairs = 0x03030303U;
  std::uint32_t packed = 0;
  for (int k = 0; k < 4; ++k)
    packed |= ((word_at(q, k) >> shift) & kPairs) << (2 * k);
  std::memcpy(&out[4 * r], &packed, 4);
}

// Q5_K: element 32u + l has its fifth bit in bit u of qh[l]; high[u]'s byte 4r + i takes, in bit
// k, that of element 32u + 4k + i and, in bit 4 + k, that of 32u + 16 + 4k + i.
void pack_q5k_row(const enc::BlockQ5_K& b, std::size_t r, Q5KRowGroupBlock& out) {
  pack_k4_row(b, r, out);
  constexpr std::uint32_t kBits = 0x01010101U;
  for (int u = 0; u < 8; ++u) {
    std::uint32_t packed = 0;
    for (int k = 0; k < 4; ++k) {
      packed |= ((word_at(b.qh, k) >> u) & kBits) << k;
      packed |= ((word_at(b.qh + 16, k) >> u) & kBits) << (4 + k);
    }
    std::memcpy(&out.units[u].high[4 * r], &packed, 4);
  }
}

void pack_q2k_row(const enc::BlockQ2_K& b, std::size_t r, Q2KRowGroupBlock& out) {
  for (int u = 0; u < 16; ++u) {
    pack_2bit_unit(b.qs, u, r, out.codes[u]);
    out.scale_mins[u / 2][r][u % 2] = b.scales[u];
  }
  out.d[r] = b.d;
  out.dmin[r] = b.dmin;
}

void pack_q3k_row(const enc::BlockQ3_K& b, std::size_t r, Q3KRowGroupBlock& out) {
  for (int u = 0; u < 16; ++u)
    pack_2bit_unit(b.qs, u, r, out.units[u / 2].low[u % 2]);
  // Unit 2h + half's element 4k + i has its bit in bit h of hmask[16 half + 4k + i].
  constexpr std::uint32_t kBits = 0x01010101U;
  for (int h = 0; h < 8; ++h) {
    std::uint32_t packed = 0;
    for (int half = 0; half < 2; ++half)
      for (int k = 0; k < 4; ++k)
        packed |= ((word_at(b.hmask + 16 * half, k) >> h) & kBits) << (4 * half + k);
    std::memcpy(&out.units[h].high[4 * r], &packed, 4);
  }
  for (int u = 0; u < 16; ++u)
    out.scales[u / 2][r][u % 2] =
        static_cast<std::int8_t>(enc::detail::q3_k_scale_code(u, b.scales) - 32);
  out.d[r] = b.d;
}

// IQ4_XS: the code bytes as stored, 4 at a time; the scales as the definition unpacks them.
void pack_iq4xs_row(const enc::BlockIQ4_XS& b, std::size_t r, IQ4XSRowGroupBlock& out) {
  for (int v = 0; v < 32; ++v)
    std::memcpy(&out.codes[v][4 * r], b.qs + 4 * v, 4);
  for (int u = 0; u < 8; ++u) {
    const int low = (b.scales_l[u / 2] >> (4 * (u % 2))) & 0xF;
    const int high = (b.scales_h >> (2 * u)) & 3;
    out.scales[u][r] = static_cast<std::int8_t>((low | (high << 4)) - 32);
  }
  out.d[r] = b.d;
}

// Q4_0 / IQ4_NL: the code bytes as stored, 4 at a time, into block b's half of its pair.
template <typename Block>
void pack_nibble32_row(const Block& b, std::size_t half, std::size_t r, Nibble32RowGroupPair& out) {
  for (int k = 0; k < 4; ++k)
    std::memcpy(&out.codes[half][k][4 * r], b.qs + 4 * k, 4);
  out.d[half][r] = b.d;
}

// Q8_0: the codes + 128, 4 at a time, into block b's half of its pair.
void pack_q8_0_row(const enc::BlockQ8_0& b, std::size_t half, std::size_t r,
                   Q8_0RowGroupPair& out) {
  for (int j = 0; j < 8; ++j) {
    for (int i = 0; i < 4; ++i)
      out.codes[half][j][4 * r + i] = static_cast<std::uint8_t>(b.qs[4 * j + i] + 128);
  }
  out.d[half][r] = b.d;
}

// Q4_1 / Q5_0 / Q5_1: the nibble bytes as stored, 4 at a time; the fifth bits (element 4j + i's at
// bit j of byte 4r + i); the scale and minimum.
template <typename Block, typename Pair>
void pack_affine_or_5bit_row(const Block& b, std::size_t half, std::size_t r, Pair& out) {
  for (int k = 0; k < 4; ++k)
    std::memcpy(&out.codes[half][k][4 * r], b.qs + 4 * k, 4);
  if constexpr (requires { b.qh; }) {
    std::uint32_t qh;
    std::memcpy(&qh, b.qh, 4);
    for (int i = 0; i < 4; ++i) {
      std::uint8_t bits = 0;
      for (int j = 0; j < 8; ++j)
        bits = static_cast<std::uint8_t>(bits | (((qh >> (4 * j + i)) & 1U) << j));
      out.high[half][4 * r + i] = bits;
    }
  }
  out.d[half][r] = b.d;
  if constexpr (requires { b.m; }) out.m[half][r] = b.m;
}

// Whole groups of 16 rows of n_blocks blocks each, into units of kBlocksPerUnit blocks (Unit):
// pack_row(block, r, unit) puts row r's block in place, or with two blocks per unit (the pairs of
// the encodings with blocks of 32) pack_row(block, half, r, unit); a last unit short of blocks
// stays zero.
template <typename Block, typename Unit, std::size_t kBlocksPerUnit = 1, typename PackRow>
void pack_groups(const void* rows, std::size_t n_rows, std::size_t n_blocks, void* out,
                 PackRow pack_row) {
  const auto* base = static_cast<const Block*>(rows);
  auto* units = static_cast<Unit*>(out);
  const std::size_t n_units = (n_blocks + kBlocksPerUnit - 1) / kBlocksPerUnit;
  // Row by row: each row is read as one sequential stream (the hardware prefetchers follow it),
  // and its group's blocks (at most a few hundred KiB) stay in cache between the rows. Block by
  // block across the 16 rows, with each sub-block's bytes assembled on the stack, llama1b Q4_K
  // took ~1.1 s more to load; this way ~0.4 s.
  for (std::size_t g = 0; g < n_rows / kRowGroupRows; ++g) {
    // The blocks' alignment padding (Q3_K, Q6_K, IQ4_XS) and an odd block count's empty half
    // (blocks of 32) zeroed, so the groups are a function of the weight alone; the group is
    // in cache when its rows fill it.
    Unit* group = units + g * n_units;
    std::memset(static_cast<void*>(group), 0, n_units * sizeof(Unit));
    for (std::size_t r = 0; r < kRowGroupRows; ++r) {
      const Block* row = base + (g * kRowGroupRows + r) * n_blocks;
      for (std::size_t b = 0; b < n_blocks; ++b) {
        if constexpr (kBlocksPerUnit == 1) {
          pack_row(row[b], r, group[b]);
        } else {
          pack_row(row[b], b % kBlocksPerUnit, r, group[b / kBlocksPerUnit]);
        }
      }
    }
  }
}

}  // namespace

std::size_t row_group_stride(DType dtype, std::size_t cols) noexcept {
  if (dtype == DType::kQ4_0 || dtype == DType::kIQ4_NL) {
    static_assert(enc::kQK4_0 == 32 && enc::kQK4_NL == 32);
    if (cols % 32 != 0) return 0;
    return (cols / 32 + 1) / 2 * sizeof(Nibble32RowGroupPair);
  }
  if (dtype == DType::kQ8_0 || dtype == DType::kQ4_1 || dtype == DType::kQ5_0 ||
      dtype == DType::kQ5_1) {
    static_assert(enc::kQK8_0 == 32 && enc::kQK4_1 == 32 && enc::kQK5_0 == 32 && enc::kQK5_1 == 32);
    if (cols % 32 != 0) return 0;
    const std::size_t pair = dtype == DType::kQ8_0   ? sizeof(Q8_0RowGroupPair)
                             : dtype == DType::kQ4_1 ? sizeof(Q4_1RowGroupPair)
                             : dtype == DType::kQ5_0 ? sizeof(Q5_0RowGroupPair)
                                                     : sizeof(Q5_1RowGroupPair);
    return (cols / 32 + 1) / 2 * pair;
  }
  if (cols % enc::kQK_K != 0) return 0;
  switch (dtype) {
    case DType::kQ2_K:
      return cols / enc::kQK_K * sizeof(Q2KRowGroupBlock);
    case DType::kQ3_K:
      return cols / enc::kQK_K * sizeof(Q3KRowGroupBlock);
    case DType::kQ4_K:
      return cols / enc::kQK_K * sizeof(Q4KRowGroupBlock);
    case DType::kQ5_K:
      return cols / enc::kQK_K * sizeof(Q5KRowGroupBlock);
    case DType::kQ6_K:
      return cols / enc::kQK_K * sizeof(Q6KRowGroupBlock);
    case DType::kIQ4_XS:
      return cols / enc::kQK_K * sizeof(IQ4XSRowGroupBlock);
    default:
      return 0;
  }
}

std::size_t row_group_bytes(DType dtype, std::size_t rows, std::size_t cols) noexcept {
  return rows / kRowGroupRows * row_group_stride(dtype, cols);
}

void pack_row_groups(DType dtype, const void* rows, std::size_t n_rows, std::size_t cols,
                     void* out) noexcept {
  const std::size_t n_super = cols / enc::kQK_K;
  if (dtype == DType::kQ2_K) {
    pack_groups<enc::BlockQ2_K, Q2KRowGroupBlock>(rows, n_rows, n_super, out, pack_q2k_row);
  } else if (dtype == DType::kQ3_K) {
    pack_groups<enc::BlockQ3_K, Q3KRowGroupBlock>(rows, n_rows, n_super, out, pack_q3k_row);
  } else if (dtype == DType::kQ4_K) {
    pack_groups<enc::BlockQ4_K, Q4KRowGroupBlock>(rows, n_rows, n_super, out,
                                                  pack_k4_row<enc::BlockQ4_K, Q4KRowGroupBlock>);
  } else if (dtype == DType::kQ5_K) {
    pack_groups<enc::BlockQ5_K, Q5KRowGroupBlock>(rows, n_rows, n_super, out, pack_q5k_row);
  } else if (dtype == DType::kQ6_K) {
    pack_groups<enc::BlockQ6_K, Q6KRowGroupBlock>(rows, n_rows, n_super, out, pack_q6k_row);
  } else if (dtype == DType::kIQ4_XS) {
    pack_groups<enc::BlockIQ4_XS, IQ4XSRowGroupBlock>(rows, n_rows, n_super, out, pack_iq4xs_row);
  } else if (dtype == DType::kIQ4_NL) {
    pack_groups<enc::BlockIQ4_NL, Nibble32RowGroupPair, 2>(rows, n_rows, cols / 32, out,
                                                           pack_nibble32_row<enc::BlockIQ4_NL>);
  } else if (dtype == DType::kQ4_0) {
    pack_groups<enc::BlockQ4_0, Nibble32RowGroupPair, 2>(rows, n_rows, cols / 32, out,
                                                         pack_nibble32_row<enc::BlockQ4_0>);
  } else if (dtype == DType::kQ8_0) {
    pack_groups<enc::BlockQ8_0, Q8_0RowGroupPair, 2>(rows, n_rows, cols / 32, out, pack_q8_0_row);
  } else if (dtype == DType::kQ4_1) {
    pack_groups<enc::BlockQ4_1, Q4_1RowGroupPair, 2>(
        rows, n_rows, cols / 32, out, pack_affine_or_5bit_row<enc::BlockQ4_1, Q4_1RowGroupPair>);
  } else if (dtype == DType::kQ5_0) {
    pack_groups<enc::BlockQ5_0, Q5_0RowGroupPair, 2>(
        rows, n_rows, cols / 32, out, pack_affine_or_5bit_row<enc::BlockQ5_0, Q5_0RowGroupPair>);
  } else if (dtype == DType::kQ5_1) {
    pack_groups<enc::BlockQ5_1, Q5_1RowGroupPair, 2>(
        rows, n_rows, cols / 32, out, pack_affine_or_5bit_row<enc::BlockQ5_1, Q5_1RowGroupPair>);
  }
}

}  // namespace eredu::cpu::detail
