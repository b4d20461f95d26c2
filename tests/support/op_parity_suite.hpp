#pragma once
// The op-parity test suite (see op_parity.hpp). Include this header in exactly ONE .cpp of a test
// executable and plug a backend in with one line:
//
//   struct MyBackendOps { static eredu::testing::op_parity::OpTable make(); };
//   EREDU_OP_PARITY_BACKEND(MyBackend, MyBackendOps);
//
// make() returns the backend's OpTable; set `unavailable` to a reason (no device, missing CPU
// feature) to skip the whole suite with that message. Every op is compared with the scalar CPU
// reference on a fixed set of random shapes (seeded, so failures reproduce), odd sizes included.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "op_parity.hpp"

namespace eredu::testing::op_parity {

template <typename Backend>
class OpParity : public ::testing::Test {
 protected:
  void SetUp() override {
    candidate_ = Backend::make();
    if (!candidate_.unavailable.empty()) {
      GTEST_SKIP() << candidate_.name << " unavailable: " << candidate_.unavailable;
    }
  }

  // One matmul comparison on a [rows, cols] matrix of `dtype` and n_tokens activations.
  void check_matmul(DType dtype, std::size_t rows, std::size_t cols, std::size_t n_tokens,
                    unsigned seed) {
    if (!candidate_.matmul) GTEST_SKIP() << candidate_.name << ": matmul unsupported";
    std::mt19937 rng(seed);
    const std::vector<std::byte> w_bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView w{dtype, w_bytes.data(), rows, cols};
    const std::vector<float> x = random_floats(rng, n_tokens * cols);
    GuardedBuffer expected(n_tokens * rows);
    GuardedBuffer actual(n_tokens * rows);
    ASSERT_EQ(reference_.matmul(w, x.data(), n_tokens, expected.data()).status, OpStatus::kOk);
    EREDU_OP_PARITY_RUN(candidate_.name, candidate_.matmul(w, x.data(), n_tokens, actual.data()));
    const std::string what = candidate_.name + " matmul " + std::string(to_string(dtype)) + " [" +
                             std::to_string(rows) + "x" + std::to_string(cols) + "] x " +
                             std::to_string(n_tokens) + " tokens";
    EXPECT_TRUE(actual.guards_intact()) << what;
    if (dtype_info(dtype).block_elements == 1) {
      EXPECT_TRUE(outputs_match(what, actual.data(), expected.data(), actual.size(),
                                matmul_threshold(candidate_.thresholds, dtype)));
      return;
    }
    // Block-quantized weights: judged against the magnitude of each output's terms (the
    // reference's exact decoding of the rows, times |x|), see outputs_match_terms.
    std::vector<float> row(cols);
    std::vector<double> magnitude(n_tokens * rows);
    for (std::size_t r = 0; r < rows; ++r) {
      ASSERT_EQ(reference_.get_row(w, r, row.data()).status, OpStatus::kOk);
      for (std::size_t t = 0; t < n_tokens; ++t) {
        double m = 0.0;
        for (std::size_t i = 0; i < cols; ++i)
          m += std::fabs(static_cast<double>(row[i]) * static_cast<double>(x[t * cols + i]));
        magnitude[t * rows + r] = m;
      }
    }
    EXPECT_TRUE(outputs_match_terms(what, actual.data(), expected.data(), magnitude,
                                    candidate_.thresholds.matmul_quantized_terms));
  }

  void check_matmul_sweep(DType dtype) {
    const std::size_t block =
        dtype_info(dtype).block_elements == 1 ? 32 : dtype_info(dtype).block_elements;
    // (rows, blocks per row, tokens): odd n_out, single blocks, token counts around the tile size.
    const std::size_t shapes[][3] = {{1, 1, 1},  {3, 2, 1},   {17, 3, 2}, {31, 1, 5},
                                     {8, 5, 16}, {13, 2, 17}, {5, 3, 33}, {64, 2, 3}};
    unsigned seed = 1000 + static_cast<unsigned>(dtype);
    for (const auto& s : shapes) {
      check_matmul(dtype, s[0], s[1] * block, s[2], seed++);
      if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
    }
    if (dtype_info(dtype).block_elements == 1) {
      check_matmul(dtype, 7, 45, 3, seed++);  // plain floats need no block multiple
    }
  }

