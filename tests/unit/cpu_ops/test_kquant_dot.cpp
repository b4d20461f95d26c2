// Integer dot products for the K-quants (Q2_K..Q6_K), IQ4_XS (q8_K activations) and IQ4_NL (Q8_0
// activations):
//  - the scalar definitions (reference::dot_q8_K, dot_iq4_nl_q8_0) equal a float64 dot of the
//    decoder's weights with the dequantized activation blocks, to float rounding: they read the
//    same codes, scales and minimums as the independent decoders in dequantize_block.hpp;
//  - the AVX2 matmul gives, bit for bit, the definition's value for every element, for one token
//    (decode) and prompt batches, odd row counts, token counts off the tile edges, and 1 or 3
//    threads;
//  - against the float path (dequantized weights times F32 activations) the only difference is the
//    8-bit activation quantization: a small NMSE.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::MatrixView;
using eredu::cpu::ThreadPool;
namespace enc = eredu::encoding;
namespace ref = eredu::cpu::reference;
using namespace eredu::testing::op_parity;

const std::vector<DType>& integer_dtypes() {
  static const std::vector<DType> d = {DType::kQ2_K, DType::kQ3_K,   DType::kQ4_K,  DType::kQ5_K,
                                       DType::kQ6_K, DType::kIQ4_XS, DType::kIQ4_NL};
  return d;
}

std::size_t block_of(DType dtype) {
  return eredu::dtype_info(dtype).block_elements;
}

// The definition's value of every (token, row) element: y[t * rows + r].
std::vector<float> reference_dots(const MatrixView& w, const std::vector<float>& x,
                                  std::size_t tokens) {
  const std::size_t row_bytes = eredu::cpu::packed_row_bytes(w.dtype, w.cols);
  const auto* base = static_cast<const std::byte*>(w.data);
  std::vector<float> y(tokens * w.rows);
  for (std::size_t t = 0; t < tokens; ++t) {
    if (w.dtype == DType::kIQ4_NL) {
      std::vector<enc::BlockQ8_0> xq(w.cols / 32);
      ref::quantize_row_q8_0(x.data() + t * w.cols, xq.data(), w.cols);
      for (std::size_t r = 0; r < w.rows; ++r)
        y[t * w.rows + r] = ref::dot_iq4_nl_q8_0(base + r * row_bytes, xq.data(), xq.size());
    } else {
      std::vector<enc::BlockQ8_K> xq(w.cols / 256);
      ref::quantize_row_q8_K(x.data() + t * w.cols, xq.data(), w.cols);
      for (std::size_t r = 0; r < w.rows; ++r)
        y[t * w.rows + r] = ref::dot_q8_K(w.dtype, base + r * row_bytes, xq.data(), xq.size());
    }
  }
  return y;
}

TEST(KQuantDot, ReferenceEqualsAFloat64DotOfDecodedWeightsAndActivationBlocks) {
  for (DType dtype : integer_dtypes()) {
    std::mt19937 rng(40 + static_cast<unsigned>(dtype));
    const std::size_t cols = 3 * 256;
    const std::size_t rows = 5;
    const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView w{dtype, bytes.data(), rows, cols};
    const auto x = random_floats(rng, cols, -2.0F, 2.0F);
    // The activation as the integer dot sees it: d * q per block, decoded independently.
    std::vector<double> xa(cols);
    if (dtype == DType::kIQ4_NL) {
      std::vector<enc::BlockQ8_0> xq(cols / 32);
      ref::quantize_row_q8_0(x.data(), xq.data(), cols);
      for (std::size_t i = 0; i < cols; ++i)
        xa[i] = static_cast<double>(enc::fp16_to_fp32(xq[i / 32].d)) * xq[i / 32].qs[i % 32];
    } else {
      std::vector<enc::BlockQ8_K> xq(cols / 256);
      ref::quantize_row_q8_K(x.data(), xq.data(), cols);
      for (std::size_t b = 0; b < xq.size(); ++b) {
        for (int s = 0; s < 16; ++s) {
          int sum = 0;
          for (int l = 0; l < 16; ++l)
            sum += xq[b].qs[16 * s + l];
          EXPECT_EQ(xq[b].bsums[s], sum) << "bsums of sub-block " << s;
        }
      }
      for (std::size_t i = 0; i < cols; ++i)
        xa[i] = static_cast<double>(xq[i / 256].d) * xq[i / 256].qs[i % 256];
    }
    // Half a quantization step (max|x| / 127 <= 2 / 127), a little more where the Q8_0 scale is
    // rounded to F16.
    for (std::size_t i = 0; i < cols; ++i)
      ASSERT_NEAR(xa[i], x[i], 2.0 / 127.0 * 0.52) << "activation " << i;
    std::vector<float> expected(rows);
    std::vector<float> row(cols);
    for (std::size_t r = 0; r < rows; ++r) {
      ref::get_row(w, r, row.data());
      double sum = 0.0;
      for (std::size_t i = 0; i < cols; ++i)
        sum += static_cast<double>(row[i]) * xa[i];
      expected[r] = static_cast<float>(sum);
    }
    const auto actual = reference_dots(w, x, 1);
    EXPECT_TRUE(outputs_match(std::string(eredu::to_string(dtype)), actual.data(), expected.data(),
                              rows, 1e-11));
  }
}

