#pragma once
// Memory-read bandwidth of this machine: `threads` threads each sum their share of one large
// buffer (AVX2 256-bit loads where the CPU has AVX2, 64-bit loads otherwise). The buffer is
// written first (so every page is mapped) and then read `passes` times; the best pass is the
// figure decode throughput is compared with (llama1b decode at X% of it).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eredu/backends/cpu/thread_pool.hpp"
#include "eredu/core/result.hpp"

namespace eredu::bench {

struct BandwidthOptions {
  std::size_t threads = 1;
  std::uint64_t bytes = std::uint64_t{1} << 30;  // 1 GiB: far beyond any last-level cache
  std::size_t passes = 10;
};

// The median of `values` (0 when empty): the middle one, or the mean of the two middle ones.
[[nodiscard]] double median_of(std::vector<double> values);

struct BandwidthResult {
  std::size_t threads = 0;
  std::uint64_t bytes = 0;
  std::string method;                 // "avx2" or "scalar"
  std::vector<double> pass_gb_per_s;  // each pass: bytes / seconds / 1e9
  [[nodiscard]] double best() const;
  [[nodiscard]] double median() const;
};

// One buffer, written once, then read on demand: measure_read_bandwidth's passes, and the passes
// --products interleaves with its products (products.hpp).
class ReadTest {
 public:
  // kInvalidArgument for zero threads or a buffer under 1 MiB; kCapacityExhausted when the
  // buffer cannot be allocated. The buffer is written by `pool`'s threads.
  [[nodiscard]] static Result<ReadTest> create(std::uint64_t bytes, cpu::ThreadPool& pool);
  // Reads the whole buffer once on `pool` (its size() threads, each its share); GB/s.
  double pass(cpu::ThreadPool& pool);
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] const char* method() const noexcept { return avx2_ ? "avx2" : "scalar"; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<std::byte, FreeDeleter> buffer_;
  std::size_t bytes_ = 0;
  std::size_t threads_ = 0;
  bool avx2_ = false;
  std::uint64_t sink_ = 0;  // the sums, so that no pass can be optimized away
};

// kInvalidArgument for zero threads, passes or a buffer under 1 MiB; kCapacityExhausted when the
// buffer cannot be allocated.
[[nodiscard]] Result<BandwidthResult> measure_read_bandwidth(const BandwidthOptions& options);

}  // namespace eredu::bench
