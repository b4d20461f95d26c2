// The AMX prompt tiles (backends/cpu/src/kernels/amx) for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL and
// Q2_K..Q6_K against the AVX-512 prompt tiles, whose values they must give bit for bit (the
// AVX-512 tiles are themselves checked against the block-sum definition in
// cpu_ops/test_quant_prompt_tiles.cpp and the K-quants' scalar definition in
// cpu_ops/test_kquant_dot.cpp; both also run the AMX table where the CPU has one).
//
// On every CPU with AVX-512 the AMX kernel runs on an emulation of the tile instructions
// (emulated_tiles.hpp) inside the backend's own matmul driver: that proves the tiling, the tile
// shapes and configuration, the operand layouts and the float steps, everywhere. Where the CPU
// has AMX and grants tile data, the hardware table runs too.
//
// This file is built for the baseline, like the library's callers: the kernels instantiated on
// the emulated tiles come from emulated_amx_kernels.cpp, built with the AVX-512 flags, and are
// reached only after a test has checked that the CPU runs the AVX-512 table.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emulated_amx_kernels.hpp"
#include "emulated_tiles.hpp"
#include "eredu/backends/cpu/kernels.hpp"
#include "kernel_impl.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::MatrixView;
using eredu::cpu::ThreadPool;
using eredu::testing::amx::emulated_amx_report;
using eredu::testing::amx::EmulatedTiles;
using eredu::testing::amx::EmulationReport;
using namespace eredu::testing::op_parity;
namespace detail = eredu::cpu::detail;

// The 32-code block encodings, then the K-quants (and IQ4_XS, which must keep the AVX-512 tiles).
constexpr std::array kEncodings = {DType::kQ4_0, DType::kQ4_1,   DType::kQ5_0, DType::kQ5_1,
                                   DType::kQ8_0, DType::kIQ4_NL, DType::kQ2_K, DType::kQ3_K,
                                   DType::kQ4_K, DType::kQ5_K,   DType::kQ6_K, DType::kIQ4_XS};

bool is_k_block(DType dtype) {
  return dtype == DType::kQ2_K || dtype == DType::kQ3_K || dtype == DType::kQ4_K ||
         dtype == DType::kQ5_K || dtype == DType::kQ6_K || dtype == DType::kIQ4_XS;
}

struct Shape {
  std::size_t rows;
  std::size_t tokens;
  std::size_t blocks;  // of 32 codes, or of 256 for the K-quants
};
// Rows around the 16-row groups and 32-row work items; tokens around the 16-token AMX tiles
// (a last tile of 1..15 tokens runs the VNNI tile) and past one 96-token chunk.
constexpr std::array<Shape, 8> kShapes = {{{16, 17, 2},
                                           {17, 31, 1},
                                           {33, 32, 3},
                                           {40, 33, 2},
                                           {1, 48, 4},
                                           {67, 97, 2},
                                           {35, 130, 1},
                                           {48, 64, 3}}};

// Each element of `got` equals `want` bit for bit.
void expect_same_bits(const std::vector<float>& want, const std::vector<float>& got,
                      const std::string& what) {
  std::size_t differ = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0 && differ++ == 0) first = i;
  }
  EXPECT_EQ(differ, 0U) << what << ": " << differ << " of " << want.size()
                        << " elements differ, first at " << first << ": " << got[first] << " vs "
                        << want[first];
}

// For every encoding and shape, on 1 and 3 threads, `run` gives the AVX-512 table's values.
template <typename Run>
void expect_avx512_values(const eredu::cpu::KernelTable& avx512, const std::string& name, Run run) {
  ThreadPool three(3);
  for (DType dtype : kEncodings) {
    for (const Shape& s : kShapes) {
      std::mt19937 rng(7100 + static_cast<unsigned>(dtype) * 31 + static_cast<unsigned>(s.rows) +
                       static_cast<unsigned>(s.tokens));
      const std::size_t cols = (is_k_block(dtype) ? 256 : 32) * s.blocks;
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const auto x = random_floats(rng, s.tokens * cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols};
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
        std::vector<float> want(s.tokens * s.rows, -1.0F);
        std::vector<float> got(s.tokens * s.rows, -2.0F);
        avx512.matmul(w, x.data(), s.tokens, want.data(), pool);
        run(w, x.data(), s.tokens, got.data(), pool);
        expect_same_bits(want, got,
                         name + " " + std::string(eredu::to_string(dtype)) + " " +
                             std::to_string(s.rows) + " rows x " + std::to_string(s.tokens) +
                             " tokens x " + std::to_string(cols) + " cols, " +
                             std::to_string(pool == nullptr ? 1 : pool->size()) + " threads");
      }
    }
  }
}

