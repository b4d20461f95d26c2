// The sampler allocates nothing per token: after create(), sample() and accept() never call
// operator new. This file replaces the global allocation functions of the test executable with
// counting ones (they forward to malloc/free); the counter is per thread. ThreadSanitizer and
// AddressSanitizer define these functions themselves (and GCC's -Wmismatched-new-delete misfires on
// the replacement under ASan), so under them the replacement is left out and the test skips.

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "eredu/generation/sampler.hpp"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define EREDU_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define EREDU_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef EREDU_COUNT_ALLOCATIONS
#define EREDU_COUNT_ALLOCATIONS 1
#endif

namespace {
thread_local std::size_t g_allocations = 0;
}  // namespace

#if EREDU_COUNT_ALLOCATIONS

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
#endif  // EREDU_COUNT_ALLOCATIONS

namespace eredu::generation {
namespace {

TEST(SamplerAllocation, SampleAndAcceptAllocateNothingAfterCreate) {
  if (!EREDU_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting is off under ThreadSanitizer and AddressSanitizer";
  {
    // The counter works: an ordinary allocation is seen.
    const std::size_t probe = g_allocations;
    auto* allocated = new std::vector<int>(3);
    delete allocated;
    ASSERT_GT(g_allocations, probe);
  }
  constexpr std::int32_t kVocab = 1000;
  std::vector<float> logits(kVocab);
  for (std::int32_t i = 0; i < kVocab; ++i)
    logits[static_cast<std::size_t>(i)] = float(i % 17) * 0.1f;

  SamplingConfig full;  // every step of the chain on
  full.top_k = 0;       // so top-p sorts the whole vocabulary
  full.top_p = 0.9f;
  full.min_p = 0.05f;
  full.repeat_penalty = 1.1f;
  full.frequency_penalty = 0.1f;
  full.presence_penalty = 0.1f;
  full.penalty_window = 8;
  SamplingConfig top_k = full;
  top_k.top_k = 40;
  for (const SamplingConfig& config : {full, top_k, SamplingConfig::greedy()}) {
    Result<Sampler> sampler = Sampler::create(config, kVocab);
    ASSERT_TRUE(sampler.has_value());
    const std::size_t before = g_allocations;
    for (int step = 0; step < 100; ++step) {
      const Result<TokenId> token = sampler->sample(logits);
      ASSERT_TRUE(token.has_value());
      ASSERT_TRUE(sampler->accept(*token).has_value());
    }
    EXPECT_EQ(g_allocations, before);
  }
}

}  // namespace
}  // namespace eredu::generation