struct Shape {
  std::size_t rows;
  std::size_t tokens;
  std::size_t blocks;  // row length in blocks of the encoding
};

// "" when actual is expected bit for bit, else how many elements differ and the first of them.
std::string bitwise_mismatch(const std::vector<float>& actual, const std::vector<float>& expected) {
  std::size_t differ = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0 && differ++ == 0) first = i;
  }
  if (differ == 0) return "";
  return std::to_string(differ) + " differ, first at " + std::to_string(first) + ": " +
         std::to_string(actual[first]) + " vs " + std::to_string(expected[first]);
}

// The AVX2 and AVX-512 tables form the same exact integer sums in different ways (32 or 64 codes
// per instruction, other tiles); both must give the scalar definition bit for bit.
void expect_matmul_bit_identical_to_definition(Isa isa) {
  const auto* table = eredu::cpu::kernels_for(isa);
  if (table == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the " << eredu::cpu::isa_name(isa)
                 << " kernels (they need " << eredu::cpu::isa_requirements(isa) << ")";
  }
  // Rows around the 4-row tiles, the 2-row AVX2 batch tile and the 24-row work items; tokens: 1
  // (decode: rows of 1-3 blocks, whole groups of 4 blocks and a group with a tail, and past two
  // of the AVX-512 decode's 64-block chunks, alone and in its groups of 4 rows), small batches
  // split into uneven groups of up to 6 (7, 9, 13, 16), the 4-token tile's edges past 16 tokens,
  // and past one 96-token chunk.
  const std::vector<Shape> shapes = {
      {1, 1, 1},   {3, 1, 2},  {7, 1, 3},   {13, 1, 1},  {9, 1, 4},   {5, 1, 9},
      {2, 1, 131}, {5, 2, 2},  {40, 30, 3}, {16, 25, 2}, {7, 3, 1},   {9, 5, 2},
      {17, 4, 1},  {31, 9, 2}, {3, 7, 4},   {50, 2, 1},  {11, 13, 1}, {6, 16, 2},
      {5, 17, 1},  {9, 19, 1}, {29, 98, 1}, {6, 18, 1},  {11, 21, 2}, {9, 1, 131}};
  ThreadPool one(1);
  ThreadPool three(3);
  for (DType dtype : integer_dtypes()) {
    for (const Shape& s : shapes) {
      std::mt19937 rng(900 + static_cast<unsigned>(dtype) * 31 + static_cast<unsigned>(s.rows));
      const std::size_t cols = block_of(dtype) * s.blocks * (dtype == DType::kIQ4_NL ? 8 : 1);
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols};
      const auto x = random_floats(rng, s.tokens * cols, -3.0F, 3.0F);
      const auto expected = reference_dots(w, x, s.tokens);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &one, &three}) {
        std::vector<float> actual(expected.size(), -1.0F);
        table->matmul(w, x.data(), s.tokens, actual.data(), pool);
        EXPECT_EQ(bitwise_mismatch(actual, expected), "")
            << eredu::cpu::isa_name(isa) << " " << eredu::to_string(dtype) << " " << s.rows
            << " rows x " << s.tokens << " tokens x " << cols << " cols, "
            << (pool == nullptr ? 0 : pool->size()) << " threads";
      }
    }
  }
}

TEST(KQuantDot, Avx2MatmulIsBitIdenticalToTheDefinitionForEveryShapeAndThreadCount) {
  expect_matmul_bit_identical_to_definition(Isa::kAvx2);
}

TEST(KQuantDot, Avx512MatmulIsBitIdenticalToTheDefinitionForEveryShapeAndThreadCount) {
  expect_matmul_bit_identical_to_definition(Isa::kAvx512);
}

TEST(KQuantDot, AmxMatmulIsBitIdenticalToTheDefinitionForEveryShapeAndThreadCount) {
  expect_matmul_bit_identical_to_definition(Isa::kAmx);
}

// K-quants, IQ4_XS and IQ4_NL laid out again in groups of 16 rows (the avx512 and amx tables' row
// groups, made at load): decode, short batches and prompts read rows [0, rows / 16 * 16) from the
// groups and the rest as stored, and must still give the definition bit for
// bit: whole groups, groups with tail rows, fewer rows than a group, rows past the decode's
// chunk (64 blocks of 256, 512 of 32), shares of 1 and 3 threads (which cut the rows on group
// boundaries), token counts off the 8-token tile and the 96-token chunk, and IQ4_NL rows of an odd
// number of blocks (the last pair half empty).
const std::vector<DType> kGroupedOnAvx512 = {DType::kQ2_K,  DType::kQ3_K, DType::kQ4_K,
                                             DType::kQ5_K,  DType::kQ6_K, DType::kIQ4_XS,
                                             DType::kIQ4_NL};

