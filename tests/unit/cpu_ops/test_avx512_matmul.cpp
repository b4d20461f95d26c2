// The AVX-512 table against the AVX2 table, an independent implementation of the same numerics:
// every integer encoding's matmul gives the AVX2 table's value bit for bit: Q4_0 / Q8_0 through
// the VNNI one-token products (which lay the activations out once per call) and small-batch tiles,
// Q4_0 .. Q8_0 prompts through the 16-lane prompt tiles (the AVX2 ones are 8-lane, with int16
// pair sums), the K-quants through the 512-bit K-quant kernels, the rest through the AVX2 kernels
// the table keeps. For one token (decode), small batches and prompts, row and token counts off
// every tile edge, odd and even block counts (the row dots take blocks in pairs), and on 1 or 3
// threads. So for these encodings choosing the AVX-512 table can change speed, never a token; only
// float weights' prompt tiles round differently there (test_tiled_matmul.cpp), F16's except on a
// CPU that splits 512-bit operations in two (the last test).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::MatrixView;
using eredu::cpu::ThreadPool;
using namespace eredu::testing::op_parity;

struct Shape {
  std::size_t rows;
  std::size_t tokens;
  std::size_t blocks;  // row length in blocks of the encoding
};

// The count of elements whose bits differ, and the first of them.
struct Difference {
  std::size_t count = 0;
  std::size_t first = 0;
};
Difference bitwise_difference(const std::vector<float>& actual,
                              const std::vector<float>& expected) {
  Difference d;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0 && d.count++ == 0) d.first = i;
  }
  return d;
}

// A random rows x cols matrix of `dtype` times `tokens` random activation rows through both
// tables: the avx512 table's output, on 1 and on 3 threads, must be the avx2 table's bit for bit.
// With `groups`, the avx512 table also gets the weight laid out in its row groups, as a load gives
// it (the avx2 table reads the rows as stored).
void expect_avx2_values(const eredu::cpu::KernelTable& avx512, const eredu::cpu::KernelTable& avx2,
                        DType dtype, std::size_t rows, std::size_t tokens, std::size_t cols,
                        unsigned seed, bool groups = false) {
  std::mt19937 rng(seed);
  const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
  const PackedRowGroups packed =
      groups ? pack_row_groups(avx512, dtype, bytes, rows, cols) : PackedRowGroups{};
  const MatrixView w{dtype, bytes.data(), rows, cols, packed.data};
  const auto x = random_floats(rng, tokens * cols, -3.0F, 3.0F);
  std::vector<float> expected(tokens * rows, -1.0F);
  avx2.matmul(w, x.data(), tokens, expected.data(), nullptr);
  ThreadPool three(3);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
    std::vector<float> actual(expected.size(), -2.0F);
    avx512.matmul(w, x.data(), tokens, actual.data(), pool);
    const auto [differ, first] = bitwise_difference(actual, expected);
    EXPECT_EQ(differ, 0U) << eredu::to_string(dtype) << " " << rows << " rows x " << tokens
                          << " tokens x " << cols << " cols, " << (groups ? "row groups, " : "")
                          << (pool == nullptr ? 0 : pool->size()) << " threads: first at " << first
                          << ": " << actual[first] << " vs " << expected[first];
  }
}

TEST(Avx512Matmul, EveryEncodingGivesTheAvx2TablesValuesBitForBit) {
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx512 == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the avx512 kernels (they need "
                 << eredu::cpu::isa_requirements(Isa::kAvx512) << ")";
  }
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  ASSERT_NE(avx2, nullptr) << "AVX-512 without AVX2";
  // Rows around the 4-row tiles and the 24-row work items; tokens: 1 (decode, rows of 1 .. 256
  // blocks, odd counts ending on a lone block, rows split across threads, groups of 4 rows and the
  // rows left over, rows longer than the one-token products' stream hint), small batches, odd
  // counts (a token pair with one token), 8-token tiles and their edges, past one 96-token chunk.
  const std::vector<Shape> shapes = {
      {1, 1, 1},    {3, 1, 2},  {7, 1, 3},  {13, 1, 5},  {40, 1, 67}, {33, 1, 64}, {4, 1, 6},
      {38, 1, 256}, {5, 2, 2},  {7, 3, 1},  {9, 5, 3},   {17, 8, 2},  {6, 9, 1},   {11, 13, 4},
      {6, 16, 3},   {5, 17, 1}, {9, 19, 2}, {29, 98, 1}, {26, 23, 6}};
  const std::vector<DType> dtypes = {DType::kQ4_0, DType::kQ8_0, DType::kQ4_1, DType::kQ5_0,
                                     DType::kQ5_1, DType::kQ4_K, DType::kQ6_K, DType::kIQ4_NL};
  for (DType dtype : dtypes) {
    for (const Shape& s : shapes) {
      // Float rows: steps of 8 plus a tail of 5 (the tiles' scalar tail).
      const std::size_t block = eredu::dtype_info(dtype).block_elements;
      const std::size_t cols = block == 1 ? 64 * s.blocks + 5 : block * s.blocks;
      expect_avx2_values(*avx512, *avx2, dtype, s.rows, s.tokens, cols,
                         4100 + static_cast<unsigned>(dtype) * 37 + static_cast<unsigned>(s.rows));
    }
  }
}

