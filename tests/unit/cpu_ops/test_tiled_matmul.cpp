// The register-blocked prompt-batch matmul (used for more than one token) against independent
// references, on shapes that exercise every edge of its tiles: rows that are not a multiple of the
// row tile or the row block, token counts that are not a multiple of the token tile or span
// several token chunks, a single token, and row lengths with a tail shorter than one vector.
//
//  - Integer encodings: every element equals, bit for bit, the one-token path's value for the
//    same row and token (the tiles perform the same operations in the same order; Q4_0 prompts of
//    more than 16 tokens excepted, test_quant_prompt_tiles.cpp), and on activations already on the
//    8-bit grid the result equals the float64 product to float rounding.
//  - Float-decoded encodings: agree with a float64 dot of the decoded weights and the (rounded)
//    activations to float rounding; batches of up to 16 tokens (a speculative verification) are
//    bit-identical to the one-token path.
//  - Any thread count gives bit-identical output.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
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
  std::size_t blocks;  // row length in units of the encoding's block (at least 32 elements)
};

// Rows: below, at and past the 3-, 4- and 6-row tiles and the row blocks; tokens: 1, the token
// tiles' edges (past the 16 tokens below which float encodings take the one-token path too), and
// past one 96-token chunk; row lengths: a few blocks, and (for the one-token products, which take
// four rows and eight blocks at a time) exactly eight, and past it with odd and even tails.
const std::vector<Shape>& edge_shapes() {
  static const std::vector<Shape> shapes = {
      {1, 2, 1},  {2, 3, 2},  {3, 4, 1},   {5, 5, 3},    {7, 7, 2},   {17, 2, 1},
      {50, 9, 2}, {4, 1, 2},  {67, 97, 1}, {13, 130, 2}, {11, 19, 2}, {8, 23, 3},
      {9, 2, 8},  {6, 3, 19}, {13, 2, 38}, {5, 2, 131},
  };
  return shapes;
}

std::size_t block_of(DType dtype) {
  return std::max<std::size_t>(32, eredu::dtype_info(dtype).block_elements);
}

const eredu::cpu::KernelTable* avx2_or_skip() {
  return eredu::cpu::kernels_for(Isa::kAvx2);
}

// Decoded weights, one row at a time through the scalar reference decoder.
std::vector<float> decoded(const MatrixView& w) {
  std::vector<float> out(w.rows * w.cols);
  const std::size_t row_bytes = eredu::cpu::packed_row_bytes(w.dtype, w.cols);
  for (std::size_t r = 0; r < w.rows; ++r) {
    eredu::cpu::reference::dequantize_row(w.dtype,
                                          static_cast<const std::byte*>(w.data) + r * row_bytes,
                                          out.data() + r * w.cols, w.cols);
  }
  return out;
}

std::vector<double> float64_product(const std::vector<float>& wf, const std::vector<float>& x,
                                    std::size_t rows, std::size_t cols, std::size_t tokens) {
  std::vector<double> y(rows * tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t r = 0; r < rows; ++r) {
      double s = 0.0;
      for (std::size_t i = 0; i < cols; ++i)
        s += static_cast<double>(wf[r * cols + i]) * static_cast<double>(x[t * cols + i]);
      y[t * rows + r] = s;
    }
  }
  return y;
}

// Activations k * 2^-6, k integer in [-127, 127], each block of 32 holding +-127 and summing to
// zero: their 8-bit quantization (and the Q8_1 block sum) is exact.
std::vector<float> grid_activations(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> k_dist(-127, 127);
  std::vector<float> x(n);
  for (std::size_t b = 0; b < n / 32; ++b) {
    for (std::size_t i = 0; i < 16; ++i) {
      const int k = i == 0 ? 127 : k_dist(rng);
      x[32 * b + i] = static_cast<float>(k) / 64.0F;
      x[32 * b + 16 + i] = static_cast<float>(-k) / 64.0F;
    }
  }
  return x;
}

const std::vector<DType> kIntegerEncodings = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1,
                                              DType::kQ5_0, DType::kQ5_1};

