#pragma once
// Internal: weights laid out a second time at load, in groups of 16 rows, for the tables whose
// products read that layout faster than the rows as stored (the AVX2 table's K-quant and IQ4_XS
// products; the AVX-512 and AMX tables' K-quant, IQ4_XS, IQ4_NL and Q4_0 products: the K-quants of
// Q2_K, Q3_K_M, Q4_K_M, Q5_K_M and Q6_K files, the IQ4_XS and IQ4_NL of IQ4_XS files and of IQ4_NL
// ones, the Q4_0 and Q8_0 of Q4_0 and Q8_0 files, the Q5_0 / Q5_1 of Q4_K_M / Q5_K_M files whose
// rows are no whole K-quant blocks). Plain structs and declarations only, so AVX-512 translation
// units may include it (vec_ops.hpp).
//
// Why: a one-token product reads every weight once, and with one row per accumulator it spends a
// large part of each block on what is not a product of codes: reducing the row's lanes to one sum,
// gathering and unpacking its scales (on a Zen 4 guest ~40% of the AVX-512 Q4_K decode's samples).
// With 16 rows side by side, 4 codes of each row per 32-bit lane, one vpdpbusd adds 4 products to
// each of the 16 rows with the 4 activation bytes broadcast to every lane; the rows' sums never
// leave their lanes, and the scales of 16 rows are one 16-byte load per sub-block. llama.cpp
// repacks Q4_K and Q6_K rows the same way at load (8 rows per group there).
//
// Values are unchanged: the products formed from this layout are the definition's
// (reference::dot_q8_K) bit for bit, as every K-quant product is: per 256-block the exact integer
// sums, then the definition's one or two fused multiply-adds, block after block.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::cpu::detail {

inline constexpr std::size_t kRowGroupRows = 16;

// One 256-block of 16 Q4_K rows. Sub-block u (elements 32u .. 32u + 31) of every row is code
// vectors 4u .. 4u + 3: byte 4r + i of vector 4u + k holds element 32u + 4k + i of row r in its low
// nibble and element 32u + 16 + 4k + i in its high nibble. So the low nibbles of a vector are one
// 4-element slice of all 16 rows (a 32-bit lane per row), as are its high nibbles.
struct alignas(64) Q4KRowGroupBlock {
  std::uint8_t codes[32][64];
  std::uint8_t scales[8][kRowGroupRows];   // [u][r]: the 6-bit scale of sub-block u of row r
  std::uint8_t mins[4][kRowGroupRows][2];  // [p][r][i]: the 6-bit minimum of sub-block 2p + i
  std::uint16_t d[kRowGroupRows];          // the rows' d and dmin (F16, as stored)
  std::uint16_t dmin[kRowGroupRows];
};
static_assert(sizeof(Q4KRowGroupBlock) == 2368, "16 rows x 144 bytes, plus 4 bytes per row");

// One 256-block of 16 Q5_K rows: Q4_K's layout for the low 4 bits of the codes, the scales and the
// minimums, but sub-block after sub-block with the fifth bits beside their codes, so that a decode
// reads the block front to back as one stream: units[u].codes[k] is Q4_K's code vector 4u + k, and
// units[u].high's byte 4r + i holds the fifth bit of element 32u + 4k + i of row r in bit k and
// that of element 32u + 16 + 4k + i in bit 4 + k: the two slices of code vector 4u + k.
struct alignas(64) Q5KRowGroupBlock {
  struct Unit {
    std::uint8_t codes[4][64];
    std::uint8_t high[64];
  };
  Unit units[8];
  std::uint8_t scales[8][kRowGroupRows];
  std::uint8_t mins[4][kRowGroupRows][2];
  std::uint16_t d[kRowGroupRows];
  std::uint16_t dmin[kRowGroupRows];
};
static_assert(sizeof(Q5KRowGroupBlock) == 2880, "16 rows x 176 bytes, plus 4 bytes per row");

// Code vector 4u + k of a Q4_K or Q5_K group block (the layouts' one difference for the code that
// reads or writes both).
inline std::uint8_t* code_vector(Q4KRowGroupBlock& b, int u, int k) {
  return b.codes[4 * u + k];
}
inline std::uint8_t* code_vector(Q5KRowGroupBlock& b, int u, int k) {
  return b.units[u].codes[k];
}
inline const std::uint8_t* code_vector(const Q4KRowGroupBlock& b, int u, int k) {
  return b.codes[4 * u + k];
}
inline const std::uint8_t* code_vector(const Q5KRowGroupBlock& b, int u, int k) {
  return b.units[u].codes[k];
}