// Weights with blocks of 32 (Q4_0 .. Q8_0, IQ4_NL) laid out in row groups of 16 at load (the avx512
// table's one-token products read rows [0, rows / 16 * 16) from the groups, the rest as stored):
// still the AVX2 table's values bit for bit, for whole groups and tail rows, fewer rows than a
// group, odd block counts (the last pair half empty), rows longer than one 512-block pass (the
// products keep their chains between passes), rows split across 3 threads, short batches (the
// one-token product per token) and prompts (the prompt tiles on the groups repacked).
TEST(Avx512Matmul, RowGroupsOfBlocksOf32GiveTheAvx2TablesValuesBitForBit) {
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx512 == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the avx512 kernels (they need "
                 << eredu::cpu::isa_requirements(Isa::kAvx512) << ")";
  }
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  ASSERT_NE(avx2, nullptr) << "AVX-512 without AVX2";
  const std::vector<Shape> shapes = {{16, 1, 1},    {16, 1, 2},   {32, 1, 3}, {19, 1, 64},
                                     {48, 1, 67},   {5, 1, 8},    {96, 1, 8}, {35, 1, 513},
                                     {32, 1, 1100}, {64, 1, 256}, {33, 5, 2}, {48, 16, 4},
                                     {16, 17, 2},   {40, 25, 3}};
  for (DType dtype :
       {DType::kQ4_0, DType::kQ8_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kIQ4_NL}) {
    ASSERT_GT(avx512->row_group_bytes(dtype, 16, 64), 0U)
        << "the avx512 table lays " << eredu::to_string(dtype) << " out in row groups";
    for (const Shape& s : shapes) {
      expect_avx2_values(*avx512, *avx2, dtype, s.rows, s.tokens, 32 * s.blocks,
                         7300 + static_cast<unsigned>(dtype) * 41 + static_cast<unsigned>(s.rows),
                         /*groups=*/true);
    }
  }
}

// F16 and BF16 weights, one token (decode) and batches of up to 16 (a speculative verification):
// the AVX-512 token kernel reads the activations in the weights' type, 16 lanes at a time, and must
// give the AVX2 table's 8-lane float value on every row. Rows of 1 .. 8192 elements (steps of 32,
// the steps of 8 and the scalar tail; 8192 as llama1b's FFN down, longer than the 8 KiB prefetch
// distance), token groups of 4 and their remainders, activations off the F16 / BF16 grid (both
// tables round them the same way), on 1 or 3 threads.
TEST(Avx512Matmul, HalfWeightDecodeAndShortBatchesGiveTheAvx2TablesValuesBitForBit) {
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx512 == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the avx512 kernels (they need "
                 << eredu::cpu::isa_requirements(Isa::kAvx512) << ")";
  }
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  ASSERT_NE(avx2, nullptr) << "AVX-512 without AVX2";
  struct HalfShape {
    std::size_t rows, tokens, cols;
  };
  const std::vector<HalfShape> shapes = {
      {1, 1, 1},  {3, 1, 7},   {5, 1, 37},  {7, 1, 64},   {9, 1, 69}, {13, 1, 8192}, {4, 2, 40},
      {6, 3, 95}, {5, 4, 128}, {7, 5, 133}, {3, 7, 2051}, {5, 8, 96}, {4, 13, 261},  {3, 16, 8192}};
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (const HalfShape& s : shapes) {
      expect_avx2_values(
          *avx512, *avx2, dtype, s.rows, s.tokens, s.cols,
          5200 + static_cast<unsigned>(s.cols * 7 + s.tokens) + static_cast<unsigned>(dtype));
    }
  }
}

