// Packing of weights into row groups (row_groups.hpp), once at load: plain C++, for any CPU.
#include "row_groups.hpp"

#include <cstring>

#include "eredu/checkpoint/encoding/dequantize_block.hpp"

namespace eredu::cpu::detail {

namespace {

namespace enc = eredu::encoding;

// Row r of a group from its block b (`b` as stored). Sub-block u of a Q4_K block is the low (u
// even) or high (u odd) nibbles of qs[32 * (u / 2) ..]: its elements 4k + i are bytes lo[4k + i],
// its elements 16 + 4k + i bytes hi[4k + i].
void pack_q4k_row(const enc::BlockQ4_K& b, std::size_t r, Q4KRowGroupBlock& out) {
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
      std::memcpy(&out.codes[4 * u + 2 * half][4 * r], &packed, 4);
      std::memcpy(&out.codes[4 * u + 2 * half + 1][4 * r],
                  reinterpret_cast<const char*>(&packed) + 4, 4);
    }
  }
  out.d[r] = b.d;
  out.dmin[r] = b.dmin;
}

}  // namespace

std::size_t row_group_stride(DType dtype, std::size_t cols) noexcept {
  if (dtype != DType::kQ4_K || cols % enc::kQK_K != 0) return 0;
  return cols / enc::kQK_K * sizeof(Q4KRowGroupBlock);
}

std::size_t row_group_bytes(DType dtype, std::size_t rows, std::size_t cols) noexcept {
  return rows / kRowGroupRows * row_group_stride(dtype, cols);
}

void pack_row_groups(DType dtype, const void* rows, std::size_t n_rows, std::size_t cols,
                     void* out) noexcept {
  if (dtype != DType::kQ4_K) return;
  const std::size_t n_super = cols / enc::kQK_K;
  const auto* base = static_cast<const enc::BlockQ4_K*>(rows);
  auto* blocks = static_cast<Q4KRowGroupBlock*>(out);
  // Row by row: each row is read as one sequential stream (the hardware prefetchers follow it),
  // and its group's blocks (at most a few hundred KiB) stay in cache between the rows. Block by
  // block across the 16 rows, with each sub-block's bytes assembled on the stack, llama1b Q4_K
  // took ~1.1 s more to load; this way ~0.4 s.
  for (std::size_t g = 0; g < n_rows / kRowGroupRows; ++g) {
    for (std::size_t r = 0; r < kRowGroupRows; ++r) {
      const enc::BlockQ4_K* row = base + (g * kRowGroupRows + r) * n_super;
      for (std::size_t b = 0; b < n_super; ++b)
        pack_q4k_row(row[b], r, blocks[g * n_super + b]);
    }
  }
}

}  // namespace eredu::cpu::detail
