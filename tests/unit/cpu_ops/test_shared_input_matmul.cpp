// KernelTable::matmul_shared_input: several weights that read one token (Q/K/V, gate/up) in one
// pool job over one quantized (or rounded) activation. A weight's values must not depend on the
// weights beside it, on where the job's units cut the rows, or on the thread count: each is the
// value the same table gives that weight alone on one thread, and all of them are near a float64
// product of the reference decoding (the matmul sweep's measure for quantized products).
#include <gtest/gtest.h>

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
                   std::size_t tokens, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::vector<std::byte>> bytes;
    std::vector<MatrixView> views;
    for (const Weight& w : group) {
      bytes.push_back(random_packed_matrix(rng, w.dtype, w.rows, cols));
      views.push_back(MatrixView{w.dtype, bytes.back().data(), w.rows, cols});
    }
    const auto x = random_floats(rng, tokens * cols);

    // Each weight alone on the calling thread, and the float64 product of its decoded rows.
    std::vector<std::vector<float>> alone;
    std::vector<Float64Product> exact;
    for (const MatrixView& w : views) {
      alone.emplace_back(tokens * w.rows);
      table_->matmul(w, x.data(), tokens, alone.back().data(), nullptr);
      exact.push_back(float64_product(w, x.data(), tokens));
    }

    for (std::size_t threads : {0, 1, 2, 3, 7}) {
      std::unique_ptr<ThreadPool> pool;
      if (threads > 0) pool = std::make_unique<ThreadPool>(threads);
      std::vector<GuardedBuffer> outs;
      outs.reserve(views.size());
      std::vector<float*> ys;
      for (const MatrixView& w : views) {
        outs.emplace_back(tokens * w.rows);
        ys.push_back(outs.back().data());
      }
      table_->matmul_shared_input(views, x.data(), tokens, ys, pool.get());
      for (std::size_t i = 0; i < views.size(); ++i) {
        const std::string what = name + ": weight " + std::to_string(i) + " (" +
                                 std::string(eredu::to_string(views[i].dtype)) + ", " +
                                 std::to_string(views[i].rows) + " rows), " +
                                 std::to_string(tokens) + " tokens on " + std::to_string(threads) +
                                 " threads";
        EXPECT_TRUE(outs[i].guards_intact()) << what;
        EXPECT_TRUE(outputs_match(what + " against the weight alone", outs[i].data(),
                                  alone[i].data(), tokens * views[i].rows, 0.0));
        if (views[i].rows > 0) {
          EXPECT_TRUE(outputs_match_terms(what + " against float64", outs[i].data(),
                                          exact[i].values.data(), exact[i].magnitude, 1e-5));
        }
      }
    }
  }

  const eredu::cpu::KernelTable* table_ = nullptr;
};

// One token (decode: one job over one activation), a short batch (the one-token products row by
// row) and a prompt (the tiles, each weight's own grid over one prepared activation).
constexpr std::size_t kTokenCounts[] = {1, 5, 40};

TEST_P(SharedInputMatmul, EachWeightGetsItsValuesAloneWhateverItsGroupAndThreadCount) {
  for (std::size_t tokens : kTokenCounts) {
    // llama-like Q/K/V: one large and two small weights; the byte shares cut inside the first.
    check_group("qkv Q4_0", {{DType::kQ4_0, 384}, {DType::kQ4_0, 96}, {DType::kQ4_0, 96}}, 2048,
                tokens, 1);
    // A Q4_K_M layer's Q/K (Q4_K) and V (Q6_K): one q8_K activation for both encodings.
    check_group("qkv Q4_K_M", {{DType::kQ4_K, 256}, {DType::kQ4_K, 64}, {DType::kQ6_K, 64}}, 1024,
                tokens, 2);
    // gate/up in F16 and BF16: two half-precision forms of the same tokens.
    check_group("gate/up halves", {{DType::kF16, 300}, {DType::kBF16, 300}}, 512, tokens, 3);
    // Row counts that are no multiple of the 4-row grain, an empty weight and one row.
    check_group("ragged",
                {{DType::kQ8_0, 131},
                 {DType::kQ4_0, 0},
                 {DType::kQ5_1, 1},
                 {DType::kF32, 7},
                 {DType::kQ4_0, 130}},
                256, tokens, 4);
  }
}

TEST_P(SharedInputMatmul, AGroupOfEveryEncodingLongerThanOneJobKeepsEachWeightsValues) {
  // Fifteen encodings: for one token more weights than one job takes (8), so the group runs in
  // two; for several, the q8 blocks made for one weight are laid out for another's prompt tiles.
  std::vector<Weight> group;
  std::size_t rows = 37;
  for (DType dtype : matmul_dtypes()) {
    if (!table_->supports_matmul(dtype)) continue;
    group.push_back({dtype, rows});
    rows = rows * 7 % 61 + 5;
  }
  for (std::size_t tokens : kTokenCounts)
    check_group("every encoding", group, 512, tokens, 5);
}

INSTANTIATE_TEST_SUITE_P(Tables, SharedInputMatmul,
                         ::testing::Values(Isa::kGeneric, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const auto& param_info) {
                           return std::string(eredu::cpu::isa_name(param_info.param));
                         });

}  // namespace