// F16 prompts (more than 16 tokens) on a CPU that runs 512-bit operations as two 256-bit halves:
// the avx512 table takes the 8-lane F16 tile there (256-bit widenings cost half a 512-bit one), so
// its values must be the AVX2 table's 3 x 4 tile's, bit for bit, through the 6 x 4 tile's edges
// (rows off 6, tokens off 4, row blocks of 24, past one 96-token chunk, a tail of 1 .. 7 elements)
// and on 1 or 3 threads. Elsewhere the 16-lane tile is checked against a float64 product
// (test_tiled_matmul.cpp).
TEST(Avx512Matmul, F16PromptsOnSplit512BitUnitsGiveTheAvx2TablesValuesBitForBit) {
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx512 == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the avx512 kernels (they need "
                 << eredu::cpu::isa_requirements(Isa::kAvx512) << ")";
  }
  if (!eredu::cpu::cpu_features().avx512_split)
    GTEST_SKIP() << "this CPU runs 512-bit operations whole: its avx512 table keeps the 16-lane "
                    "F16 tile";
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  ASSERT_NE(avx2, nullptr) << "AVX-512 without AVX2";
  struct HalfShape {
    std::size_t rows, tokens, cols;
  };
  const std::vector<HalfShape> shapes = {{1, 17, 8},   {5, 17, 37},    {6, 20, 64},
                                         {7, 21, 69},  {13, 23, 95},   {25, 33, 133},
                                         {50, 97, 40}, {49, 18, 2051}, {24, 19, 2048}};
  for (const HalfShape& s : shapes) {
    expect_avx2_values(*avx512, *avx2, DType::kF16, s.rows, s.tokens, s.cols,
                       6100 + static_cast<unsigned>(s.cols * 7 + s.tokens));
  }
}

// One F32 element as the AVX-512 prompt tiles define it (float_gemm_avx512.cpp), restated one lane
// at a time: 16 fused multiply-add chains over k in steps of 16, then lanes i and i + 8 added, then
// i and i + 4, then 0 and 2 and 1 and 3, then those two (hsum16's pairs), then the k % 16 tail in
// order.
float sixteen_lane_chain(const float* w, const float* x, std::size_t k) {
  float lane[16] = {};
  std::size_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (std::size_t l = 0; l < 16; ++l)
      lane[l] = std::fma(w[i + l], x[i + l], lane[l]);
  }
  float a[8];
  for (int l = 0; l < 8; ++l)
    a[l] = lane[l] + lane[l + 8];
  float b[4];
  for (int l = 0; l < 4; ++l)
    b[l] = a[l] + a[l + 4];
  float sum = (b[0] + b[2]) + (b[1] + b[3]);
  for (; i < k; ++i)
    sum = std::fma(w[i], x[i], sum);
  return sum;
}

// The F32 prompt tiles of every shape (6 x 4 and each edge tile, rows of 1 to 13, prompts past the
// 16 tokens below which products take the one-token path, row lengths with and without a tail, of
// 64 and 172 as stories260K's) give each element the 16-lane chain's value bit for bit, on 1 and 3
// threads: the tile sums its accumulators together, and must pair their lanes exactly as one sum
// of one accumulator would.
TEST(Avx512Matmul, F32PromptTilesGiveEachElementTheSixteenLaneChainsValueBitForBit) {
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx512 == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the avx512 kernels (they need "
                 << eredu::cpu::isa_requirements(Isa::kAvx512) << ")";
  }
  ThreadPool three(3);
  for (std::size_t rows : {1, 2, 3, 5, 6, 7, 12, 13}) {
    for (std::size_t tokens : {17, 18, 19, 23, 40}) {
      for (std::size_t cols : {16, 37, 64, 172}) {
        std::mt19937 rng(static_cast<unsigned>(rows * 1000 + tokens * 10 + cols));
        const auto weights = random_floats(rng, rows * cols, -2.0F, 2.0F);
        const auto x = random_floats(rng, tokens * cols, -3.0F, 3.0F);
        std::vector<float> expected(tokens * rows);
        for (std::size_t t = 0; t < tokens; ++t) {
          for (std::size_t r = 0; r < rows; ++r)
            expected[t * rows + r] =
                sixteen_lane_chain(weights.data() + r * cols, x.data() + t * cols, cols);
        }
        const MatrixView w{DType::kF32, weights.data(), rows, cols};
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
          std::vector<float> actual(expected.size(), -1.0F);
          avx512->matmul(w, x.data(), tokens, actual.data(), pool);
          const auto [differ, first] = bitwise_difference(actual, expected);
          EXPECT_EQ(differ, 0U) << rows << " rows x " << tokens << " tokens x " << cols << " cols, "
                                << (pool == nullptr ? 1 : pool->size()) << " threads: first at "
                                << first << ": " << actual[first] << " vs " << expected[first];
        }
      }
    }
  }
}

}  // namespace
