// Keys in blocks of 16 positions (KeyLayout::kBlocks16, the layout the CPU backend's KV cache holds
// for the AVX2, AVX-512 and AMX tables) give every table's attention the same values, bit for bit,
// as the same keys in rows: decode, short batches and prompts, query groups of 1 to 20 heads (the
// blocks' keys-in-lanes path for decode, their rows-in-lanes path for prompts, and the one-row
// path, which gathers a key from its block), head sizes 8 to 128, both cache types, caches whose
// length is no multiple of 16. The block's positions past the cache's end hold NaN, so a kernel
// that read one into a value would show it. The rows' values are checked against the float64
// reference in test_prompt_attention.cpp and test_avx2_attention.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"

namespace {

using eredu::DType;
using eredu::cpu::AttentionArgs;
using eredu::cpu::Isa;
using eredu::cpu::KeyLayout;

struct Case {
  std::size_t n_head;
  std::size_t n_head_kv;
  std::size_t head_dim;
  std::size_t n_tokens;
  std::size_t n_kv;  // the last token sees them all
};

// The rows [n_kv][row] of keys laid out in blocks of 16 positions, NaN past n_kv.
template <typename T>
std::vector<T> in_blocks(const std::vector<T>& rows, std::size_t n_kv, std::size_t row, T nan) {
  const std::size_t held = (n_kv + 15) / 16 * 16;
  std::vector<T> blocks(held * row, nan);
  for (std::size_t j = 0; j < n_kv; ++j) {
    for (std::size_t e = 0; e < row; ++e)
      blocks[eredu::cpu::key_offset(KeyLayout::kBlocks16, j, e, row)] = rows[j * row + e];
  }
  return blocks;
}

void expect_layouts_agree(const eredu::cpu::KernelTable& table, const Case& c, DType kv) {
  std::mt19937 rng(static_cast<unsigned>(c.n_head * 131 + c.head_dim * 17 + c.n_kv));
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  const std::size_t row = c.n_head_kv * c.head_dim;
  std::vector<float> q(c.n_tokens * c.n_head * c.head_dim), k(c.n_kv * row), v(k.size());
  for (float& x : q)
    x = dist(rng);
  for (float& x : k)
    x = dist(rng);
  for (float& x : v)
    x = dist(rng);
  std::vector<std::uint16_t> k16(k.size()), v16(v.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    k16[i] = eredu::encoding::fp32_to_fp16(k[i]);
    v16[i] = eredu::encoding::fp32_to_fp16(v[i]);
  }
  const auto k_blocks = in_blocks(k, c.n_kv, row, std::numeric_limits<float>::quiet_NaN());
  const auto k16_blocks = in_blocks<std::uint16_t>(k16, c.n_kv, row, 0x7E00);  // an F16 NaN
  std::vector<std::int32_t> pos(c.n_tokens);
  for (std::size_t t = 0; t < c.n_tokens; ++t)
    pos[t] = static_cast<std::int32_t>(c.n_kv - c.n_tokens + t);
  AttentionArgs a;
  a.q = q.data();
  a.kv_dtype = kv;
  a.v = kv == DType::kF16 ? static_cast<const void*>(v16.data()) : v.data();
  a.positions = pos.data();
  a.n_tokens = c.n_tokens;
  a.n_head = c.n_head;
  a.n_head_kv = c.n_head_kv;
  a.head_dim = c.head_dim;
  a.n_kv = c.n_kv;
  a.scale = 1.0F / std::sqrt(static_cast<float>(c.head_dim));
  eredu::cpu::ThreadPool two(2);

  std::vector<float> from_rows(q.size()), from_blocks(q.size());
  a.key_layout = KeyLayout::kRows;
  a.k = kv == DType::kF16 ? static_cast<const void*>(k16.data()) : k.data();
  a.out = from_rows.data();
  table.attention(a, &two);
  a.key_layout = KeyLayout::kBlocks16;
  a.k = kv == DType::kF16 ? static_cast<const void*>(k16_blocks.data()) : k_blocks.data();
  a.out = from_blocks.data();
  table.attention(a, &two);

  std::size_t differ = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    differ += std::memcmp(&from_rows[i], &from_blocks[i], sizeof(float)) != 0 ? 1 : 0;
  }
  EXPECT_EQ(differ, 0U) << eredu::cpu::isa_name(table.isa) << " " << eredu::to_string(kv)
                        << " heads " << c.n_head << "/" << c.n_head_kv << " head_dim " << c.head_dim
                        << " tokens " << c.n_tokens << " n_kv " << c.n_kv << ": first value "
                        << from_rows[0] << " / " << from_blocks[0];
}

TEST(AttentionKeyLayouts, KeysInBlocksOf16GiveEveryTableTheValuesOfKeysInRows) {
  const std::vector<Case> cases = {{4, 1, 64, 1, 1},     {32, 8, 64, 1, 37},  {32, 8, 64, 1, 300},
                                   {28, 4, 128, 1, 129}, {16, 2, 64, 1, 64},  {8, 4, 8, 1, 77},
                                   {9, 3, 64, 3, 50},    {6, 2, 72, 5, 91},   {20, 1, 64, 1, 40},
                                   {20, 1, 64, 18, 45},  {6, 2, 64, 40, 300}, {8, 1, 80, 33, 150},
                                   {8, 4, 8, 128, 128},  {32, 8, 64, 17, 17}, {12, 3, 24, 19, 61}};
  std::size_t tables = 0;
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    const auto* table = eredu::cpu::kernels_for(isa);
    if (table == nullptr) continue;  // this CPU cannot run it (test_dispatch.cpp says which)
    ++tables;
    for (DType kv : {DType::kF32, DType::kF16}) {
      for (const Case& c : cases)
        expect_layouts_agree(*table, c, kv);
    }
  }
  EXPECT_GE(tables, 1U);  // the generic table runs everywhere
}

TEST(AttentionKeyLayouts, TheTablesWithBlockAttentionKeepKeysInBlocksAndTheGenericOneInRows) {
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
    const auto* table = eredu::cpu::kernels_for(isa);
    if (table == nullptr) continue;
    const bool blocks = isa != Isa::kGeneric;
    EXPECT_EQ(table->key_layout, blocks ? KeyLayout::kBlocks16 : KeyLayout::kRows)
        << eredu::cpu::isa_name(isa);
  }
}

TEST(AttentionKeyLayouts, AKeysOffsetInBlocksPutsSixteenPositionsOfOneElementSideBySide) {
  constexpr std::size_t kRow = 24;
  EXPECT_EQ(eredu::cpu::key_offset(KeyLayout::kRows, 5, 7, kRow), 5 * kRow + 7);
  EXPECT_EQ(eredu::cpu::key_offset(KeyLayout::kBlocks16, 0, 0, kRow), 0U);
  EXPECT_EQ(eredu::cpu::key_offset(KeyLayout::kBlocks16, 15, 0, kRow), 15U);
  EXPECT_EQ(eredu::cpu::key_offset(KeyLayout::kBlocks16, 0, 1, kRow), 16U);
  EXPECT_EQ(eredu::cpu::key_offset(KeyLayout::kBlocks16, 16, 0, kRow), 16 * kRow);
  EXPECT_EQ(eredu::cpu::key_offset(KeyLayout::kBlocks16, 37, 5, kRow), (2 * kRow + 5) * 16 + 5);
}

}  // namespace