// One 256-block of 16 Q6_K rows, sub-block after sub-block, so that a decode reads the block front
// to back as one stream (the low and the top bits of a sub-block side by side, not two planes 2 KiB
// apart, which the hardware prefetchers follow poorly). Sub-block u (elements 32u .. 32u + 31):
// units[u].low[k] holds the low 4 bits of code vector 4u + k as Q4_K's (element 32u + 4k + i of
// row r in the low nibble of byte 4r + i, element 32u + 16 + 4k + i in its high nibble);
// units[u].high[q]'s byte 4r + i holds, in bits 2s and 2s + 1, the top 2 bits of element
// 32u + 16q + 4s + i of row r. So a code vector's two slices take their top bits from the same bit
// pair of high[0] and high[1].
struct alignas(64) Q6KRowGroupBlock {
  struct Unit {
    std::uint8_t low[4][64];
    std::uint8_t high[2][64];
  };
  Unit units[8];
  std::int8_t scales[16][kRowGroupRows];  // [j][r]: the scale of elements 16j .. 16j + 15 of row r
  std::uint16_t d[kRowGroupRows];         // F16, as stored
};
static_assert(sizeof(Q6KRowGroupBlock) == 3392, "16 rows x 210 bytes, plus 2 bytes per row");

// One 256-block of 16 Q2_K rows. Unit u (elements 16u .. 16u + 15, one scale and minimum each) of
// every row is code vector u: byte 4r + i holds, in bits 2q and 2q + 1, element 16u + 4q + i of row
// r. So (vector >> 2q) & 3 is one 4-element slice of all 16 rows (a 32-bit lane per row). The
// scale/minimum bytes as stored (scale in the low nibble) go two units per row side by side, so one
// widening to 16 bits gives each row's pair as the two halves of its lane.
struct alignas(64) Q2KRowGroupBlock {
  std::uint8_t codes[16][64];
  std::uint8_t scale_mins[8][kRowGroupRows][2];  // [p][r][i]: the byte of unit 2p + i of row r
  std::uint16_t d[kRowGroupRows];                // the rows' d and dmin (F16, as stored)
  std::uint16_t dmin[kRowGroupRows];
};
static_assert(sizeof(Q2KRowGroupBlock) == 1344, "16 rows x 84 bytes");

// One 256-block of 16 Q3_K rows, sub-block of 32 (two units of 16) after sub-block, so that a
// decode reads it front to back as one stream. units[h].low[i] holds the low 2 bits of unit 2h + i
// as Q2_K's code vector 2h + i; the third bit (the hmask bit: the code is value + 4) of unit
// 2h + i, element 4q + j, is bit 4i + q of byte 4r + j of units[h].high. The scales (minus 32,
// signed) go two units per row side by side, as Q2_K's.
struct alignas(64) Q3KRowGroupBlock {
  struct Unit {
    std::uint8_t low[2][64];
    std::uint8_t high[64];
  };
  Unit units[8];
  std::int8_t scales[8][kRowGroupRows][2];  // [p][r][i]: the scale of unit 2p + i of row r
  std::uint16_t d[kRowGroupRows];           // F16, as stored
};
static_assert(sizeof(Q3KRowGroupBlock) == 1856, "16 rows x 110 bytes, plus 6 bytes per row");

// One 256-block of 16 IQ4_XS rows. Code vector 4u + k holds, in row r's lane, bytes 16u + 4k ..
// 16u + 4k + 3 of the row's qs as stored: their low nibbles are elements 32u + 4k + i (codebook
// indices), their high nibbles elements 32u + 16 + 4k + i, a slice each as Q4_K's. Scales minus
// 32, signed, per sub-block of 32.
struct alignas(64) IQ4XSRowGroupBlock {
  std::uint8_t codes[32][64];
  std::int8_t scales[8][kRowGroupRows];  // [u][r]: the scale of sub-block u of row r
  std::uint16_t d[kRowGroupRows];        // F16, as stored
};
static_assert(sizeof(IQ4XSRowGroupBlock) == 2240, "16 rows x 136 bytes, plus 4 bytes per row");

// Two blocks of 32 (elements 64p .. 64p + 63) of 16 Q4_0 or IQ4_NL rows (both an F16 scale and 16
// bytes of nibbles per block, low nibbles elements 0 .. 15, high nibbles 16 .. 31). Code vector k
// of half h holds, in row r's lane, bytes 4k .. 4k + 3 of the qs of the row's block 2p + h as
// stored: their low nibbles are elements 4k + i of the block (Q4_0 codes, IQ4_NL codebook
// indices), their high nibbles elements 16 + 4k + i, a slice each as Q4_K's. Two blocks, so that a
// pair is whole cache lines (9); a row of an odd number of blocks leaves the last pair's second
// half zero, and no product reads it.
struct alignas(64) Nibble32RowGroupPair {
  std::uint8_t codes[2][4][64];
  std::uint16_t d[2][kRowGroupRows];  // [h][r]: the scale of block 2p + h of row r (F16, as stored)
};
static_assert(sizeof(Nibble32RowGroupPair) == 576, "16 rows x 2 blocks x 18 bytes");

