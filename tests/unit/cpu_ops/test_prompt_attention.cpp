// Attention on every table with blocks of query rows (AVX2: avx2/attention_block_avx2.cpp;
// AVX-512 and AMX: avx512/attention_block_avx512.cpp) against the float64 reference: prompts (more
// than 16 tokens), decode and short batches, query groups of 1, 3, 8 and 16 heads (a block holds 16
// rows: 16 tokens of one head, or 5 tokens of 3 heads, ...; decode: one token's heads, cut into
// chunks for the threads), and 20 (more than a block: the one-row path), head sizes of one to eight
// 16-lane vectors, both cache types, prompts from an empty cache and after a cached prefix (so both
// the causal mask inside a block and positions every row sees), and scores spread so widely that
// most exponentials underflow. A token's value is the same bit for bit alone (decode), in a short
// batch and in a prompt, on any thread count. The AVX2 blocks give the AVX-512 blocks' values bit
// for bit where both run. Thread counts of whole batches: test_thread_count_determinism.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "op_parity.hpp"

namespace {

using eredu::DType;
using eredu::cpu::AttentionArgs;
using eredu::cpu::Isa;
using namespace eredu::testing::op_parity;

struct Case {
  std::size_t n_head;
  std::size_t n_head_kv;
  std::size_t head_dim;
  std::size_t n_tokens;
  std::size_t n_kv;  // the prompt's last token sees them all
  float q_spread;
};

// A case's inputs: queries, the cache in both types (F32 holding the F16 cache's exact values
// where the cache is F16, for the reference), positions ending at n_kv - 1.
struct Inputs {
  std::vector<float> q, k, v;
  std::vector<std::uint16_t> k16, v16;
  std::vector<std::int32_t> pos;
  AttentionArgs args;  // F32 cache, out unset
};

Inputs make_inputs(const Case& c, DType kv) {
  Inputs in;
  std::mt19937 rng(static_cast<unsigned>(c.n_head * 7919 + c.head_dim * 131 + c.n_kv));
  in.q = random_floats(rng, c.n_tokens * c.n_head * c.head_dim, -c.q_spread, c.q_spread);
  in.k = random_floats(rng, c.n_kv * c.n_head_kv * c.head_dim);
  in.v = random_floats(rng, c.n_kv * c.n_head_kv * c.head_dim);
  in.k16.resize(in.k.size());
  in.v16.resize(in.v.size());
  for (std::size_t i = 0; i < in.k.size(); ++i) {
    in.k16[i] = eredu::encoding::fp32_to_fp16(in.k[i]);
    in.v16[i] = eredu::encoding::fp32_to_fp16(in.v[i]);
    if (kv == DType::kF16) {  // the reference reads F32: give it the cache's exact values
      in.k[i] = eredu::encoding::fp16_to_fp32(in.k16[i]);
      in.v[i] = eredu::encoding::fp16_to_fp32(in.v16[i]);
    }
  }
  in.pos.resize(c.n_tokens);
  for (std::size_t t = 0; t < c.n_tokens; ++t)
    in.pos[t] = static_cast<std::int32_t>(c.n_kv - c.n_tokens + t);
  AttentionArgs& a = in.args;
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.kv_dtype = DType::kF32;
  a.positions = in.pos.data();
  a.n_tokens = c.n_tokens;
  a.n_head = c.n_head;
  a.n_head_kv = c.n_head_kv;
  a.head_dim = c.head_dim;
  a.n_kv = c.n_kv;
  a.scale = 1.0F / std::sqrt(static_cast<float>(c.head_dim));
  return in;
}

// The table's attention of the case on two threads, keys in rows, into `out`.
void attend_case(const eredu::cpu::KernelTable& table, const Inputs& in, DType kv, float* out) {
  AttentionArgs a = in.args;
  a.out = out;
  if (kv == DType::kF16) {
    a.k = in.k16.data();
    a.v = in.v16.data();
    a.kv_dtype = DType::kF16;
  }
  eredu::cpu::ThreadPool two(2);
  table.attention(a, &two);
}

std::string describe(const Case& c, DType kv) {
  return std::string(eredu::to_string(kv)) + " heads " + std::to_string(c.n_head) + "/" +
         std::to_string(c.n_head_kv) + " head_dim " + std::to_string(c.head_dim) + " tokens " +
         std::to_string(c.n_tokens) + " n_kv " + std::to_string(c.n_kv) + " spread " +
         std::to_string(c.q_spread);
}

void check(const eredu::cpu::KernelTable& table, const Case& c, DType kv, double threshold) {
  const Inputs in = make_inputs(c, kv);
  AttentionArgs a = in.args;
  std::vector<float> expected(c.n_tokens * c.n_head * c.head_dim);
  a.out = expected.data();
  eredu::cpu::reference::attention(a);
  GuardedBuffer actual(expected.size());
  attend_case(table, in, kv, actual.data());
  EXPECT_TRUE(actual.guards_intact());
  EXPECT_TRUE(
      outputs_match(describe(c, kv), actual.data(), expected.data(), expected.size(), threshold));
}

// The tables with attention_block.
class BlockAttention : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    table_ = eredu::cpu::kernels_for(GetParam());
    if (table_ == nullptr) {
      GTEST_SKIP() << "this CPU cannot run the " << eredu::cpu::isa_name(GetParam())
                   << " kernels (they need " << eredu::cpu::isa_requirements(GetParam()) << ")";
    }
  }
  const eredu::cpu::KernelTable* table_ = nullptr;
};