const eredu::cpu::KernelTable* avx512_or_skip_message(std::string* message) {
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx512 == nullptr) {
    *message = "this CPU cannot run the avx512 kernels (they need " +
               std::string(eredu::cpu::isa_requirements(Isa::kAvx512)) +
               "), which the AMX kernels' float steps use";
  }
  return avx512;
}

// The emulated tiles ran at least one dot product since `before` and nothing the hardware would
// have faulted on.
void expect_tiles_used_without_faults(const EmulationReport& before) {
  const EmulationReport after = emulated_amx_report();
  EXPECT_GT(after.products, before.products) << "the emulated tile instructions never ran";
  EXPECT_EQ(after.faults, before.faults) << "first: " << after.first_fault;
}

TEST(AmxPromptTiles, EmulatedTilesGiveTheAvx512PromptTilesValuesBitForBit) {
  std::string why;
  const auto* avx512 = avx512_or_skip_message(&why);
  if (avx512 == nullptr) GTEST_SKIP() << why;
  // The AVX-512 table with its prompt products replaced by the AMX kernel on emulated tiles, run
  // through the backend's own matmul (the same work items, token chunks and activation layout).
  const detail::VecOps ops = eredu::testing::amx::avx512_ops_with_emulated_amx_prompts();
  const EmulationReport before = emulated_amx_report();
  expect_avx512_values(*avx512, "emulated amx",
                       [&](const MatrixView& w, const float* x, std::size_t n, float* y,
                           ThreadPool* pool) { detail::matmul(ops, w, x, n, y, pool); });
  // Not vacuous: the 16-token tiles ran on the (emulated) tile instructions.
  expect_tiles_used_without_faults(before);
}

// The K-quants and the encodings with blocks of 32 read from row groups (made at load on both
// tables): prompts unpack the groups into the tiles' layout, and the AMX tiles (emulated, through
// the backend's matmul) must give the AVX-512 row-group products' values bit for bit, on the rows
// in whole groups and the tail rows read as stored alike.
TEST(AmxPromptTiles, EmulatedTilesOverRowGroupsGiveTheAvx512TablesValuesBitForBit) {
  std::string why;
  const auto* avx512 = avx512_or_skip_message(&why);
  if (avx512 == nullptr) GTEST_SKIP() << why;
  const detail::VecOps ops = eredu::testing::amx::avx512_ops_with_emulated_amx_row_groups();
  const EmulationReport before = emulated_amx_report();
  ThreadPool three(3);
  for (DType dtype :
       {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ4_0,
        DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kIQ4_NL})
    for (const Shape& s : kShapes) {
      std::mt19937 rng(7300 + static_cast<unsigned>(s.rows) + static_cast<unsigned>(s.tokens));
      const std::size_t cols = (is_k_block(dtype) ? 256 : 32) * s.blocks;
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const PackedRowGroups groups = pack_row_groups(*avx512, dtype, bytes, s.rows, cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols, groups.data};
      const auto x = random_floats(rng, s.tokens * cols);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
        std::vector<float> want(s.tokens * s.rows, -1.0F);
        std::vector<float> got(s.tokens * s.rows, -2.0F);
        avx512->matmul(w, x.data(), s.tokens, want.data(), pool);
        detail::matmul(ops, w, x.data(), s.tokens, got.data(), pool);
        expect_same_bits(want, got,
                         "emulated amx " + std::string(eredu::to_string(dtype)) + " row groups, " +
                             std::to_string(s.rows) + " rows x " + std::to_string(s.tokens) +
                             " tokens x " + std::to_string(cols) + " cols, " +
                             std::to_string(pool == nullptr ? 1 : pool->size()) + " threads");
      }
    }
  expect_tiles_used_without_faults(before);
}

TEST(AmxPromptTiles, HardwareTableGivesTheAvx512TablesValuesBitForBit) {
  const auto* amx = eredu::cpu::kernels_for(Isa::kAmx);
  if (amx == nullptr) {
    const auto& f = eredu::cpu::cpu_features();
    GTEST_SKIP() << "this CPU cannot run the amx kernels (they need "
                 << eredu::cpu::isa_requirements(Isa::kAmx) << "; cpuid AMX-TILE " << f.amx_tile
                 << ", AMX-INT8 " << f.amx_int8 << ", XCR0 tile state " << f.os_amx
                 << ", tile data granted " << f.amx_granted
                 << "); the emulated test runs the same kernel";
  }
  ASSERT_NE(eredu::cpu::kernels_for(Isa::kAvx512), nullptr);
  expect_avx512_values(*eredu::cpu::kernels_for(Isa::kAvx512), "amx",
                       [&](const MatrixView& w, const float* x, std::size_t n, float* y,
                           ThreadPool* pool) { amx->matmul(w, x, n, y, pool); });
}

