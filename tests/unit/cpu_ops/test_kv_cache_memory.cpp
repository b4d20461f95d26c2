// The CPU KV cache's memory (zeroed_pages.hpp): a fresh cache takes no memory of its own however
// many positions it is sized for; writing a position makes only the pages holding its rows (its
// keys' block of 16 positions, where keys are kept so) the process's own; positions never written
// read as zeros (attention over them matches a float64 computation that takes them as zeros); and a
// cache larger than the machine can map is kCapacityExhausted naming the cache.
#include <gtest/gtest.h>

#include <sys/sysinfo.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/huge_pages.hpp"
#include "eredu/backends/cpu/zeroed_pages.hpp"
#include "page_residency.hpp"

namespace {

using eredu::cpu::CpuBackend;
using eredu::cpu::CpuBackendOptions;
using eredu::cpu::CpuTensor;
using eredu::testing::own_pages;

#define SKIP_WITHOUT_PAGEMAP(address)                                                  \
  if (!own_pages(address, 1)) {                                                        \
    GTEST_SKIP() << "/proc/self/pagemap is unreadable here: residency cannot be seen"; \
  }

CpuTensor filled(std::size_t rows, std::size_t cols, float scale, float phase) {
  CpuTensor t{rows, cols, eredu::cpu::ActivationValues(rows * cols)};
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    t.data[i] = scale * std::sin(0.37F * static_cast<float>(i) + phase);
  }
  return t;
}

TEST(KvCacheMemory, AFreshCacheForThousandsOfPositionsHoldsNoMemoryAndReadsAsZeros) {
  const CpuBackend backend(CpuBackendOptions{1});
  for (auto type : {eredu::KvCacheType::kF32, eredu::KvCacheType::kF16}) {
    auto cache = backend.create_kv_cache_of(eredu::KvCacheSpec{4, 2, 64, 4096}, type);
    ASSERT_TRUE(cache.has_value()) << cache.error().what();
    const std::size_t bytes = 4 * cache->layer_bytes();
    ASSERT_EQ(cache->keys.size(), bytes);
    ASSERT_EQ(cache->values.size(), bytes);
    SKIP_WITHOUT_PAGEMAP(cache->keys.data());
    EXPECT_EQ(own_pages(cache->keys.data(), bytes), 0U);
    EXPECT_EQ(own_pages(cache->values.data(), bytes), 0U);
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; i += 997) {
      nonzero += cache->keys.data()[i] != std::byte{0} ? 1 : 0;
      nonzero += cache->values.data()[i] != std::byte{0} ? 1 : 0;
    }
    EXPECT_EQ(nonzero, 0U);
    // Reading it mapped the kernel's zero page only: still nothing of its own.
    EXPECT_EQ(own_pages(cache->keys.data(), bytes), 0U);
  }
}

TEST(KvCacheMemory, DecodingOnePositionHoldsOnlyThePagesOfItsRowsAndReadsTheRestAsZeros) {
  const CpuBackend backend(CpuBackendOptions{2});
  constexpr std::uint32_t kPosition = 3000;
  constexpr std::uint32_t kHeads = 4;
  constexpr std::uint32_t kKvHeads = 2;
  constexpr std::uint32_t kHeadDim = 64;
  constexpr float kScale = 0.125F;
  auto cache = backend.create_kv_cache(eredu::KvCacheSpec{3, kKvHeads, kHeadDim, 4096});
  ASSERT_TRUE(cache.has_value()) << cache.error().what();
  SKIP_WITHOUT_PAGEMAP(cache->keys.data());
  const CpuTensor q = filled(1, kHeads * kHeadDim, 1.0F, 0.1F);
  const CpuTensor k = filled(1, kKvHeads * kHeadDim, 3.0F, 0.7F);
  const CpuTensor v = filled(1, kKvHeads * kHeadDim, 0.5F, 1.3F);
  const eredu::AttentionSpec spec{1, kHeads, kKvHeads, kHeadDim, kScale};  // layer 1
  auto out = backend.attention(q, k, v, *cache, spec, kPosition);
  ASSERT_TRUE(out.has_value()) << out.error().what();

  // Positions 0..2999 were never written: each scores 0 and adds a zero value, so head h's output
  // is v(h) * e^s / (3000 + e^s) with s = scale * q(h) . k(h), in float64.
  for (std::uint32_t h = 0; h < kHeads; ++h) {
    const std::uint32_t g = h / (kHeads / kKvHeads);
    double s = 0;
    for (std::uint32_t d = 0; d < kHeadDim; ++d) {
      s += static_cast<double>(q.data[h * kHeadDim + d]) * k.data[g * kHeadDim + d];
    }
    const double weight = std::exp(kScale * s) / (kPosition + std::exp(kScale * s));
    for (std::uint32_t d = 0; d < kHeadDim; ++d) {
      const double expected = weight * v.data[g * kHeadDim + d];
      EXPECT_NEAR(out->data[h * kHeadDim + d], expected, 1e-5 + 1e-4 * std::abs(expected))
          << "head " << h << " element " << d;
    }
  }

  // One 512-byte row of K and one of V were written. V's is one 4 KiB page; K's is one page as
  // rows, or its 128 elements spread over the 8 KiB of their block of 16 positions (three pages at
  // most) where the table reads keys in blocks. A huge page each where the system's setting gives
  // every anonymous mapping huge pages.
  const std::size_t bytes = 3 * cache->layer_bytes();
  const bool huge_everywhere = eredu::cpu::transparent_huge_pages_mode() == "always";
  const std::size_t key_span = cache->key_layout == eredu::cpu::KeyLayout::kRows ? 512 : 16 * 512;
  const std::size_t most_keys =
      huge_everywhere ? eredu::cpu::huge_page_bytes() / 4096 : key_span / 4096 + 1;
  const std::size_t most_values = huge_everywhere ? eredu::cpu::huge_page_bytes() / 4096 : 1;
  const auto keys = own_pages(cache->keys.data(), bytes);
  const auto values = own_pages(cache->values.data(), bytes);
  ASSERT_TRUE(keys && values);
  EXPECT_GE(*keys, 1U);
  EXPECT_LE(*keys, most_keys);
  EXPECT_GE(*values, 1U);
  EXPECT_LE(*values, most_values);
}

TEST(KvCacheMemory, ACacheLargerThanTheMachineCanMapIsCapacityExhaustedNamingIt) {
  std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
  int mode = -1;
  struct sysinfo info {};
  if (!(overcommit >> mode) || mode == 1 || ::sysinfo(&info) != 0) {
    GTEST_SKIP() << "the kernel maps any size here (vm.overcommit_memory = " << mode
                 << "): a refusal cannot be provoked";
  }
  // 512 GiB per tensor, past the memory and swap of the machines this runs on.
  const eredu::KvCacheSpec geometry{16, 64, 128, 1u << 20};
  const double machine =
      (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
  if (machine >= 256.0 * (1ull << 30)) {
    GTEST_SKIP() << "this machine has " << machine / (1ull << 30)
                 << " GiB of memory and swap: a 512 GiB cache may map";
  }
  const CpuBackend backend(CpuBackendOptions{1});
  auto cache = backend.create_kv_cache(geometry);
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code(), eredu::ErrorCode::kCapacityExhausted);
  EXPECT_NE(std::string(cache.error().what()).find("kv cache keys"), std::string::npos)
      << cache.error().what();
  // The backend still makes a cache that fits.
  EXPECT_TRUE(backend.create_kv_cache(eredu::KvCacheSpec{1, 1, 8, 4}).has_value());
}

}  // namespace
