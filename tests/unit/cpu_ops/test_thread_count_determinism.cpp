// Every dispatched kernel gives bit-identical results on 1, 2, 3 and 7 threads: each output element
// is computed by one thread with a fixed order of operations. The shapes are large enough that
// every kernel really splits its work (kernels run small ops on the calling thread alone, below
// about 2^16 multiply-adds per piece; see kernel_impl.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "cpu_op_table.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::Isa;
using eredu::cpu::ThreadPool;
using namespace eredu::testing::op_parity;

class ThreadCountDeterminism : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    table_ = eredu::cpu::kernels_for(GetParam());
    if (table_ == nullptr)
      GTEST_SKIP() << "this CPU cannot run " << eredu::cpu::isa_name(GetParam());
  }

  // Runs `op(table, pool)` single-threaded and on each pool size; all outputs must be identical.
  template <typename Op>
  void expect_identical(const std::string& what, std::size_t n_out, Op op) {
    GuardedBuffer single(n_out);
    op(single.data(), nullptr);
    ASSERT_TRUE(single.guards_intact()) << what;
    for (std::size_t threads : {1, 2, 3, 7}) {
      ThreadPool pool(threads);
      GuardedBuffer threaded(n_out);
      op(threaded.data(), &pool);
      EXPECT_TRUE(threaded.guards_intact()) << what << " threads " << threads;
      EXPECT_TRUE(outputs_match(what + " on " + std::to_string(threads) + " threads",
                                threaded.data(), single.data(), n_out, 0.0));
    }
  }

  const eredu::cpu::KernelTable* table_ = nullptr;
};

TEST_P(ThreadCountDeterminism, MatmulIsBitIdenticalForEveryEncoding) {
  for (DType dtype : matmul_dtypes()) {
    std::mt19937 rng(11 + static_cast<unsigned>(dtype));
    const std::size_t block = std::max<std::size_t>(32, eredu::dtype_info(dtype).block_elements);
    const std::size_t rows = 131;
    const std::size_t cols = 2 * block;
    const std::size_t tokens = 19;  // spans several token tiles
    const auto bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView w{dtype, bytes.data(), rows, cols};
    const auto x = random_floats(rng, tokens * cols);
    expect_identical(
        "matmul " + std::string(eredu::to_string(dtype)), rows * tokens,
        [&](float* y, ThreadPool* pool) { table_->matmul(w, x.data(), tokens, y, pool); });
  }
}

TEST_P(ThreadCountDeterminism, AttentionIsBitIdenticalForBothCacheTypes) {
  // 7 tokens: the one-row path; 40 tokens of head size 64: a prompt (blocks of query rows where
  // the table has them).
  for (std::size_t n_tokens : {7, 40}) {
    for (DType kv : {DType::kF32, DType::kF16}) {
      std::mt19937 rng(5);
      const std::size_t n_head = 6, n_head_kv = 2, n_kv = 600;
      const std::size_t head_dim = n_tokens == 7 ? 24 : 64;
      const auto q = random_floats(rng, n_tokens * n_head * head_dim);
      const auto k = random_floats(rng, n_kv * n_head_kv * head_dim);
      const auto v = random_floats(rng, n_kv * n_head_kv * head_dim);
      std::vector<std::uint16_t> k16(k.size()), v16(v.size());
      for (std::size_t i = 0; i < k.size(); ++i) {
        k16[i] = eredu::encoding::fp32_to_fp16(k[i]);
        v16[i] = eredu::encoding::fp32_to_fp16(v[i]);
      }
      std::vector<std::int32_t> pos(n_tokens);
      for (std::size_t t = 0; t < n_tokens; ++t)
        pos[t] = static_cast<std::int32_t>(n_kv - n_tokens + t);
      AttentionArgs a;
      a.q = q.data();
      a.k = kv == DType::kF16 ? static_cast<const void*>(k16.data()) : k.data();
      a.v = kv == DType::kF16 ? static_cast<const void*>(v16.data()) : v.data();
      a.kv_dtype = kv;
      a.positions = pos.data();
      a.n_tokens = n_tokens;
      a.n_head = n_head;
      a.n_head_kv = n_head_kv;
      a.head_dim = head_dim;
      a.n_kv = n_kv;
      a.scale = 1.0F / std::sqrt(static_cast<float>(head_dim));
      expect_identical("attention", n_tokens * n_head * head_dim,
                       [&](float* out, ThreadPool* pool) {
                         AttentionArgs args = a;
                         args.out = out;
                         table_->attention(args, pool);
                       });
    }
  }
}

TEST_P(ThreadCountDeterminism, NormRopeSwigluAndAddAreBitIdentical) {
  std::mt19937 rng(9);
  const std::size_t rows = 13, n = 4099;
  const auto x = random_floats(rng, rows * n);
  const auto w = random_floats(rng, n);
  expect_identical("rms_norm", rows * n, [&](float* y, ThreadPool* pool) {
    table_->rms_norm(x.data(), w.data(), rows, n, 1e-5F, y, pool);
  });
  expect_identical("swiglu", rows * n, [&](float* y, ThreadPool* pool) {
    table_->swiglu(x.data(), x.data() + n, (rows - 1) * n, y, pool);
    std::fill(y + (rows - 1) * n, y + rows * n, 0.0F);  // the last row has no `up` partner
  });
  expect_identical("add", rows * n, [&](float* y, ThreadPool* pool) {
    table_->add(x.data(), x.data() + 1, rows * n - 1, y, pool);
    y[rows * n - 1] = 0.0F;
  });
  const std::size_t tokens = 40, heads = 5, head_dim = 64;
  std::vector<std::int32_t> pos(tokens);
  for (std::size_t t = 0; t < tokens; ++t)
    pos[t] = static_cast<std::int32_t>(3 * t + 1);
  for (auto mode : {eredu::cpu::RopeMode::kNormal, eredu::cpu::RopeMode::kNeox}) {
    expect_identical("rope", tokens * heads * head_dim, [&](float* y, ThreadPool* pool) {
      std::copy(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(tokens * heads * head_dim), y);
      table_->rope(y, tokens, heads, head_dim, pos.data(), {head_dim, 10000.0F, 1.0F, mode}, pool);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ThreadCountDeterminism,
                         ::testing::Values(Isa::kGeneric, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const auto& param_info) {
                           return std::string(eredu::cpu::isa_name(param_info.param));
                         });

}  // namespace
