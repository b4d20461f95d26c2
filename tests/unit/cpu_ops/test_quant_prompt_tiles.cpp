// The prompt tiles for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL (AVX2 and AVX-512; more than 16
// tokens) against their definition, computed here from the decoded blocks: per (row, token), block
// after block, the exact integer dot S of the block's codes with the activation's 8-bit codes, then
// acc = fma(d_w * d_x, float(S), acc), and for Q4_1 / Q5_1 acc = fma(m_w, s_x, acc) with s_x the
// activation block's scaled sum at F16 precision. On activations that quantize exactly (k / 64 per
// element, each block holding +-127, so d_x = 1/64 and the codes are k) every element must match
// bit for bit: rows around the 16-row groups and the 32-row work items, token counts around the
// 8-token tiles and past one 96-token chunk, on 1 and 3 threads. Short batches keep the one-token
// values (test_avx512_matmul.cpp compares them with the AVX2 table, test_tiled_matmul.cpp with the
// one-token path).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::MatrixView;
using eredu::cpu::ThreadPool;
using namespace eredu::testing::op_parity;
namespace enc = eredu::encoding;

// Activations k / 64, k in [-127, 127], each block of 32 holding 127 once: the 8-bit codes are k.
std::vector<int> grid_codes(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> k_dist(-127, 127);
  std::vector<int> k(n);
  for (std::size_t i = 0; i < n; ++i)
    k[i] = i % 32 == 0 ? 127 : k_dist(rng);
  return k;
}

// The codes, scale and minimum (0 for the symmetric encodings) of block b of a packed row.
void block_codes(DType dtype, const std::byte* row, std::size_t b, int* codes, float* d, float* m) {
  *m = 0.0F;
  if (dtype == DType::kQ4_1) {
    const auto& blk = reinterpret_cast<const enc::BlockQ4_1*>(row)[b];
    for (int i = 0; i < 16; ++i) {
      codes[i] = blk.qs[i] & 0x0F;
      codes[i + 16] = blk.qs[i] >> 4;
    }
    *d = enc::fp16_to_fp32(blk.d);
    *m = enc::fp16_to_fp32(blk.m);
  } else if (dtype == DType::kQ5_1) {
    const auto& blk = reinterpret_cast<const enc::BlockQ5_1*>(row)[b];
    std::uint32_t high = 0;
    std::memcpy(&high, blk.qh, 4);
    for (int i = 0; i < 16; ++i) {
      codes[i] = (blk.qs[i] & 0x0F) | static_cast<int>(((high >> i) & 1U) << 4);
      codes[i + 16] = (blk.qs[i] >> 4) | static_cast<int>(((high >> (i + 16)) & 1U) << 4);
    }
    *d = enc::fp16_to_fp32(blk.d);
    *m = enc::fp16_to_fp32(blk.m);
  } else if (dtype == DType::kIQ4_NL) {
    const auto& blk = reinterpret_cast<const enc::BlockIQ4_NL*>(row)[b];
    for (int i = 0; i < 16; ++i) {
      codes[i] = enc::kIQ4NLValues[blk.qs[i] & 0x0F];
      codes[i + 16] = enc::kIQ4NLValues[blk.qs[i] >> 4];
    }
    *d = enc::fp16_to_fp32(blk.d);
  } else if (dtype == DType::kQ4_0) {
    const auto& blk = reinterpret_cast<const enc::BlockQ4_0*>(row)[b];
    for (int i = 0; i < 16; ++i) {
      codes[i] = (blk.qs[i] & 0x0F) - 8;
      codes[i + 16] = (blk.qs[i] >> 4) - 8;
    }
    *d = enc::fp16_to_fp32(blk.d);
  } else if (dtype == DType::kQ5_0) {
    const auto& blk = reinterpret_cast<const enc::BlockQ5_0*>(row)[b];
    std::uint32_t high = 0;
    std::memcpy(&high, blk.qh, 4);
    for (int i = 0; i < 16; ++i) {
      codes[i] = ((blk.qs[i] & 0x0F) | static_cast<int>(((high >> i) & 1U) << 4)) - 16;
      codes[i + 16] = ((blk.qs[i] >> 4) | static_cast<int>(((high >> (i + 16)) & 1U) << 4)) - 16;
    }
    *d = enc::fp16_to_fp32(blk.d);
  } else {
    const auto& blk = reinterpret_cast<const enc::BlockQ8_0*>(row)[b];
    for (int i = 0; i < 32; ++i)
      codes[i] = blk.qs[i];
    *d = enc::fp16_to_fp32(blk.d);
  }
}