// The emulation itself against TDPBUSD's definition on bytes chosen by hand: unsigned 255 and
// signed -128 at the extremes, so that a sign or zero extension the wrong way round shows. The
// emulation is plain C++ (this file's copy is built for the baseline), so this runs on every CPU.
TEST(AmxPromptTiles, EmulatedDotProductFollowsTheInstructionDefinition) {
  const std::size_t faults_before = EmulatedTiles::faults().count.load();
  eredu::cpu::detail::TileConfig c{};
  c.palette_id = 1;
  c.rows[0] = 2;
  c.colsb[0] = 8;  // 2 x 2 int32 sums
  c.rows[1] = 2;
  c.colsb[1] = 8;  // 2 rows x 8 unsigned bytes (K = 8)
  c.rows[2] = 2;
  c.colsb[2] = 8;  // K / 4 = 2 rows x (2 columns x 4 signed bytes)
  EmulatedTiles::configure(c);
  const std::uint8_t u[2][8] = {{255, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 255, 255, 255, 255}};
  const std::int8_t s[2][8] = {{-128, 1, 1, 1, 2, 2, 2, 2}, {1, 1, 1, 1, -128, -128, -128, -128}};
  std::int32_t sums[2][2] = {{10, 20}, {30, 40}};
  EmulatedTiles::load<0>(sums, sizeof sums[0]);
  EmulatedTiles::load<1>(u, sizeof u[0]);
  EmulatedTiles::load<2>(s, sizeof s[0]);
  EmulatedTiles::dpbusd<0, 1, 2>();
  EmulatedTiles::store<0>(sums, sizeof sums[0]);
  EmulatedTiles::release();
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 2; ++n) {
      std::int32_t want = 10 * (2 * m + n + 1);
      for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 4; ++i)
          want += static_cast<std::int32_t>(u[m][4 * k + i]) * s[k][4 * n + i];
      }
      EXPECT_EQ(sums[m][n], want) << "row " << m << ", column " << n;
    }
  }
  EXPECT_EQ(sums[0][0], 10 + 255 * -128 + 1 + 2 + 3 + 4 * 1 + 5 * 1 + 6 * 1 + 7 * 1);

  // TDPBSSD reads the left bytes as signed: 255 is -1.
  EmulatedTiles::configure(c);
  std::int32_t signed_sums[2][2] = {};
  EmulatedTiles::zero<0>();
  EmulatedTiles::load<1>(u, sizeof u[0]);
  EmulatedTiles::load<2>(s, sizeof s[0]);
  EmulatedTiles::dpbssd<0, 1, 2>();
  EmulatedTiles::store<0>(signed_sums, sizeof signed_sums[0]);
  EmulatedTiles::release();
  EXPECT_EQ(signed_sums[0][0], -1 * -128 + 1 + 2 + 3 + 4 + 5 + 6 + 7);
  EXPECT_EQ(signed_sums[1][1], 4 * (-1 * -128));
  EXPECT_EQ(EmulatedTiles::faults().count.load(), faults_before)
      << "first: " << EmulatedTiles::faults().first;
}

// The emulation faults where the hardware would: a dot product on tiles whose shapes do not
// chain (K of the left operand is not 4 x the right operand's rows), and a load without a
// configuration. Otherwise its checks could be vacuous.
TEST(AmxPromptTiles, EmulatedTilesFaultWhereTheHardwareWould) {
  eredu::cpu::detail::TileConfig c{};
  c.palette_id = 1;
  for (int t = 0; t < 3; ++t) {
    c.rows[t] = 2;
    c.colsb[t] = 8;
  }
  c.rows[2] = 3;  // right operand: 3 rows of 4-byte groups, the left operand has K = 8 (2 rows)
  EmulatedTiles::configure(c);
  const std::size_t before = EmulatedTiles::faults().count.load();
  EmulatedTiles::dpbusd<0, 1, 2>();
  EXPECT_EQ(EmulatedTiles::faults().count.load(), before + 1);
  EmulatedTiles::release();
  const std::uint8_t bytes[64] = {};
  EmulatedTiles::load<0>(bytes, 8);
  EXPECT_EQ(EmulatedTiles::faults().count.load(), before + 2);
}

}  // namespace