// Every case on both cache types.
void check_cases(const eredu::cpu::KernelTable& table, const std::vector<Case>& cases) {
  for (DType kv : {DType::kF32, DType::kF16}) {
    for (const Case& c : cases)
      check(table, c, kv, 1e-11);
  }
}

const std::vector<Case> kPromptCases = {
    {6, 2, 64, 17, 17, 1.0F},   {6, 2, 64, 40, 300, 1.0F},  {8, 1, 128, 21, 21, 1.0F},
    {8, 1, 80, 33, 150, 1.0F},  {4, 4, 16, 19, 64, 1.0F},   {32, 2, 64, 18, 90, 1.0F},
    {20, 1, 64, 17, 40, 1.0F},  {6, 2, 64, 24, 300, 40.0F}, {9, 3, 64, 37, 500, 1.0F},
    {16, 16, 32, 20, 20, 1.0F}, {8, 4, 8, 128, 128, 1.0F},  {8, 4, 8, 40, 300, 30.0F},
    {6, 2, 24, 19, 40, 1.0F},   {4, 1, 12, 33, 50, 1.0F},   {3, 3, 72, 17, 17, 1.0F}};

const std::vector<Case> kDecodeCases = {
    {6, 2, 64, 1, 1, 1.0F},   {6, 2, 64, 1, 300, 1.0F},  {32, 8, 64, 1, 700, 1.0F},
    {8, 1, 128, 3, 21, 1.0F}, {8, 1, 80, 16, 150, 1.0F}, {4, 4, 16, 2, 64, 1.0F},
    {32, 2, 64, 5, 90, 1.0F}, {20, 1, 64, 1, 40, 1.0F},  {6, 2, 64, 1, 300, 40.0F},
    {9, 3, 64, 7, 500, 1.0F}, {8, 4, 8, 1, 64, 1.0F},    {8, 4, 8, 5, 130, 1.0F},
    {6, 2, 24, 1, 40, 1.0F},  {4, 1, 12, 3, 50, 1.0F},   {3, 3, 72, 1, 17, 1.0F}};

TEST_P(BlockAttention, BlocksOfQueryRowsMatchTheReferenceForEveryGroupHeadSizeAndCache) {
  check_cases(*table_, kPromptCases);
}

TEST_P(BlockAttention, DecodeAndShortBatchesMatchTheReferenceForEveryGroupHeadSizeAndCache) {
  check_cases(*table_, kDecodeCases);
}

