#include "eredu/backends/cpu/thread_pool.hpp"

#include <algorithm>

namespace eredu::cpu {

namespace {
// Spins before sleeping. Kernels are issued back to back during a forward pass, so a worker that
// just finished usually sees the next job within microseconds; sleeping right away would add a
// futex wake-up to every op.
// After the spin, a few yields let a descheduled peer run when the machine is oversubscribed.
constexpr int kSpinIterations = 4000;
constexpr int kYieldIterations = 16;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

ThreadPool::ThreadPool(std::size_t n_threads) {
  const std::size_t workers = n_threads > 1 ? n_threads - 1 : 0;
  workers_.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) {
    workers_.emplace_back([this, i] { worker_main(i + 1); });
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : workers_)
    t.join();
}

void ThreadPool::run_share(std::size_t thread_index) {
  const std::size_t n = job_n_;
  const std::size_t grain = job_grain_;
  const std::size_t n_grains = (n + grain - 1) / grain;
  if (job_schedule_ == Schedule::kStatic) {
    const std::size_t threads = size();
    const std::size_t g0 = n_grains * thread_index / threads;
    const std::size_t g1 = n_grains * (thread_index + 1) / threads;
    if (g0 < g1) job_fn_(g0 * grain, std::min(n, g1 * grain));
    return;
  }
  for (;;) {
    const std::size_t g = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (g >= n_grains) return;
    job_fn_(g * grain, std::min(n, (g + 1) * grain));
  }
}

void ThreadPool::worker_main(std::size_t thread_index) {
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t current = generation_.load(std::memory_order_acquire);
    for (int spin = 0; current == seen && spin < kSpinIterations; ++spin) {
      cpu_relax();
      current = generation_.load(std::memory_order_acquire);
    }
    for (int y = 0; current == seen && y < kYieldIterations; ++y) {
      std::this_thread::yield();
      current = generation_.load(std::memory_order_acquire);
    }
    while (current == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      current = generation_.load(std::memory_order_acquire);
    }
    seen = current;
    if (stop_.load(std::memory_order_relaxed)) return;
    run_share(thread_index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadPool::parallel_for(std::size_t n, RangeFn fn, std::size_t grain, Schedule schedule) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  bool expected = false;
  if (workers_.empty() || n <= grain ||
      !busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    fn(0, n);  // nothing to share, or the pool is taken: run inline
    return;
  }
  job_fn_ = fn;
  job_n_ = n;
  job_grain_ = grain;
  job_schedule_ = schedule;
  next_chunk_.store(0, std::memory_order_relaxed);
  pending_.store(workers_.size(), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();

  run_share(0);

  std::size_t left = pending_.load(std::memory_order_acquire);
  for (int spin = 0; left != 0 && spin < kSpinIterations; ++spin) {
    cpu_relax();
    left = pending_.load(std::memory_order_acquire);
  }
  for (int y = 0; left != 0 && y < kYieldIterations; ++y) {
    std::this_thread::yield();
    left = pending_.load(std::memory_order_acquire);
  }
  while (left != 0) {
    pending_.wait(left, std::memory_order_acquire);
    left = pending_.load(std::memory_order_acquire);
  }
  busy_.store(false, std::memory_order_release);
}

}  // namespace eredu::cpu
