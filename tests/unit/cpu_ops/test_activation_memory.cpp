// The blocks of CpuTensor values (activation_allocator.hpp, activation_memory.cpp): from 16 KiB
// aligned and reused within their size class on the thread that freed them, bounded per thread;
// and, since a new tensor's values are no longer zeroed, every operator of a decoder forward writes
// every value of its output: a 128-token prompt of stories260K gives the same logits, bit for bit,
// whether the blocks it reuses held NaNs or zeros.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <latch>
#include <limits>
#include <thread>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/runtime/load_model.hpp"
#include "shared_data.hpp"

namespace {

using eredu::cpu::ActivationValues;
namespace memory = eredu::cpu::activation_memory;

#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() \
  GTEST_SKIP()            \
      << "under AddressSanitizer activation blocks are never kept (use after free stays visible)"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

TEST(ActivationMemory, BlocksFrom16KiBAre64ByteAlignedAndReusedWithinTheirSizeClass) {
  SKIP_UNDER_ASAN();
  for (std::size_t bytes : {std::size_t{16384}, std::size_t{20000}, std::size_t{300000}}) {
    void* p = memory::take(bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0U) << bytes << " bytes";
    memory::give(p, bytes);
  }
  // 100000 and 98305 bytes share a class (98304 < b <= 114688); 98304 is the class below.
  void* a = memory::take(100000);
  const std::size_t before = memory::cached_bytes();
  memory::give(a, 100000);
  EXPECT_EQ(memory::cached_bytes(), before + 114688);
  void* other_class = memory::take(98304);
  EXPECT_NE(other_class, a);
  void* same_class = memory::take(98305);
  EXPECT_EQ(same_class, a);
  EXPECT_EQ(memory::cached_bytes(), before);
  memory::give(same_class, 98305);
  memory::give(other_class, 98304);
}

TEST(ActivationMemory, SmallBlocksAreNotKeptAndAThreadKeepsAtMost64MiB) {
  SKIP_UNDER_ASAN();
  const std::size_t before = memory::cached_bytes();
  memory::give(memory::take(1000), 1000);
  EXPECT_EQ(memory::cached_bytes(), before);
  constexpr std::size_t kBlock = std::size_t{3} << 20;  // a class of its own
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i)
    blocks.push_back(memory::take(kBlock));
  for (void* b : blocks)
    memory::give(b, kBlock);
  EXPECT_LE(memory::cached_bytes(), std::size_t{64} << 20);
  EXPECT_LE(memory::cached_bytes() - before, 16 * kBlock);  // at most 16 blocks per class
  // Take them back, so that the other tests see this thread's cache as it was.
  for (int i = 0; i < 40; ++i)
    blocks[static_cast<std::size_t>(i)] = memory::take(kBlock);
  for (void* b : blocks)
    memory::give(b, kBlock);
}

TEST(ActivationMemory, AllThreadsTogetherKeepAtMost256MiBAndReleaseFreesAThreadsBlocks) {
  SKIP_UNDER_ASAN();
  constexpr std::size_t kThreads = 8, kBlock = std::size_t{3} << 20, kBlocks = 16;  // 48 MiB each
  std::latch kept(kThreads + 1), measured(1);
  std::vector<std::size_t> after_release(kThreads, 1);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<void*> blocks;
      for (std::size_t i = 0; i < kBlocks; ++i)
        blocks.push_back(memory::take(kBlock));
      for (void* b : blocks)
        memory::give(b, kBlock);
      kept.count_down();
      measured.wait();
      memory::release();
      after_release[t] = memory::cached_bytes();
    });
  }
  kept.arrive_and_wait();
  const std::size_t all = memory::cached_bytes_all_threads();
  measured.count_down();
  for (std::thread& th : threads)
    th.join();
  EXPECT_LE(all, std::size_t{256} << 20);
  EXPECT_GE(all, std::size_t{192} << 20);  // the cap was reached, not missed
  for (std::size_t t = 0; t < kThreads; ++t)
    EXPECT_EQ(after_release[t], 0U) << "thread " << t;
}

// Fills this thread's kept blocks of every class from 16 KiB to 2 MiB with `value`.
void fill_kept_blocks(float value) {
  std::vector<ActivationValues> held;
  for (std::size_t floats = 4096; floats <= (std::size_t{512} << 10); floats += floats / 4) {
    for (int i = 0; i < 6; ++i)
      held.emplace_back(floats, value);
  }
}  // all given back here, filled

std::vector<float> prompt_logits(const std::filesystem::path& model, float kept_value) {
  auto runtime =
      eredu::runtime::load_model(eredu::cpu::CpuBackend(eredu::cpu::CpuBackendOptions{2}), model,
                                 eredu::cpu::CpuLoadOptions{});
  EXPECT_TRUE(runtime.has_value()) << runtime.error().what();
  if (!runtime.has_value()) return {};
  std::vector<std::uint32_t> prompt(128);
  for (std::size_t i = 0; i < prompt.size(); ++i)
    prompt[i] = static_cast<std::uint32_t>(1 + (i * 37) % 500);
  fill_kept_blocks(kept_value);
  auto sub = runtime->prefill(std::move(prompt));
  EXPECT_TRUE(sub.has_value()) << sub.error().what();
  if (!sub.has_value()) return {};
  auto logits = runtime->observe_output(sub->output);
  EXPECT_TRUE(logits.has_value());
  return logits.has_value() ? *logits : std::vector<float>{};
}

TEST(ActivationMemory, APromptsLogitsDoNotDependOnWhatItsReusedBlocksHeld) {
  const auto model = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(model);
  const std::vector<float> over_zeros = prompt_logits(model, 0.0F);
  const std::vector<float> over_nans =
      prompt_logits(model, std::numeric_limits<float>::quiet_NaN());
  ASSERT_EQ(over_zeros.size(), 512U);
  for (float v : over_nans)
    ASSERT_TRUE(std::isfinite(v));
  EXPECT_EQ(over_nans, over_zeros);
}

}  // namespace