// Attention of tokens [first, first + n) of `q` (rows of all heads), at positions first ...,
// with the whole cache given, on `threads` threads.
std::vector<float> attend(const eredu::cpu::KernelTable& table, const std::vector<float>& q,
                          const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v,
                          std::size_t dim, std::size_t first, std::size_t n, std::size_t threads) {
  constexpr std::size_t kHeads = 12, kKvHeads = 3;
  std::vector<std::int32_t> pos(n);
  for (std::size_t t = 0; t < n; ++t)
    pos[t] = static_cast<std::int32_t>(first + t);
  std::vector<float> out(n * kHeads * dim);
  AttentionArgs a;
  a.q = q.data() + first * kHeads * dim;
  a.k = k.data();
  a.v = v.data();
  a.kv_dtype = DType::kF16;
  a.positions = pos.data();
  a.n_tokens = n;
  a.n_head = kHeads;
  a.n_head_kv = kKvHeads;
  a.head_dim = dim;
  a.n_kv = first + n;
  a.scale = 1.0F / std::sqrt(static_cast<float>(dim));
  a.out = out.data();
  eredu::cpu::ThreadPool pool(threads);
  table.attention(a, &pool);
  return out;
}

TEST_P(BlockAttention, ATokensValueIsBitIdenticalAloneInAShortBatchAndInAPromptOnAnyThreadCount) {
  const auto* table = table_;
  constexpr std::size_t kTokens = 40;
  for (std::size_t dim : {64, 8, 24}) {
    const std::size_t row = 12 * dim;
    std::mt19937 rng(77);
    const auto q = random_floats(rng, kTokens * row);
    std::vector<std::uint16_t> k(kTokens * 3 * dim), v(k.size());
    for (std::size_t i = 0; i < k.size(); ++i) {
      k[i] = eredu::encoding::fp32_to_fp16(random_floats(rng, 1)[0]);
      v[i] = eredu::encoding::fp32_to_fp16(random_floats(rng, 1)[0]);
    }
    const std::vector<float> prompt = attend(*table, q, k, v, dim, 0, kTokens, 2);
    auto same = [&](const std::vector<float>& got, std::size_t first, const std::string& what) {
      EXPECT_EQ(std::memcmp(got.data(), prompt.data() + first * row, got.size() * sizeof(float)), 0)
          << what << ", head size " << dim << ": tokens from " << first
          << " differ from the prompt's";
    };
    for (std::size_t threads : {1, 2, 3, 8}) {
      for (std::size_t t : {0, 1, 17, 39})
        same(attend(*table, q, k, v, dim, t, 1, threads), t, "decode, " + std::to_string(threads));
      same(attend(*table, q, k, v, dim, 30, 5, threads), 30,
           "5 tokens, " + std::to_string(threads));
    }
  }
}

TEST(BlockAttentionAcrossTables, TheAvx2BlocksGiveTheAvx512BlocksValuesBitForBit) {
  const auto* avx2 = eredu::cpu::kernels_for(Isa::kAvx2);
  const auto* avx512 = eredu::cpu::kernels_for(Isa::kAvx512);
  if (avx2 == nullptr || avx512 == nullptr) {
    GTEST_SKIP() << "needs both the avx2 and the avx512 kernels ("
                 << eredu::cpu::isa_requirements(Isa::kAvx512) << ")";
  }
  std::vector<Case> cases = kPromptCases;
  cases.insert(cases.end(), kDecodeCases.begin(), kDecodeCases.end());
  for (DType kv : {DType::kF32, DType::kF16}) {
    for (const Case& c : cases) {
      const Inputs in = make_inputs(c, kv);
      std::vector<float> from_avx2(c.n_tokens * c.n_head * c.head_dim);
      std::vector<float> from_avx512(from_avx2.size());
      attend_case(*avx2, in, kv, from_avx2.data());
      attend_case(*avx512, in, kv, from_avx512.data());
      EXPECT_EQ(std::memcmp(from_avx2.data(), from_avx512.data(), from_avx2.size() * sizeof(float)),
                0)
          << describe(c, kv);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, BlockAttention,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const auto& param_info) {
                           return std::string(eredu::cpu::isa_name(param_info.param));
                         });

}  // namespace