void expect_row_groups_give_the_definition(Isa isa,
                                           const std::vector<DType>& grouped = kGroupedOnAvx512) {
  const auto* table = eredu::cpu::kernels_for(isa);
  if (table == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the " << eredu::cpu::isa_name(isa)
                 << " kernels (they need " << eredu::cpu::isa_requirements(isa) << ")";
  }
  for (DType dtype : grouped) {
    ASSERT_GT(table->row_group_bytes(dtype, 16, 256), 0U)
        << "the " << eredu::cpu::isa_name(isa) << " table lays " << eredu::to_string(dtype)
        << " out in row groups";
  }
  const std::vector<Shape> shapes = {{16, 1, 1},  {32, 1, 3},  {19, 1, 2},  {48, 1, 65},
                                     {5, 1, 2},   {35, 1, 1},  {96, 1, 2},  {16, 2, 1},
                                     {33, 5, 2},  {48, 16, 1}, {16, 17, 2}, {40, 25, 1},
                                     {64, 98, 1}, {18, 9, 65}, {128, 3, 4}, {80, 1, 8}};
  ThreadPool three(3);
  for (DType dtype : grouped)
    for (const Shape& s : shapes) {
      std::mt19937 rng(1300 + static_cast<unsigned>(s.rows * 7 + s.tokens));
      // IQ4_NL: as many columns in blocks of 32, one more block for odd row counts.
      const std::size_t cols =
          dtype == DType::kIQ4_NL ? 32 * (8 * s.blocks + s.rows % 2) : 256 * s.blocks;
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const PackedRowGroups groups = pack_row_groups(*table, dtype, bytes, s.rows, cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols, groups.data};
      const auto x = random_floats(rng, s.tokens * cols, -3.0F, 3.0F);
      const auto expected = reference_dots(w, x, s.tokens);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
        std::vector<float> actual(expected.size(), -1.0F);
        table->matmul(w, x.data(), s.tokens, actual.data(), pool);
        EXPECT_EQ(bitwise_mismatch(actual, expected), "")
            << eredu::to_string(dtype) << " " << s.rows << " rows x " << s.tokens << " tokens x "
            << cols << " cols, " << (pool == nullptr ? 0 : pool->size()) << " threads";
      }
    }
}

TEST(KQuantDot, Avx512RowGroupsGiveTheDefinitionBitForBit) {
  expect_row_groups_give_the_definition(Isa::kAvx512);
}

TEST(KQuantDot, AmxRowGroupsGiveTheDefinitionBitForBit) {
  expect_row_groups_give_the_definition(Isa::kAmx);
}

// The AVX2 table lays out every K-quant and IQ4_XS (avx2/row_groups_avx2.cpp: Q4_K, Q5_K;
// avx2/bit_pair_row_groups_avx2.cpp: Q2_K, Q3_K; avx2/q6k_row_groups_avx2.cpp;
// avx2/iq4xs_row_groups_avx2.cpp): its decode reads the groups, and for several tokens each half
// group is repacked straight into the prompt tiles' layout (IQ4_XS: unpacked back into rows).
TEST(KQuantDot, Avx2RowGroupsGiveTheDefinitionBitForBit) {
  expect_row_groups_give_the_definition(Isa::kAvx2, {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K,
                                                     DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS});
}

TEST(KQuantDot, TheAvx2TableLaysOutTheKQuantsAndIQ4XSAloneInRowGroups) {
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  for (DType dtype : {DType::kIQ4_NL, DType::kQ4_0, DType::kQ8_0, DType::kF16}) {
    EXPECT_EQ(avx2->row_group_bytes(dtype, 16, 256), 0U) << eredu::to_string(dtype);
  }
  for (DType dtype :
       {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS})
    EXPECT_GT(avx2->row_group_bytes(dtype, 16, 256), 0U) << eredu::to_string(dtype);
}

TEST(KQuantDot, Avx2MatmulStaysCloseToTheFloatProductOfTheDecodedWeights) {
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  for (DType dtype : integer_dtypes()) {
    std::mt19937 rng(70 + static_cast<unsigned>(dtype));
    const std::size_t rows = 37;
    const std::size_t cols = 1024;
    const std::size_t tokens = 6;
    const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView w{dtype, bytes.data(), rows, cols};
    const auto x = random_floats(rng, tokens * cols);
    std::vector<float> expected(rows * tokens);
    ref::matmul(w, x.data(), tokens, expected.data());
    for (std::size_t n : {std::size_t{1}, tokens}) {
      std::vector<float> actual(rows * n);
      avx2->matmul(w, x.data(), n, actual.data(), nullptr);
      // 8-bit activations of uniform inputs: about (1 / 127)^2 / 3 relative error per element,
      // averaged down over the row; measured 1e-5 .. 6e-5.
      EXPECT_TRUE(
          outputs_match(std::string(eredu::to_string(dtype)) + " " + std::to_string(n) + " tokens",
                        actual.data(), expected.data(), actual.size(), 3e-4));
    }
  }
}

}  // namespace