struct Shape {
  std::size_t rows;
  std::size_t tokens;
  std::size_t blocks;
};

// Every element of the table's product of w (packed `bytes`) with the activations k / 64 equals
// the definition, on 1 and 3 threads.
void expect_definition(const eredu::cpu::KernelTable& table, Isa isa, DType dtype, const Shape& s,
                       const std::vector<std::byte>& bytes, const std::vector<int>& k,
                       ThreadPool& three) {
  const std::size_t cols = 32 * s.blocks;
  const MatrixView w{dtype, bytes.data(), s.rows, cols};
  const std::size_t row_bytes = eredu::cpu::packed_row_bytes(dtype, cols);
  std::vector<float> x(k.size());
  for (std::size_t i = 0; i < k.size(); ++i)
    x[i] = static_cast<float>(k[i]) / 64.0F;

  std::vector<float> expected(s.tokens * s.rows);
  const float xd = 1.0F / 64.0F;
  for (std::size_t r = 0; r < s.rows; ++r) {
    const std::byte* row = bytes.data() + r * row_bytes;
    for (std::size_t t = 0; t < s.tokens; ++t) {
      float acc = 0.0F;
      for (std::size_t b = 0; b < s.blocks; ++b) {
        int codes[32];
        float wd = 0.0F;
        float wm = 0.0F;
        block_codes(dtype, row, b, codes, &wd, &wm);
        int sum = 0;
        int k_sum = 0;
        for (int i = 0; i < 32; ++i) {
          sum += codes[i] * k[t * cols + 32 * b + i];
          k_sum += k[t * cols + 32 * b + i];
        }
        acc = std::fma(wd * xd, static_cast<float>(sum), acc);
        if (dtype == DType::kQ4_1 || dtype == DType::kQ5_1) {
          // The activation block's scaled sum, kept at F16 precision as ggml's q8_1 keeps it.
          const float xs = enc::fp16_to_fp32(enc::fp32_to_fp16(xd * static_cast<float>(k_sum)));
          acc = std::fma(wm, xs, acc);
        }
      }
      expected[t * s.rows + r] = acc;
    }
  }

  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
    std::vector<float> actual(expected.size(), -2.0F);
    table.matmul(w, x.data(), s.tokens, actual.data(), pool);
    std::size_t differ = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < actual.size(); ++i) {
      if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0 && differ++ == 0) first = i;
    }
    EXPECT_EQ(differ, 0U) << eredu::cpu::isa_name(isa) << " " << eredu::to_string(dtype) << " "
                          << s.rows << " rows x " << s.tokens << " tokens x " << cols << " cols, "
                          << (pool == nullptr ? 1 : pool->size()) << " threads: first at " << first
                          << ": " << actual[first] << " vs " << expected[first];
  }
}

// The encodings with a prompt tile on both tables.
const std::vector<DType> kPromptTileEncodings = {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                                                 DType::kQ5_1, DType::kQ8_0, DType::kIQ4_NL};

class QuantPromptTiles : public ::testing::TestWithParam<Isa> {};