TEST(TiledMatmul, IntegerBatchElementsAreBitIdenticalToTheOneTokenPath) {
  const auto* avx2 = avx2_or_skip();
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  std::vector<DType> dtypes = kIntegerEncodings;
  dtypes.push_back(DType::kIQ4_NL);
  for (DType dtype : dtypes) {
    for (const Shape& s : edge_shapes()) {
      // Prompts (more than 16 tokens) take the prompt tiles, which round differently
      // (test_quant_prompt_tiles.cpp), except IQ4_NL's: its one-token value is already the exact
      // block sum and one FMA per block. Shorter batches keep the one-token values.
      if (s.tokens > 16 && dtype != DType::kIQ4_NL) continue;
      std::mt19937 rng(100 + static_cast<unsigned>(dtype) + static_cast<unsigned>(s.rows));
      const std::size_t cols = s.blocks * 32;
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols};
      const auto x = random_floats(rng, s.tokens * cols);
      std::vector<float> batch(s.rows * s.tokens);
      avx2->matmul(w, x.data(), s.tokens, batch.data(), nullptr);
      std::vector<float> one(s.rows);
      for (std::size_t t = 0; t < s.tokens; ++t) {
        avx2->matmul(w, x.data() + t * cols, 1, one.data(), nullptr);
        EXPECT_TRUE(outputs_match(std::string(eredu::to_string(dtype)) + " " +
                                      std::to_string(s.rows) + "x" + std::to_string(s.tokens) +
                                      " token " + std::to_string(t),
                                  batch.data() + t * s.rows, one.data(), s.rows, 0.0));
      }
    }
  }
}

TEST(TiledMatmul, IntegerBatchIsExactOnGridActivationsForEveryTileEdge) {
  const auto* avx2 = avx2_or_skip();
  if (avx2 == nullptr) GTEST_SKIP() << "this CPU lacks AVX2 + FMA + F16C";
  for (DType dtype : kIntegerEncodings) {
    for (const Shape& s : edge_shapes()) {
      std::mt19937 rng(300 + static_cast<unsigned>(dtype) + static_cast<unsigned>(s.tokens));
      const std::size_t cols = s.blocks * 32;
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols};
      const auto x = grid_activations(rng, s.tokens * cols);
      const auto expected64 = float64_product(decoded(w), x, s.rows, cols, s.tokens);
      std::vector<float> expected(expected64.begin(), expected64.end());
      std::vector<float> actual(s.rows * s.tokens);
      avx2->matmul(w, x.data(), s.tokens, actual.data(), nullptr);
      EXPECT_TRUE(outputs_match(std::string(eredu::to_string(dtype)) + " " +
                                    std::to_string(s.rows) + "x" + std::to_string(s.tokens),
                                actual.data(), expected.data(), actual.size(), 1e-11));
    }
  }
}

// Per table with float tiles: the AVX2 tiles (8-lane chains) and the AVX-512 ones (16-lane chains,
// F16 rows read as stored); a table this CPU cannot run is skipped with its requirements.
class FloatTiles : public ::testing::TestWithParam<Isa> {};

TEST_P(FloatTiles, DecodedBatchMatchesAFloat64ProductForEveryTileEdge) {
  const auto* table = eredu::cpu::kernels_for(GetParam());
  if (table == nullptr) {
    GTEST_SKIP() << "this CPU cannot run the " << eredu::cpu::isa_name(GetParam())
                 << " kernels (they need " << eredu::cpu::isa_requirements(GetParam()) << ")";
  }
  // (The K-quants and IQ4 run integer kernels on AVX2 too: test_kquant_dot.cpp.)
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const Shape& s : edge_shapes()) {
      std::mt19937 rng(500 + static_cast<unsigned>(dtype) + static_cast<unsigned>(s.rows));
      // Rows of 37, 69 and 101 elements leave a tail shorter than one vector.
      const std::size_t cols = 32 * s.blocks + 5;
      const auto bytes = random_packed_matrix(rng, dtype, s.rows, cols);
      const MatrixView w{dtype, bytes.data(), s.rows, cols};
      auto x = random_floats(rng, s.tokens * cols);
      std::vector<float> x_seen = x;  // what the AVX2 kernels multiply by (see kernels.hpp)
      for (float& v : x_seen) {
        if (dtype == DType::kF16)
          v = eredu::encoding::fp16_to_fp32(eredu::encoding::fp32_to_fp16(v));
        if (dtype == DType::kBF16)
          v = eredu::encoding::bf16_to_fp32(eredu::encoding::fp32_to_bf16(v));
      }
      const auto expected64 = float64_product(decoded(w), x_seen, s.rows, cols, s.tokens);
      std::vector<float> expected(expected64.begin(), expected64.end());
      std::vector<float> actual(s.rows * s.tokens);
      table->matmul(w, x.data(), s.tokens, actual.data(), nullptr);
      EXPECT_TRUE(outputs_match(std::string(eredu::to_string(dtype)) + " " +
                                    std::to_string(s.rows) + "x" + std::to_string(s.tokens),
                                actual.data(), expected.data(), actual.size(), 1e-11));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, FloatTiles, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& p) {
                           return std::string(isa_name(p.param));
                         });