  void check_get_row(DType dtype) {
    if (!candidate_.get_row) GTEST_SKIP() << candidate_.name << ": get_row unsupported";
    std::mt19937 rng(77 + static_cast<unsigned>(dtype));
    const std::size_t block =
        dtype_info(dtype).block_elements == 1 ? 32 : dtype_info(dtype).block_elements;
    const std::size_t rows = 9;
    const std::size_t cols = 3 * block;
    const std::vector<std::byte> bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView table{dtype, bytes.data(), rows, cols};
    for (std::size_t row : {std::size_t{0}, std::size_t{4}, rows - 1}) {
      GuardedBuffer expected(cols);
      GuardedBuffer actual(cols);
      ASSERT_EQ(reference_.get_row(table, row, expected.data()).status, OpStatus::kOk);
      EREDU_OP_PARITY_RUN(candidate_.name, candidate_.get_row(table, row, actual.data()));
      const std::string what = candidate_.name + " get_row " + std::string(to_string(dtype)) +
                               " row " + std::to_string(row);
      EXPECT_TRUE(actual.guards_intact()) << what;
      EXPECT_TRUE(
          outputs_match(what, actual.data(), expected.data(), cols, candidate_.thresholds.get_row));
    }
  }

  void check_attention(DType kv_dtype) {
    if (!candidate_.attention) GTEST_SKIP() << candidate_.name << ": attention unsupported";
    struct Shape {
      std::size_t n_head, n_head_kv, head_dim, n_tokens, start;
    };
    const Shape shapes[] = {{1, 1, 4, 1, 0},  {2, 2, 16, 1, 7},  {6, 2, 17, 3, 0},
                            {4, 1, 64, 5, 9}, {8, 8, 8, 17, 40}, {3, 3, 32, 2, 100}};
    unsigned seed = 500 + static_cast<unsigned>(kv_dtype);
    for (const Shape& s : shapes) {
      std::mt19937 rng(seed++);
      const std::size_t n_kv = s.start + s.n_tokens;
      const std::vector<float> q = random_floats(rng, s.n_tokens * s.n_head * s.head_dim);
      const std::vector<float> k = random_floats(rng, n_kv * s.n_head_kv * s.head_dim);
      const std::vector<float> v = random_floats(rng, n_kv * s.n_head_kv * s.head_dim);
      std::vector<std::uint16_t> k16(k.size());
      std::vector<std::uint16_t> v16(v.size());
      for (std::size_t i = 0; i < k.size(); ++i) {
        k16[i] = encoding::fp32_to_fp16(k[i]);
        v16[i] = encoding::fp32_to_fp16(v[i]);
      }
      std::vector<std::int32_t> positions(s.n_tokens);
      for (std::size_t t = 0; t < s.n_tokens; ++t) {
        positions[t] = static_cast<std::int32_t>(s.start + t);
      }
      const bool f16 = kv_dtype == DType::kF16;
      AttentionArgs args;
      args.q = q.data();
      args.k = f16 ? static_cast<const void*>(k16.data()) : k.data();
      args.v = f16 ? static_cast<const void*>(v16.data()) : v.data();
      args.kv_dtype = kv_dtype;
      args.positions = positions.data();
      args.n_tokens = s.n_tokens;
      args.n_head = s.n_head;
      args.n_head_kv = s.n_head_kv;
      args.head_dim = s.head_dim;
      args.n_kv = n_kv;
      args.scale = 1.0F / std::sqrt(static_cast<float>(s.head_dim));
      GuardedBuffer expected(s.n_tokens * s.n_head * s.head_dim);
      GuardedBuffer actual(expected.size());
      args.out = expected.data();
      ASSERT_EQ(reference_.attention(args).status, OpStatus::kOk);
      args.out = actual.data();
      EREDU_OP_PARITY_RUN(candidate_.name, candidate_.attention(args));
      const std::string what = candidate_.name + " attention " + std::string(to_string(kv_dtype)) +
                               " heads " + std::to_string(s.n_head) + "/" +
                               std::to_string(s.n_head_kv) + " dim " + std::to_string(s.head_dim) +
                               " tokens " + std::to_string(s.n_tokens) + " from " +
                               std::to_string(s.start);
      EXPECT_TRUE(actual.guards_intact()) << what;
      EXPECT_TRUE(outputs_match(what, actual.data(), expected.data(), actual.size(),
                                candidate_.thresholds.attention));
    }
  }