TEST_P(QuantPromptTiles, PromptsEqualTheBlockSumDefinitionBitForBit) {
  const Isa isa = GetParam();
  const auto* table = eredu::cpu::kernels_for(isa);
  if (table == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the " << eredu::cpu::isa_name(isa)
                 << " kernels (they need " << eredu::cpu::isa_requirements(isa) << ")";
  }
  const std::vector<Shape> shapes = {{1, 17, 1},  {15, 24, 2}, {16, 25, 3},  {17, 31, 1},
                                     {33, 40, 2}, {40, 97, 1}, {67, 130, 2}, {5, 19, 5}};
  ThreadPool three(3);
  for (DType dtype : kPromptTileEncodings) {
    for (const Shape& s : shapes) {
      std::mt19937 rng(6100 + static_cast<unsigned>(dtype) * 13 + static_cast<unsigned>(s.rows));
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, 32 * s.blocks);
      expect_definition(*table, isa, dtype, s, bytes, grid_codes(rng, s.tokens * 32 * s.blocks),
                        three);
    }
  }
}

// The largest sums the integer steps can meet: every code at the encoding's largest magnitude (the
// most negative code; Q4_1 / Q5_1: the largest) against activations of +-127 (the AVX2 tiles add
// int16 pair sums of several slices before widening them; one slice too many overflows here and
// nowhere in random data).
TEST_P(QuantPromptTiles, PromptsAreExactAtTheExtremesOfCodesAndActivations) {
  const Isa isa = GetParam();
  const auto* table = eredu::cpu::kernels_for(isa);
  if (table == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the " << eredu::cpu::isa_name(isa)
                 << " kernels (they need " << eredu::cpu::isa_requirements(isa) << ")";
  }
  const Shape s{19, 20, 3};
  ThreadPool three(3);
  for (DType dtype : kPromptTileEncodings) {
    std::mt19937 rng(6200 + static_cast<unsigned>(dtype));
    auto bytes = random_packed_matrix(rng, dtype, s.rows, 32 * s.blocks);
    const std::size_t row_bytes = eredu::cpu::packed_row_bytes(dtype, 32 * s.blocks);
    for (std::size_t r = 0; r < s.rows; ++r) {
      for (std::size_t b = 0; b < s.blocks; ++b) {
        std::byte* row = bytes.data() + r * row_bytes;
        if (dtype == DType::kQ4_0) {  // nibbles 0: -8
          std::memset(reinterpret_cast<enc::BlockQ4_0*>(row)[b].qs, 0, 16);
        } else if (dtype == DType::kQ5_0) {  // nibbles 0, fifth bits clear: -16
          auto& blk = reinterpret_cast<enc::BlockQ5_0*>(row)[b];
          std::memset(blk.qs, 0, 16);
          std::memset(blk.qh, 0, 4);
        } else if (dtype == DType::kIQ4_NL) {  // nibbles 0: -127
          std::memset(reinterpret_cast<enc::BlockIQ4_NL*>(row)[b].qs, 0, 16);
        } else if (dtype == DType::kQ4_1) {  // nibbles 15
          std::memset(reinterpret_cast<enc::BlockQ4_1*>(row)[b].qs, 0xFF, 16);
        } else if (dtype == DType::kQ5_1) {  // nibbles 15, fifth bits set: 31
          auto& blk = reinterpret_cast<enc::BlockQ5_1*>(row)[b];
          std::memset(blk.qs, 0xFF, 16);
          std::memset(blk.qh, 0xFF, 4);
        } else {
          std::memset(reinterpret_cast<enc::BlockQ8_0*>(row)[b].qs, 0x80, 32);  // -128
        }
      }
    }
    // Even tokens +127 everywhere, odd tokens -127.
    std::vector<int> k(s.tokens * 32 * s.blocks);
    for (std::size_t i = 0; i < k.size(); ++i)
      k[i] = (i / (32 * s.blocks)) % 2 == 0 ? 127 : -127;
    expect_definition(*table, isa, dtype, s, bytes, k, three);
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, QuantPromptTiles,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& p) {
                           return std::string(eredu::cpu::isa_name(p.param));
                         });

}  // namespace
