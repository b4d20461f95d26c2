#pragma once
// An emulation of the AMX tile instructions the CPU backend's AMX kernels use (LDTILECFG,
// TILERELEASE, TILEZERO, TILELOADD, TILESTORED, TDPBUSD, TDPBSSD), written from the operation
// sections of the Intel SDM, so that the kernels (templated on their tile policy,
// amx/hardware_tiles.hpp) run and are checked on CPUs without AMX. Where the hardware faults (#UD,
// #GP: no configuration, a palette other than 1, a shape beyond 16 rows of 64 bytes, operands whose
// shapes do not chain) the emulation counts a fault and keeps the first one's description, which
// the tests assert on. A tile load reads exactly its configured rows x bytes, as the hardware
// does, so a sanitizer build also catches a tile reaching past its operand.
//
// It is included by a translation unit built with the AVX-512 flags (emulated_amx_kernels.cpp,
// which instantiates the kernels with it) and by baseline ones, so it follows the backend's rule
// for such headers (vec_ops.hpp): C headers and plain types only, nothing from gtest, and
// everything in an anonymous namespace, so that no inline function is shared between the two
// builds (the linker would keep one copy, possibly the AVX-512 one).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "amx/tile_config.hpp"

namespace eredu::testing::amx {
namespace {

using eredu::cpu::detail::kTileCount;
using eredu::cpu::detail::kTileMaxRowBytes;
using eredu::cpu::detail::kTileMaxRows;
using eredu::cpu::detail::TileConfig;

struct EmulatedTiles {
  struct State {
    bool configured = false;
    TileConfig config{};
    std::uint8_t data[kTileCount][kTileMaxRows][kTileMaxRowBytes] = {};
  };
  // TDPBUSD executed on any thread, so that a test can see the tiles were used.
  static std::atomic<std::size_t>& products() {
    static std::atomic<std::size_t> n{0};
    return n;
  }
  // Instructions the hardware would have faulted on, on any thread, and the first one's text.
  struct Faults {
    std::atomic<std::size_t> count{0};
    char first[256] = {};
  };
  static Faults& faults() {
    static Faults f;
    return f;
  }
  static State& state() {
    thread_local State s;
    return s;
  }

  static void configure(const TileConfig& c) {
    State& s = state();
    bool ok = c.palette_id == 1 && c.start_row == 0;
    for (std::uint8_t r : c.reserved)
      ok = ok && r == 0;
    for (int t = 0; t < 16; ++t) {
      const bool used = t < kTileCount;
      ok = ok && c.rows[t] <= (used ? kTileMaxRows : 0) &&
           c.colsb[t] <= (used ? kTileMaxRowBytes : 0) && (c.rows[t] == 0) == (c.colsb[t] == 0);
    }
    if (!ok) fault("LDTILECFG: a configuration palette 1 rejects (#GP)");
    s.config = c;
    s.configured = ok;
    std::memset(s.data, 0, sizeof s.data);  // LDTILECFG zeroes the tiles
  }
  static void release() {
    State& s = state();
    s.configured = false;
    s.config = TileConfig{};
  }

  template <int kTile>
  static void zero() {
    if (!usable(kTile, "TILEZERO")) return;
    std::memset(state().data[kTile], 0, sizeof state().data[kTile]);
  }

  template <int kTile>
  static void load(const void* base, std::size_t stride) {
    if (!usable(kTile, "TILELOADD")) return;
    State& s = state();
    std::memset(s.data[kTile], 0, sizeof s.data[kTile]);
    const auto* p = static_cast<const std::uint8_t*>(base);
    for (int r = 0; r < s.config.rows[kTile]; ++r)
      std::memcpy(s.data[kTile][r], p + static_cast<std::size_t>(r) * stride,
                  s.config.colsb[kTile]);
  }

  template <int kTile>
  static void store(void* base, std::size_t stride) {
    if (!usable(kTile, "TILESTORED")) return;
    State& s = state();
    auto* p = static_cast<std::uint8_t*>(base);
    for (int r = 0; r < s.config.rows[kTile]; ++r)
      std::memcpy(p + static_cast<std::size_t>(r) * stride, s.data[kTile][r],
                  s.config.colsb[kTile]);
  }

  // TDPBUSD sums, u, s (unsigned bytes u, signed bytes s): for every row m of sums and dword n,
  // sums[m].dword[n] += sum over k < u.colsb / 4 of sum over i < 4 of u[m][4k + i] * s[k][4n + i].
  template <int kSums, int kUnsigned, int kSigned>
  static void dpbusd() {
    dot<false>(kSums, kUnsigned, kSigned, "TDPBUSD");
  }
  // TDPBSSD: the same with both operands signed.
  template <int kSums, int kLeft, int kRight>
  static void dpbssd() {
    dot<true>(kSums, kLeft, kRight, "TDPBSSD");
  }

 private:
  template <bool kLeftSigned>
  static void dot(int sums, int left, int right, const char* op) {
    if (!usable(sums, op) || !usable(left, op) || !usable(right, op)) return;
    State& s = state();
    const TileConfig& c = s.config;
    if (c.rows[sums] != c.rows[left] || c.colsb[sums] != c.colsb[right] ||
        c.colsb[left] != 4 * c.rows[right] || c.colsb[sums] % 4 != 0 || c.colsb[left] % 4 != 0) {
      fault("%s: operand shapes do not chain (#UD): sums %dx%d, left %dx%d, right %dx%d", op,
            int{c.rows[sums]}, int{c.colsb[sums]}, int{c.rows[left]}, int{c.colsb[left]},
            int{c.rows[right]}, int{c.colsb[right]});
      return;
    }
    for (int m = 0; m < c.rows[sums]; ++m) {
      for (int n = 0; n < c.colsb[sums] / 4; ++n) {
        std::int32_t acc;
        std::memcpy(&acc, &s.data[sums][m][4 * n], 4);
        for (int k = 0; k < c.colsb[left] / 4; ++k) {
          for (int i = 0; i < 4; ++i) {
            const std::uint8_t a = s.data[left][m][4 * k + i];
            const std::int32_t u = kLeftSigned ? std::int32_t{static_cast<std::int8_t>(a)} : a;
            const std::int32_t v = static_cast<std::int8_t>(s.data[right][k][4 * n + i]);
            acc += u * v;
          }
        }
        std::memcpy(&s.data[sums][m][4 * n], &acc, 4);
      }
    }
    products().fetch_add(1, std::memory_order_relaxed);
  }

  static bool usable(int tile, const char* op) {
    const State& s = state();
    if (!s.configured) {
      fault("%s without a tile configuration (#UD)", op);
      return false;
    }
    if (tile < 0 || tile >= kTileCount || s.config.rows[tile] == 0) {
      fault("%s on tile %d, which the configuration leaves unused (#UD)", op, tile);
      return false;
    }
    return true;
  }

  template <typename... Args>
  static void fault(const char* format, Args... args) {
    Faults& f = faults();
    if (f.count.fetch_add(1) == 0) std::snprintf(f.first, sizeof f.first, format, args...);
  }
};

}  // namespace
}  // namespace eredu::testing::amx