  void check_rope(cpu::RopeMode mode) {
    if (!candidate_.rope) GTEST_SKIP() << candidate_.name << ": rope unsupported";
    struct Shape {
      std::size_t n_tokens, n_heads, head_dim, n_rot;
      float base, scale;
    };
    const Shape shapes[] = {{1, 1, 8, 8, 10000.0F, 1.0F},
                            {3, 2, 64, 64, 10000.0F, 1.0F},
                            {5, 3, 12, 6, 500000.0F, 1.0F},
                            {2, 4, 16, 8, 10000.0F, 0.25F},
                            {17, 1, 128, 128, 1e6F, 1.0F}};
    unsigned seed = 300 + static_cast<unsigned>(mode);
    // Free positions (a kernel's contract), and a run of consecutive ones from a random start (the
    // positions a forward pass rotates).
    for (const bool consecutive : {false, true}) {
      for (const Shape& s : shapes) {
        std::mt19937 rng(seed++);
        const std::vector<float> x = random_floats(rng, s.n_tokens * s.n_heads * s.head_dim);
        std::uniform_int_distribution<std::int32_t> pos_dist(0, 1000);
        std::vector<std::int32_t> positions(s.n_tokens);
        for (std::int32_t& p : positions)
          p = pos_dist(rng);
        positions[0] = consecutive ? positions[0] : 0;
        for (std::size_t t = 1; consecutive && t < s.n_tokens; ++t)
          positions[t] = positions[t - 1] + 1;
        const RopeParams params{s.n_rot, s.base, s.scale, mode};
        GuardedBuffer expected(x.size());
        GuardedBuffer actual(x.size());
        expected.assign(x);
        actual.assign(x);
        ASSERT_EQ(
            reference_
                .rope(expected.data(), s.n_tokens, s.n_heads, s.head_dim, positions.data(), params)
                .status,
            OpStatus::kOk);
        EREDU_OP_PARITY_RUN(candidate_.name, candidate_.rope(actual.data(), s.n_tokens, s.n_heads,
                                                             s.head_dim, positions.data(), params));
        const std::string what = candidate_.name + " rope dim " + std::to_string(s.head_dim) +
                                 " n_rot " + std::to_string(s.n_rot) +
                                 (consecutive ? " consecutive from " : " free from ") +
                                 std::to_string(positions[0]);
        EXPECT_TRUE(actual.guards_intact()) << what;
        EXPECT_TRUE(outputs_match(what, actual.data(), expected.data(), x.size(),
                                  candidate_.thresholds.rope));
      }
    }
  }

