#pragma once
// Internal: the 64-byte operand of LDTILECFG (Intel SDM, "LDTILECFG—Load Tile Configuration"), as
// the AMX kernels build it and as the tile emulation of the unit tests (tests/unit/cpu_amx) reads
// it. Palette 1 has 8 tiles of at most 16 rows of 64 bytes; a tile not used has 0 rows and 0 bytes.
#include <cstdint>

namespace eredu::cpu::detail {

struct alignas(64) TileConfig {
  std::uint8_t palette_id = 0;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};  // bytes per row of tiles 0..15
  std::uint8_t rows[16] = {};    // rows of tiles 0..15
};
static_assert(sizeof(TileConfig) == 64, "LDTILECFG reads 64 bytes");

inline constexpr int kTileMaxRows = 16;
inline constexpr int kTileMaxRowBytes = 64;
inline constexpr int kTileCount = 8;  // palette 1

}  // namespace eredu::cpu::detail
