#pragma once
// Internal, AMX translation units only (amx/*.cpp, built with -mamx-tile -mamx-int8): the tile
// instructions the AMX kernels are written against, as a policy type so that the unit tests can run
// the same kernels on an emulation of these instructions (tests/unit/cpu_amx) where the CPU has no
// AMX. Tile numbers are template arguments; the instructions take them as immediates, hence the
// one branch per register.
//
// GCC's tile intrinsics are asm statements that do not tell the compiler which memory a tile load
// reads (nor LDTILECFG more than its first 8 bytes): a compiler barrier before each load keeps
// stores the kernel made just before (its repacked weights) from being moved past it, and the
// configuration lives in constant storage.
#include <immintrin.h>

#include <cstddef>

#include "tile_config.hpp"

namespace eredu::cpu::detail {

struct HardwareTiles {
  static void configure(const TileConfig& config) { _tile_loadconfig(&config); }
  static void release() { _tile_release(); }

  template <int kTile>
  static void zero() {
    static_assert(kTile >= 0 && kTile < kTileCount);
    if constexpr (kTile == 0) _tile_zero(0);
    if constexpr (kTile == 1) _tile_zero(1);
    if constexpr (kTile == 2) _tile_zero(2);
    if constexpr (kTile == 3) _tile_zero(3);
    if constexpr (kTile == 4) _tile_zero(4);
    if constexpr (kTile == 5) _tile_zero(5);
    if constexpr (kTile == 6) _tile_zero(6);
    if constexpr (kTile == 7) _tile_zero(7);
  }

  // Row r of the tile from base + r * stride (the configured bytes per row).
  template <int kTile>
  static void load(const void* base, std::size_t stride) {
    static_assert(kTile >= 0 && kTile < kTileCount);
    __asm__ volatile("" ::: "memory");
    const long s = static_cast<long>(stride);
    if constexpr (kTile == 0) _tile_loadd(0, base, s);
    if constexpr (kTile == 1) _tile_loadd(1, base, s);
    if constexpr (kTile == 2) _tile_loadd(2, base, s);
    if constexpr (kTile == 3) _tile_loadd(3, base, s);
    if constexpr (kTile == 4) _tile_loadd(4, base, s);
    if constexpr (kTile == 5) _tile_loadd(5, base, s);
    if constexpr (kTile == 6) _tile_loadd(6, base, s);
    if constexpr (kTile == 7) _tile_loadd(7, base, s);
  }

  template <int kTile>
  static void store(void* base, std::size_t stride) {
    static_assert(kTile >= 0 && kTile < kTileCount);
    const long s = static_cast<long>(stride);
    if constexpr (kTile == 0) _tile_stored(0, base, s);
    if constexpr (kTile == 1) _tile_stored(1, base, s);
    if constexpr (kTile == 2) _tile_stored(2, base, s);
    if constexpr (kTile == 3) _tile_stored(3, base, s);
    if constexpr (kTile == 4) _tile_stored(4, base, s);
    if constexpr (kTile == 5) _tile_stored(5, base, s);
    if constexpr (kTile == 6) _tile_stored(6, base, s);
    if constexpr (kTile == 7) _tile_stored(7, base, s);
    __asm__ volatile("" ::: "memory");
  }

  // TDPBUSD: sums[m][n] += the dot of bytes 4k..4k+3 of unsigned row m of `u` with dword n of
  // signed row k of `s`, over k. Only the register triples the kernels use are spelled out.
  template <int kSums, int kUnsigned, int kSigned>
  static void dpbusd() {
    static_assert(kSums == 0 && kUnsigned == 1 && kSigned == 2,
                  "add this register triple to HardwareTiles::dpbusd");
    _tile_dpbusd(0, 1, 2);
  }

  // TDPBSSD: as dpbusd with both operands signed.
  template <int kSums, int kLeft, int kRight>
  static void dpbssd() {
    static_assert(kSums == 0 && kLeft == 1 && kRight == 2,
                  "add this register triple to HardwareTiles::dpbssd");
    _tile_dpbssd(0, 1, 2);
  }
};

}  // namespace eredu::cpu::detail