  OpTable candidate_;
  OpTable reference_ = reference_table();
};

TYPED_TEST_SUITE_P(OpParity);

#define EREDU_OP_PARITY_DTYPE_TESTS_(D)                \
  TYPED_TEST_P(OpParity, MatmulMatchesReference_##D) { \
    this->check_matmul_sweep(::eredu::DType::k##D);    \
  }                                                    \
  TYPED_TEST_P(OpParity, GetRowMatchesReference_##D) { \
    this->check_get_row(::eredu::DType::k##D);         \
  }

EREDU_OP_PARITY_DTYPE_TESTS_(F32)
EREDU_OP_PARITY_DTYPE_TESTS_(F16)
EREDU_OP_PARITY_DTYPE_TESTS_(BF16)
EREDU_OP_PARITY_DTYPE_TESTS_(Q8_0)
EREDU_OP_PARITY_DTYPE_TESTS_(Q4_0)
EREDU_OP_PARITY_DTYPE_TESTS_(Q4_1)
EREDU_OP_PARITY_DTYPE_TESTS_(Q5_0)
EREDU_OP_PARITY_DTYPE_TESTS_(Q5_1)
EREDU_OP_PARITY_DTYPE_TESTS_(Q2_K)
EREDU_OP_PARITY_DTYPE_TESTS_(Q3_K)
EREDU_OP_PARITY_DTYPE_TESTS_(Q4_K)
EREDU_OP_PARITY_DTYPE_TESTS_(Q5_K)
EREDU_OP_PARITY_DTYPE_TESTS_(Q6_K)
EREDU_OP_PARITY_DTYPE_TESTS_(IQ4_NL)
EREDU_OP_PARITY_DTYPE_TESTS_(IQ4_XS)

TYPED_TEST_P(OpParity, AttentionMatchesReference_F32Cache) {
  this->check_attention(::eredu::DType::kF32);
}
TYPED_TEST_P(OpParity, AttentionMatchesReference_F16Cache) {
  this->check_attention(::eredu::DType::kF16);
}
TYPED_TEST_P(OpParity, RopeNormalMatchesReference) {
  this->check_rope(cpu::RopeMode::kNormal);
}
TYPED_TEST_P(OpParity, RopeNeoxMatchesReference) {
  this->check_rope(cpu::RopeMode::kNeox);
}

TYPED_TEST_P(OpParity, RmsNormMatchesReference) {
  auto& c = this->candidate_;
  if (!c.rms_norm) GTEST_SKIP() << c.name << ": rms_norm unsupported";
  const std::size_t shapes[][2] = {{1, 1}, {3, 7}, {2, 64}, {5, 4097}, {1, 288}};
  unsigned seed = 40;
  for (const auto& s : shapes) {
    for (bool with_weight : {true, false}) {
      std::mt19937 rng(seed++);
      const std::vector<float> x = random_floats(rng, s[0] * s[1], -3.0F, 3.0F);
      const std::vector<float> w = random_floats(rng, s[1]);
      GuardedBuffer expected(x.size());
      GuardedBuffer actual(x.size());
      const float* wp = with_weight ? w.data() : nullptr;
      ASSERT_EQ(this->reference_.rms_norm(x.data(), wp, s[0], s[1], 1e-5F, expected.data()).status,
                OpStatus::kOk);
      EREDU_OP_PARITY_RUN(c.name, c.rms_norm(x.data(), wp, s[0], s[1], 1e-5F, actual.data()));
      const std::string what = c.name + " rms_norm " + std::to_string(s[0]) + "x" +
                               std::to_string(s[1]) + (with_weight ? " weighted" : "");
      EXPECT_TRUE(actual.guards_intact()) << what;
      EXPECT_TRUE(
          outputs_match(what, actual.data(), expected.data(), x.size(), c.thresholds.rms_norm));
    }
  }
}

TYPED_TEST_P(OpParity, SwigluAndAddMatchReference) {
  auto& c = this->candidate_;
  if (!c.swiglu || !c.add) GTEST_SKIP() << c.name << ": swiglu/add unsupported";
  unsigned seed = 60;
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{4103}, std::size_t{10000}}) {
    std::mt19937 rng(seed++);
    const std::vector<float> a = random_floats(rng, n, -6.0F, 6.0F);
    const std::vector<float> b = random_floats(rng, n, -2.0F, 2.0F);
    GuardedBuffer expected(n);
    GuardedBuffer actual(n);
    ASSERT_EQ(this->reference_.swiglu(a.data(), b.data(), n, expected.data()).status,
              OpStatus::kOk);
    EREDU_OP_PARITY_RUN(c.name, c.swiglu(a.data(), b.data(), n, actual.data()));
    EXPECT_TRUE(actual.guards_intact());
    EXPECT_TRUE(outputs_match(c.name + " swiglu n " + std::to_string(n), actual.data(),
                              expected.data(), n, c.thresholds.elementwise));
    GuardedBuffer expected_sum(n);
    GuardedBuffer actual_sum(n);
    ASSERT_EQ(this->reference_.add(a.data(), b.data(), n, expected_sum.data()).status,
              OpStatus::kOk);
    EREDU_OP_PARITY_RUN(c.name, c.add(a.data(), b.data(), n, actual_sum.data()));
    EXPECT_TRUE(actual_sum.guards_intact());
    EXPECT_TRUE(outputs_match(c.name + " add n " + std::to_string(n), actual_sum.data(),
                              expected_sum.data(), n, c.thresholds.elementwise));
  }
}

TYPED_TEST_P(OpParity, SoftmaxMatchesReference) {
  auto& c = this->candidate_;
  if (!c.softmax) GTEST_SKIP() << c.name << ": softmax unsupported";
  unsigned seed = 80;
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{32000}}) {
    std::mt19937 rng(seed++);
    const std::vector<float> x = random_floats(rng, n, -10.0F, 10.0F);
    GuardedBuffer expected(n);
    GuardedBuffer actual(n);
    expected.assign(x);
    actual.assign(x);
    ASSERT_EQ(this->reference_.softmax(expected.data(), n).status, OpStatus::kOk);
    EREDU_OP_PARITY_RUN(c.name, c.softmax(actual.data(), n));
    EXPECT_TRUE(actual.guards_intact());
    EXPECT_TRUE(outputs_match(c.name + " softmax n " + std::to_string(n), actual.data(),
                              expected.data(), n, c.thresholds.elementwise));
  }
}

