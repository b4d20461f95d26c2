#pragma once
// A persistent pool of worker threads for the CPU kernels.
//
// The workers are created once and live as long as the pool. `parallel_for` publishes a job by
// bumping an atomic generation counter; idle workers spin briefly on it and then sleep in
// std::atomic::wait (a futex on Linux), so a call takes no lock and allocates nothing. The calling
// thread works on its own share of the range and then waits for the others.
//
// Determinism. Work is split into ranges; every index is handed to exactly one thread, and a
// kernel computes each output element entirely inside the range that owns it, with a fixed
// reduction order. Results therefore do not depend on the number of threads or on the schedule.
//
// One submitter at a time: if parallel_for is called while the pool is busy (from another thread
// or from inside a job), that call runs its whole range on the calling thread instead of waiting.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace eredu::cpu {

// A non-owning reference to a callable `void(std::size_t begin, std::size_t end)`. Cheap to copy;
// the referenced callable must outlive every call made through it. Passing a lambda straight to
// parallel_for is fine: the temporary lives until parallel_for returns, and parallel_for returns
// only when all work is done.
class RangeFn {
 public:
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, RangeFn> &&
           std::is_invocable_v<std::remove_reference_t<F>&, std::size_t, std::size_t>)
      RangeFn(F&& fn)
  noexcept  // NOLINT(google-explicit-constructor): used like a function parameter
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
        call_([](void* object, std::size_t begin, std::size_t end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(begin, end);
        }) {}

  // An empty reference; calling it is a precondition violation.
  RangeFn() noexcept = default;

  void operator()(std::size_t begin, std::size_t end) const { call_(object_, begin, end); }

 private:
  void* object_ = nullptr;
  void (*call_)(void*, std::size_t, std::size_t) = nullptr;
};

// How a range [0, n) is cut into the pieces handed to threads.
enum class Schedule {
  kStatic,   // one contiguous piece per thread, sizes differing by at most one grain
  kChunked,  // pieces of `grain` indices, taken by whichever thread is free (load balancing)
};

class ThreadPool {
 public:
  // `n_threads` counts the caller: 1 means no worker threads (everything runs inline); 0 is
  // treated as 1.
  explicit ThreadPool(std::size_t n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that take part in a job, the caller included.
  [[nodiscard]] std::size_t size() const noexcept { return workers_.size() + 1; }

  // Calls fn(begin, end) over pieces covering [0, n) exactly once each. Piece boundaries are
  // multiples of `grain` (except the final end = n). Returns when every piece is done.
  void parallel_for(std::size_t n, RangeFn fn, std::size_t grain = 1,
                    Schedule schedule = Schedule::kStatic);

 private:
  void worker_main(std::size_t worker_index);
  void run_share(std::size_t thread_index);

  std::vector<std::thread> workers_;

  // The published job. Written by the submitter before `generation_` is bumped (release) and read
  // by workers after they observe the bump (acquire).
  RangeFn job_fn_;
  std::size_t job_n_ = 0;
  std::size_t job_grain_ = 1;
  Schedule job_schedule_ = Schedule::kStatic;

  alignas(64) std::atomic<std::uint64_t> generation_{0};
  alignas(64) std::atomic<std::size_t> pending_{0};     // workers still running the current job
  alignas(64) std::atomic<std::size_t> next_chunk_{0};  // kChunked: next grain-sized piece
  alignas(64) std::atomic<bool> busy_{false};           // a job is being submitted or run
  std::atomic<bool> stop_{false};
};

// Convenience: runs on `pool` when given, inline on the caller otherwise.
inline void parallel_for(ThreadPool* pool, std::size_t n, RangeFn fn, std::size_t grain = 1,
                         Schedule schedule = Schedule::kStatic) {
  if (pool != nullptr) {
    pool->parallel_for(n, fn, grain, schedule);
  } else if (n > 0) {
    fn(0, n);
  }
}

}  // namespace eredu::cpu