// Two blocks of 32 (elements 64p .. 64p + 63) of 16 Q8_0 rows. Code vector j of half h holds, in
// row r's lane, codes 4j .. 4j + 3 of the row's block 2p + h plus 128 (unsigned bytes, as vpdpbusd
// reads its first operand; the offset's share is then one of the activations alone). Two blocks,
// so that a pair is whole cache lines (17); an odd block count's last half stays zero, unread.
struct alignas(64) Q8_0RowGroupPair {
  std::uint8_t codes[2][8][64];
  std::uint16_t d[2][kRowGroupRows];  // [h][r]: the scale of block 2p + h of row r (F16, as stored)
};
static_assert(sizeof(Q8_0RowGroupPair) == 1088, "16 rows x 2 blocks x 34 bytes");
// Two blocks of 32 of 16 Q4_1, Q5_0 or Q5_1 rows: the low 4 bits of the codes as
// Nibble32RowGroupPair's code vectors (slice j of a half, elements 4j .. 4j + 3 of each row: the
// low nibbles of vector j for j < 4, the high nibbles of vector j - 4 after); for Q5_0 / Q5_1 the
// fifth bits, bit j of byte 4r + i of high[h] holding that of element 4j + i of row r (so a shift
// by 4 - j and one mask put slice j's beside its nibbles); the scales; for Q4_1 / Q5_1 the
// minimums. Each is the stored blocks' bytes exactly (10, 11 and 12 cache lines a pair).
struct alignas(64) Q4_1RowGroupPair {
  std::uint8_t codes[2][4][64];
  std::uint16_t d[2][kRowGroupRows];  // [h][r], F16 as stored
  std::uint16_t m[2][kRowGroupRows];
};
static_assert(sizeof(Q4_1RowGroupPair) == 640, "16 rows x 2 blocks x 20 bytes");
struct alignas(64) Q5_0RowGroupPair {
  std::uint8_t codes[2][4][64];
  std::uint8_t high[2][64];
  std::uint16_t d[2][kRowGroupRows];
};
static_assert(sizeof(Q5_0RowGroupPair) == 704, "16 rows x 2 blocks x 22 bytes");
struct alignas(64) Q5_1RowGroupPair {
  std::uint8_t codes[2][4][64];
  std::uint8_t high[2][64];
  std::uint16_t d[2][kRowGroupRows];
  std::uint16_t m[2][kRowGroupRows];
};
static_assert(sizeof(Q5_1RowGroupPair) == 768, "16 rows x 2 blocks x 24 bytes");

// Bytes of one group of 16 rows of `cols` elements (0 when the encoding has no row-group layout).
std::size_t row_group_stride(DType dtype, std::size_t cols) noexcept;

// Bytes of a weight's row groups: rows / 16 whole groups (the last rows % 16 rows are read as
// stored), each cols / 256 blocks; 0 when the encoding has no row-group layout.
std::size_t row_group_bytes(DType dtype, std::size_t rows, std::size_t cols) noexcept;

// Lays rows [0, rows / 16 * 16) of a weight as stored (rows `cols` elements, packed_row_bytes
// apart) out as row groups in `out` (row_group_bytes bytes, 64-byte aligned): group g's blocks are
// out[g * (cols / 256) .. ]. Only for an encoding row_group_bytes gives bytes for.
void pack_row_groups(DType dtype, const void* rows, std::size_t n_rows, std::size_t cols,
                     void* out) noexcept;

// A weight's rows [0, grouped) read from its row groups when `use` (the table has
// a product of them for this path), the rest as stored. split(r0, r1, grouped_fn, stored_fn) on a
// work item's rows (r0 a multiple of kRowGroupRows): grouped_fn(first group, group count) for its
// whole groups, then stored_fn(first stored row) for the rows past them, if any.
class RowGroupSplit {
 public:
  RowGroupSplit() = default;  // no rows from groups
  RowGroupSplit(const MatrixView& w, bool use)
      : groups_(static_cast<const std::byte*>(w.row_groups)),
        stride_(row_group_stride(w.dtype, w.cols)),
        grouped_(use ? w.rows / kRowGroupRows * kRowGroupRows : 0) {}

  // Rows [0, grouped_rows()) are read from the groups.
  [[nodiscard]] std::size_t grouped_rows() const noexcept { return grouped_; }

  template <typename Grouped, typename Stored>
  void split(std::size_t r0, std::size_t r1, Grouped&& grouped_fn, Stored&& stored_fn) const {
    const std::size_t end = std::min(r1, grouped_);
    if (r0 < end) grouped_fn(groups_ + r0 / kRowGroupRows * stride_, (end - r0) / kRowGroupRows);
    const std::size_t tail = std::max(r0, end);
    if (tail < r1) stored_fn(tail);
  }

 private:
  const std::byte* groups_ = nullptr;
  std::size_t stride_ = 0;
  std::size_t grouped_ = 0;
};

}  // namespace eredu::cpu::detail