TYPED_TEST_P(OpParity, EmbeddingOfATokenSequenceMatchesReference) {
  auto& c = this->candidate_;
  if (!c.embedding) GTEST_SKIP() << c.name << ": embedding unsupported (an operator-level check)";
  const std::vector<std::uint32_t> tokens = {2, 0, 8, 2, 5};  // repeats and both ends
  for (DType dtype : matmul_dtypes()) {
    std::mt19937 rng(90 + static_cast<unsigned>(dtype));
    const std::size_t block =
        dtype_info(dtype).block_elements == 1 ? 32 : dtype_info(dtype).block_elements;
    const std::size_t rows = 9;
    const std::size_t cols = 2 * block;
    const std::vector<std::byte> bytes = random_packed_matrix(rng, dtype, rows, cols);
    const MatrixView table{dtype, bytes.data(), rows, cols};
    GuardedBuffer expected(tokens.size() * cols);
    GuardedBuffer actual(expected.size());
    ASSERT_EQ(
        this->reference_.embedding(table, tokens.data(), tokens.size(), expected.data()).status,
        OpStatus::kOk);
    EREDU_OP_PARITY_RUN(c.name, c.embedding(table, tokens.data(), tokens.size(), actual.data()));
    const std::string what = c.name + " embedding " + std::string(to_string(dtype));
    EXPECT_TRUE(actual.guards_intact()) << what;
    EXPECT_TRUE(
        outputs_match(what, actual.data(), expected.data(), actual.size(), c.thresholds.get_row));
  }
}

TYPED_TEST_P(OpParity, LogitsOfTheLastRowMatchReference) {
  auto& c = this->candidate_;
  if (!c.logits) GTEST_SKIP() << c.name << ": logits unsupported (an operator-level check)";
  unsigned seed = 95;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
    for (std::size_t n_rows : {std::size_t{1}, std::size_t{4}}) {
      std::mt19937 rng(seed++);
      const std::size_t rows = 37;
      const std::size_t cols = 256;
      const std::vector<std::byte> bytes = random_packed_matrix(rng, dtype, rows, cols);
      const MatrixView w{dtype, bytes.data(), rows, cols};
      const std::vector<float> hidden = random_floats(rng, n_rows * cols);
      GuardedBuffer expected(rows);
      GuardedBuffer actual(rows);
      ASSERT_EQ(this->reference_.logits(w, hidden.data(), n_rows, expected.data()).status,
                OpStatus::kOk);
      EREDU_OP_PARITY_RUN(c.name, c.logits(w, hidden.data(), n_rows, actual.data()));
      const std::string what = c.name + " logits " + std::string(to_string(dtype)) + " of " +
                               std::to_string(n_rows) + " rows";
      EXPECT_TRUE(actual.guards_intact()) << what;
      EXPECT_TRUE(outputs_match(what, actual.data(), expected.data(), rows,
                                matmul_threshold(c.thresholds, dtype)));
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(
    OpParity, MatmulMatchesReference_F32, GetRowMatchesReference_F32, MatmulMatchesReference_F16,
    GetRowMatchesReference_F16, MatmulMatchesReference_BF16, GetRowMatchesReference_BF16,
    MatmulMatchesReference_Q8_0, GetRowMatchesReference_Q8_0, MatmulMatchesReference_Q4_0,
    GetRowMatchesReference_Q4_0, MatmulMatchesReference_Q4_1, GetRowMatchesReference_Q4_1,
    MatmulMatchesReference_Q5_0, GetRowMatchesReference_Q5_0, MatmulMatchesReference_Q5_1,
    GetRowMatchesReference_Q5_1, MatmulMatchesReference_Q2_K, GetRowMatchesReference_Q2_K,
    MatmulMatchesReference_Q3_K, GetRowMatchesReference_Q3_K, MatmulMatchesReference_Q4_K,
    GetRowMatchesReference_Q4_K, MatmulMatchesReference_Q5_K, GetRowMatchesReference_Q5_K,
    MatmulMatchesReference_Q6_K, GetRowMatchesReference_Q6_K, MatmulMatchesReference_IQ4_NL,
    GetRowMatchesReference_IQ4_NL, MatmulMatchesReference_IQ4_XS, GetRowMatchesReference_IQ4_XS,
    AttentionMatchesReference_F32Cache, AttentionMatchesReference_F16Cache,
    RopeNormalMatchesReference, RopeNeoxMatchesReference, RmsNormMatchesReference,
    SwigluAndAddMatchReference, SoftmaxMatchesReference, EmbeddingOfATokenSequenceMatchesReference,
    LogitsOfTheLastRowMatchReference);

}  // namespace eredu::testing::op_parity

// The one line a backend adds to join the suite.
// Use at global scope; BackendOps must be visible from there.
#define EREDU_OP_PARITY_BACKEND(Name, BackendOps)                               \
  namespace eredu::testing::op_parity {                                         \
  INSTANTIATE_TYPED_TEST_SUITE_P(Name, OpParity, ::testing::Types<BackendOps>); \
  }                                                                             \
  static_assert(true, "require a semicolon")