TEST(TiledMatmul, FloatDecodedBatchesOfUpTo16TokensAreBitIdenticalToTheOneTokenPath) {
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2}) {
    const auto* table = eredu::cpu::kernels_for(isa);
    if (table == nullptr) continue;
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (std::size_t tokens : {2, 3, 4, 5, 7, 9, 16}) {
        std::mt19937 rng(900 + static_cast<unsigned>(dtype) + static_cast<unsigned>(tokens));
        const std::size_t rows = 37;
        // Row lengths with a tail after the 32-wide steps, and one after the 8-wide steps too.
        const std::size_t cols = 64 * 3 + 8 + tokens % 8;
        const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
        const MatrixView w{dtype, bytes.data(), rows, cols};
        const auto x = random_floats(rng, tokens * cols);
        std::vector<float> batch(rows * tokens);
        table->matmul(w, x.data(), tokens, batch.data(), nullptr);
        std::vector<float> one(rows);
        for (std::size_t t = 0; t < tokens; ++t) {
          table->matmul(w, x.data() + t * cols, 1, one.data(), nullptr);
          EXPECT_TRUE(outputs_match(
              std::string(eredu::cpu::isa_name(isa)) + " " + std::string(eredu::to_string(dtype)) +
                  " " + std::to_string(tokens) + " tokens, token " + std::to_string(t),
              batch.data() + t * rows, one.data(), rows, 0.0));
        }
      }
    }
  }
}

TEST(TiledMatmul, BatchesSpanningManyWorkItemsAreBitIdenticalOnAnyThreadCount) {
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2}) {
    const auto* table = eredu::cpu::kernels_for(isa);
    if (table == nullptr) continue;
    for (DType dtype :
         {DType::kF32, DType::kF16, DType::kQ8_0, DType::kQ4_1, DType::kQ5_0, DType::kQ6_K}) {
      std::mt19937 rng(700 + static_cast<unsigned>(dtype));
      // 131 rows: 9 integer row blocks (the last partial); 200 tokens: 3 token chunks.
      const std::size_t rows = 131, tokens = 200, cols = 2 * block_of(dtype);
      const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
      const MatrixView w{dtype, bytes.data(), rows, cols};
      const auto x = random_floats(rng, tokens * cols);
      std::vector<float> single(rows * tokens);
      table->matmul(w, x.data(), tokens, single.data(), nullptr);
      for (std::size_t threads : {2, 3, 7}) {
        ThreadPool pool(threads);
        GuardedBuffer threaded(rows * tokens);
        table->matmul(w, x.data(), tokens, threaded.data(), &pool);
        EXPECT_TRUE(threaded.guards_intact());
        EXPECT_TRUE(outputs_match(std::string(eredu::cpu::isa_name(isa)) + " " +
                                      std::string(eredu::to_string(dtype)) + " on " +
                                      std::to_string(threads) + " threads",
                                  threaded.data(), single.data(), rows * tokens, 0.0));
      }
    }
  }
}

TEST(TiledMatmul, OneTokenProductsAreBitIdenticalOnAnyThreadCount) {
  // The decode path (one token, rows split across threads), above the size below which the
  // kernel keeps the work on the calling thread.
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    const auto* table = eredu::cpu::kernels_for(isa);
    if (table == nullptr) continue;
    for (DType dtype :
         {DType::kF32, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ5_1, DType::kQ4_K}) {
      std::mt19937 rng(900 + static_cast<unsigned>(dtype));
      const std::size_t rows = 600, cols = 8 * block_of(dtype);
      const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
      const MatrixView w{dtype, bytes.data(), rows, cols};
      const auto x = random_floats(rng, cols);
      std::vector<float> single(rows);
      table->matmul(w, x.data(), 1, single.data(), nullptr);
      for (std::size_t threads : {2, 3, 7}) {
        ThreadPool pool(threads);
        GuardedBuffer threaded(rows);
        table->matmul(w, x.data(), 1, threaded.data(), &pool);
        EXPECT_TRUE(threaded.guards_intact());
        EXPECT_TRUE(outputs_match(std::string(eredu::cpu::isa_name(isa)) + " " +
                                      std::string(eredu::to_string(dtype)) + " on " +
                                      std::to_string(threads) + " threads",
                                  threaded.data(), single.data(), rows, 0.0));
      }
    }
  }
}

}  // namespace
