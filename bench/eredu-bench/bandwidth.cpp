#include "bandwidth.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "eredu/backends/cpu/huge_pages.hpp"
#include "eredu/backends/cpu/thread_pool.hpp"

namespace eredu::bench {
namespace {

constexpr std::size_t kAlign = 4096;
constexpr std::size_t kChunk = 256;  // bytes per loop step: 8 loads of 32 bytes

// Sum of 32-bit lanes over [p, p + bytes); bytes is a multiple of kChunk. Eight independent
// accumulators keep eight loads in flight per iteration.
__attribute__((target("avx2"))) std::uint64_t sum_avx2(const std::byte* p, std::size_t bytes) {
  __m256i acc[8];
  for (auto& a : acc)
    a = _mm256_setzero_si256();
  for (std::size_t off = 0; off < bytes; off += kChunk) {
    const auto* v = reinterpret_cast<const __m256i*>(p + off);
    for (int i = 0; i < 8; ++i)
      acc[i] = _mm256_add_epi32(acc[i], _mm256_load_si256(v + i));
  }
  __m256i total = acc[0];
  for (int i = 1; i < 8; ++i)
    total = _mm256_add_epi32(total, acc[i]);
  alignas(32) std::uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  std::uint64_t sum = 0;
  for (std::uint32_t lane : lanes)
    sum += lane;
  return sum;
}

std::uint64_t sum_scalar(const std::byte* p, std::size_t bytes) {
  std::uint64_t acc[4] = {0, 0, 0, 0};
  for (std::size_t off = 0; off < bytes; off += 32) {
    for (std::size_t i = 0; i < 4; ++i) {
      std::uint64_t v;
      std::memcpy(&v, p + off + 8 * i, sizeof v);
      acc[i] += v;
    }
  }
  return acc[0] + acc[1] + acc[2] + acc[3];
}

}  // namespace

double BandwidthResult::best() const {
  return pass_gb_per_s.empty() ? 0.0
                               : *std::max_element(pass_gb_per_s.begin(), pass_gb_per_s.end());
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

double BandwidthResult::median() const {
  return median_of(pass_gb_per_s);
}

void ReadTest::FreeDeleter::operator()(void* p) const noexcept {
  std::free(p);
}

Result<ReadTest> ReadTest::create(std::uint64_t bytes, cpu::ThreadPool& pool) {
  const std::size_t threads = pool.size();
  if (threads == 0) return fail(ErrorCode::kInvalidArgument, "--threads must be >= 1");
  if (bytes < (std::uint64_t{1} << 20)) {
    return fail(ErrorCode::kInvalidArgument, "the bandwidth buffer must be at least 1 MiB");
  }
  ReadTest test;
  // Every thread's share is a whole number of chunks, so the loops need no tail.
  const std::size_t unit = kChunk * threads;
  test.bytes_ = static_cast<std::size_t>(bytes / unit * unit);
  test.threads_ = threads;
  test.buffer_.reset(static_cast<std::byte*>(
      std::aligned_alloc(kAlign, (test.bytes_ + kAlign - 1) / kAlign * kAlign)));
  if (!test.buffer_) {
    return fail(
        ErrorCode::kCapacityExhausted,
        "cannot allocate the " + std::to_string(test.bytes_ >> 20) + " MiB bandwidth buffer");
  }
  // In the pages the weights' row groups have while a benchmark runs (huge_pages.hpp: huge pages
  // where they are advised before the load writes them; collapsed later by khugepaged, they are
  // still mostly 4 KiB pages in a run of a minute), so that a decode's stream and this test read
  // alike.
  if (cpu::weights_huge_page_advice() == cpu::HugePageAdvice::kBeforeFirstWrite)
    cpu::advise_huge_pages(test.buffer_.get(), test.bytes_);
  const std::size_t share = test.bytes_ / threads;
  std::byte* base = test.buffer_.get();
  // Written by the threads that will read it (first touch places pages near them on NUMA).
  pool.parallel_for(threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t)
      std::memset(base + t * share, static_cast<int>(t + 1), share);
  });
  __builtin_cpu_init();
  test.avx2_ = __builtin_cpu_supports("avx2") != 0;
  return test;
}

double ReadTest::pass(cpu::ThreadPool& pool) {
  const std::size_t share = bytes_ / threads_;
  const std::byte* base = buffer_.get();
  std::atomic<std::uint64_t> sum{0};
  const auto start = std::chrono::steady_clock::now();
  pool.parallel_for(threads_, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const std::byte* p = base + t * share;
      sum.fetch_add(avx2_ ? sum_avx2(p, share) : sum_scalar(p, share), std::memory_order_relaxed);
    }
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sink_ += sum.load(std::memory_order_relaxed);
  return static_cast<double>(bytes_) / seconds / 1e9;
}

Result<BandwidthResult> measure_read_bandwidth(const BandwidthOptions& options) {
  if (options.threads == 0) return fail(ErrorCode::kInvalidArgument, "--threads must be >= 1");
  if (options.passes == 0) return fail(ErrorCode::kInvalidArgument, "passes must be >= 1");
  cpu::ThreadPool pool(options.threads);
  EREDU_TRY(ReadTest test, ReadTest::create(options.bytes, pool));
  BandwidthResult result;
  result.threads = options.threads;
  result.bytes = test.bytes();
  result.method = test.method();
  for (std::size_t pass = 0; pass < options.passes; ++pass)
    result.pass_gb_per_s.push_back(test.pass(pool));
  return result;
}

}  // namespace eredu::bench
