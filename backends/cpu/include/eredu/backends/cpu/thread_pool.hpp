#pragma once
// A persistent pool of worker threads for the CPU kernels.
//
// The workers are created once and live as long as the pool. `parallel_for` cuts the range into
// pieces and publishes the job in one atomic word (a job generation and the count of pieces not
// yet claimed); every thread, the caller included, claims pieces from that word until none are
// left, and the caller returns once every piece is finished. Idle workers spin briefly on the word
// and then sleep in std::atomic::wait (a futex on Linux), so a call takes no lock and allocates
// nothing.
//
// Oversubscription. Nothing is waited for that has not started: a worker that is descheduled (more
// runnable threads than cores) simply claims nothing, and the caller runs the pieces itself. The
// caller only waits for pieces another thread is actually running.
//
// Stealing (Schedule::kStealing). A piece is then a thread's share of grains, which it runs one
// grain at a time from the front; a thread with nothing left to claim takes grains from the backs
// of the other shares before it counts its own pieces done. Since a job cannot finish while a
// piece is uncounted, a thread only touches the shares while the job is still its own. A share
// whose owner was descheduled mid-way is thus finished by the others, grain by grain.
//
// Determinism. Every index is handed to exactly one thread, and a kernel computes each output
// element entirely inside the piece (or stolen grain) that owns it, with a fixed reduction order.
// Results therefore do not depend on the number of threads or on which thread runs which piece.
//
// One submitter at a time: if parallel_for is called while the pool is busy (from another thread
// or from inside a job), that call runs its whole range on the calling thread instead of waiting.
//
// Failures. A job that throws (std::bad_alloc from a kernel's scratch buffer, or anything else)
// neither terminates the process nor stalls the pool: the thread that ran the piece catches the
// exception and keeps the first one, the pieces not yet started are skipped, and once every
// claimed piece has finished the pool is released and parallel_for rethrows that exception on
// the submitting thread. A job therefore fails exactly as it would have inline, the kernels stay
// exception-neutral, and the CPU operators (backend/ops.cpp) turn the exception into an Error
// value (kCapacityExhausted for an allocation failure). The pool is usable again at once.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
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
  kChunked,  // pieces of `grain` indices (finer load balancing)
  // One contiguous share per thread, as kStatic, but run one grain at a time from its front; a
  // thread whose share is done takes grains from the back of the others' shares. For jobs whose
  // speed varies between threads (memory-bound decode products: two cores rarely stream at the
  // same rate for long): the threads keep their own sequential stream, and the job ends within
  // about a grain of each other instead of when the slower share does.
  kStealing,
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
  // multiples of `grain` (except the final end = n). Returns when every piece is done; if a
  // piece threw, rethrows its exception (the first one) after the job has finished.
  void parallel_for(std::size_t n, RangeFn fn, std::size_t grain = 1,
                    Schedule schedule = Schedule::kStatic);

 private:
  void worker_main();
  // Claims and runs pieces of job `generation` until none are left unclaimed.
  void run_pieces(std::uint32_t generation);
  void run_piece(std::size_t piece);
  // kStealing: runs grains [lo, hi) of share `piece` from the front, one at a time.
  void run_share_front(std::size_t piece);
  // kStealing: runs the grains left in the other shares, one at a time from their backs.
  void steal_from_shares(std::size_t own_piece);
  // Runs grain g of the current job, unless the job has failed; keeps the first exception.
  void run_grain_caught(std::size_t grain) noexcept;
  // Runs one piece, or skips it once the job has failed; keeps the first exception a piece throws.
  void run_piece_caught(std::size_t piece) noexcept;

  std::vector<std::thread> workers_;

  // kStealing: the grains of share p not yet taken, [lo, hi) as (hi << 32) | lo. The owner takes
  // lo, a thief takes hi - 1. Set by the submitter before the job is published; touched only by a
  // thread holding an uncounted piece of the job, so never after the job is finished.
  struct alignas(64) Share {
    std::atomic<std::uint64_t> grains{0};
  };
  std::unique_ptr<Share[]> shares_;

  // The published job. Written by the submitter before `claim_` announces its generation (release)
  // and read by a thread only after it has claimed a piece of that generation (acquire); the job
  // cannot finish, and so cannot be replaced, while a claimed piece is running.
  RangeFn job_fn_;
  std::size_t job_n_ = 0;
  std::size_t job_grain_ = 1;     // indices per grain
  std::size_t job_n_grains_ = 0;  // grains in [0, n)
  std::size_t job_pieces_ = 0;
  Schedule job_schedule_ = Schedule::kStatic;
  std::uint32_t generation_ = 0;  // submitter only
  // The job's first exception: written by the one thread that sets `job_failed_` first, before it
  // counts its piece in `done_`; read by the submitter after every piece is counted.
  std::exception_ptr job_error_;

  // (generation << 32) | pieces of that job not yet claimed. Pieces are claimed from the top down.
  alignas(64) std::atomic<std::uint64_t> claim_{0};
  alignas(64) std::atomic<std::uint32_t> done_{0};  // pieces of the current job finished (a
                                                    // piece counts once its thread has run all
                                                    // it took, its own grains and stolen ones)
  alignas(64) std::atomic<bool> busy_{false};       // a job is being submitted or run
  std::atomic<bool> job_failed_{false};             // a piece of the current job threw
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
