// KernelTable::matmul_shared_input: several weights that read one token (Q/K/V, gate/up) in one
// pool job over one quantized (or rounded) activation. A weight's values must not depend on the
// weights beside it, on where the byte shares cut the rows, or on the thread count: each is the
// value the same table gives that weight alone on one thread, and all of them are near a float64
// product of the reference decoding (the matmul sweep's measure for quantized products).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cpu_op_table.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::ThreadPool;
using namespace eredu::testing::op_parity;

struct Weight {
  DType dtype;
  std::size_t rows;
};

class SharedInputMatmul : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    table_ = eredu::cpu::kernels_for(GetParam());
    if (table_ == nullptr)
      GTEST_SKIP() << "this CPU cannot run " << eredu::cpu::isa_name(GetParam());
  }

  // Runs the group on 1, 2, 3 and 7 threads (and without a pool) and checks every weight.
  void check_group(const std::string& name, const std::vector<Weight>& group, std::size_t cols,
                   unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::vector<std::byte>> bytes;
    std::vector<MatrixView> views;
    for (const Weight& w : group) {
      bytes.push_back(random_packed_matrix(rng, w.dtype, w.rows, cols));
      views.push_back(MatrixView{w.dtype, bytes.back().data(), w.rows, cols});
    }
    const auto x = random_floats(rng, cols);

    // Each weight alone on the calling thread, and the float64 product of its decoded rows.
    std::vector<std::vector<float>> alone, exact;
    std::vector<std::vector<double>> magnitude;
    for (const MatrixView& w : views) {
      alone.emplace_back(w.rows);
      table_->matmul(w, x.data(), 1, alone.back().data(), nullptr);
      std::vector<float> row(cols);
      exact.emplace_back(w.rows);
      magnitude.emplace_back(w.rows);
      for (std::size_t r = 0; r < w.rows; ++r) {
        eredu::cpu::reference::dequantize_row(
            w.dtype,
            static_cast<const std::byte*>(w.data) + r * eredu::cpu::packed_row_bytes(w.dtype, cols),
            row.data(), cols);
        double sum = 0.0, m = 0.0;
        for (std::size_t k = 0; k < cols; ++k) {
          sum += static_cast<double>(row[k]) * x[k];
          m += std::abs(static_cast<double>(row[k]) * x[k]);
        }
        exact.back()[r] = static_cast<float>(sum);
        magnitude.back()[r] = m;
      }
    }

    for (std::size_t threads : {0, 1, 2, 3, 7}) {
      std::unique_ptr<ThreadPool> pool;
      if (threads > 0) pool = std::make_unique<ThreadPool>(threads);
      std::vector<GuardedBuffer> outs;
      outs.reserve(views.size());
      std::vector<float*> ys;
      for (const MatrixView& w : views) {
        outs.emplace_back(w.rows);
        ys.push_back(outs.back().data());
      }
      table_->matmul_shared_input(views, x.data(), 1, ys, pool.get());
      for (std::size_t i = 0; i < views.size(); ++i) {
        const std::string what = name + ": weight " + std::to_string(i) + " (" +
                                 std::string(eredu::to_string(views[i].dtype)) + ", " +
                                 std::to_string(views[i].rows) + " rows) on " +
                                 std::to_string(threads) + " threads";
        EXPECT_TRUE(outs[i].guards_intact()) << what;
        EXPECT_TRUE(outputs_match(what + " against the weight alone", outs[i].data(),
                                  alone[i].data(), views[i].rows, 0.0));
        if (views[i].rows > 0) {
          EXPECT_TRUE(outputs_match_terms(what + " against float64", outs[i].data(),
                                          exact[i].data(), magnitude[i], 1e-5));
        }
      }
    }
  }

  const eredu::cpu::KernelTable* table_ = nullptr;
};

TEST_P(SharedInputMatmul, EachWeightGetsItsValuesAloneWhateverItsGroupAndThreadCount) {
  // llama-like Q/K/V: one large and two small weights; the byte shares cut inside the first.
  check_group("qkv Q4_0", {{DType::kQ4_0, 384}, {DType::kQ4_0, 96}, {DType::kQ4_0, 96}}, 2048, 1);
  // A Q4_K_M layer's Q/K (Q4_K) and V (Q6_K): one q8_K activation for both encodings.
  check_group("qkv Q4_K_M", {{DType::kQ4_K, 256}, {DType::kQ4_K, 64}, {DType::kQ6_K, 64}}, 1024, 2);
  // gate/up in F16 and BF16: two half-precision forms of the same token.
  check_group("gate/up halves", {{DType::kF16, 300}, {DType::kBF16, 300}}, 512, 3);
  // Row counts that are no multiple of the 4-row grain, an empty weight and one row.
  check_group("ragged",
              {{DType::kQ8_0, 131},
               {DType::kQ4_0, 0},
               {DType::kQ5_1, 1},
               {DType::kF32, 7},
               {DType::kQ4_0, 130}},
              256, 4);
}

TEST_P(SharedInputMatmul, AGroupOfEveryEncodingLongerThanOneJobKeepsEachWeightsValues) {
  // Fifteen encodings: more weights than one job takes (8), so the group runs in two.
  std::vector<Weight> group;
  std::size_t rows = 37;
  for (DType dtype : matmul_dtypes()) {
    if (!table_->supports_matmul(dtype)) continue;
    group.push_back({dtype, rows});
    rows = rows * 7 % 61 + 5;
  }
  check_group("every encoding", group, 512, 5);
}

TEST_P(SharedInputMatmul, SeveralTokensGiveEachWeightsMatmul) {
  std::mt19937 rng(6);
  const std::size_t cols = 256, tokens = 5;
  const auto a = random_packed_matrix(rng, DType::kQ4_K, 40, cols);
  const auto b = random_packed_matrix(rng, DType::kQ8_0, 24, cols);
  const MatrixView views[] = {{DType::kQ4_K, a.data(), 40, cols},
                              {DType::kQ8_0, b.data(), 24, cols}};
  const auto x = random_floats(rng, tokens * cols);
  ThreadPool pool(3);
  std::vector<float> ya(tokens * 40), yb(tokens * 24), wa(ya.size()), wb(yb.size());
  float* ys[] = {ya.data(), yb.data()};
  table_->matmul_shared_input(std::span<const MatrixView>(views), x.data(), tokens,
                              std::span<float* const>(ys), &pool);
  table_->matmul(views[0], x.data(), tokens, wa.data(), nullptr);
  table_->matmul(views[1], x.data(), tokens, wb.data(), nullptr);
  EXPECT_TRUE(outputs_match("Q4_K, 5 tokens", ya.data(), wa.data(), ya.size(), 0.0));
  EXPECT_TRUE(outputs_match("Q8_0, 5 tokens", yb.data(), wb.data(), yb.size(), 0.0));
}

INSTANTIATE_TEST_SUITE_P(Tables, SharedInputMatmul,
                         ::testing::Values(Isa::kGeneric, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const auto& param_info) {
                           return std::string(eredu::cpu::isa_name(param_info.param));
                         });

}  // namespace
