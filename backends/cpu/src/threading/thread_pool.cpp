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
constexpr std::uint64_t kCountMask = 0xFFFFFFFFULL;
// Pieces per job stay below 2^32 so that they fit the claim word.
constexpr std::size_t kMaxPieces = std::size_t{1} << 31;

constexpr std::uint32_t generation_of(std::uint64_t claim) noexcept {
  return static_cast<std::uint32_t>(claim >> 32);
}

// Runs work() unless the job has already failed (its result is discarded anyway); keeps the first
// exception a piece or grain of the job throws in `error`.
template <typename Work>
void run_caught(std::atomic<bool>& failed, std::exception_ptr& error, Work&& work) noexcept {
  if (failed.load(std::memory_order_relaxed)) return;
  try {
    work();
  } catch (...) {
    if (!failed.exchange(true, std::memory_order_relaxed)) error = std::current_exception();
  }
}
}  // namespace

ThreadPool::ThreadPool(std::size_t n_threads) {
  const std::size_t workers = n_threads > 1 ? n_threads - 1 : 0;
  shares_ = std::make_unique<Share[]>(workers + 1);
  workers_.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) {
    workers_.emplace_back([this] { worker_main(); });
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  if (++generation_ == 0) ++generation_;
  claim_.store(std::uint64_t{generation_} << 32, std::memory_order_release);
  claim_.notify_all();
  for (std::thread& t : workers_)
    t.join();
}

void ThreadPool::run_piece(std::size_t piece) {
  if (job_schedule_ == Schedule::kStealing) {
    run_share_front(piece);
    return;
  }
  if (job_schedule_ == Schedule::kStatic) {
    const std::size_t g0 = job_n_grains_ * piece / job_pieces_;
    const std::size_t g1 = job_n_grains_ * (piece + 1) / job_pieces_;
    if (g0 < g1) job_fn_(g0 * job_grain_, std::min(job_n_, g1 * job_grain_));
    return;
  }
  job_fn_(piece * job_grain_, std::min(job_n_, (piece + 1) * job_grain_));
}

void ThreadPool::run_piece_caught(std::size_t piece) noexcept {
  run_caught(job_failed_, job_error_, [&] { run_piece(piece); });
}

void ThreadPool::run_grain_caught(std::size_t grain) noexcept {
  run_caught(job_failed_, job_error_,
             [&] { job_fn_(grain * job_grain_, std::min(job_n_, (grain + 1) * job_grain_)); });
}

void ThreadPool::run_share_front(std::size_t piece) {
  std::atomic<std::uint64_t>& grains = shares_[piece].grains;
  std::uint64_t span = grains.load(std::memory_order_relaxed);
  while ((span & kCountMask) < (span >> 32)) {
    if (grains.compare_exchange_weak(span, span + 1, std::memory_order_relaxed)) {
      run_grain_caught(static_cast<std::size_t>(span & kCountMask));
      span = grains.load(std::memory_order_relaxed);
    }
  }
}

void ThreadPool::steal_from_shares(std::size_t own_piece) {
  // Once a share is empty no grain is ever added to it, so one pass over the others takes every
  // grain left. Starting after our own share spreads the thieves of a larger pool.
  for (std::size_t k = 1; k < job_pieces_; ++k) {
    std::atomic<std::uint64_t>& grains = shares_[(own_piece + k) % job_pieces_].grains;
    std::uint64_t span = grains.load(std::memory_order_relaxed);
    while ((span & kCountMask) < (span >> 32)) {
      const std::uint64_t hi = (span >> 32) - 1;
      if (grains.compare_exchange_weak(span, (hi << 32) | (span & kCountMask),
                                       std::memory_order_relaxed)) {
        run_grain_caught(static_cast<std::size_t>(hi));
        span = grains.load(std::memory_order_relaxed);
      }
    }
  }
}

void ThreadPool::run_pieces(std::uint32_t generation) {
  std::uint64_t claim = claim_.load(std::memory_order_acquire);
  std::uint32_t claimed = 0;  // pieces this thread took and has not counted yet
  std::size_t last_piece = 0;
  for (;;) {
    if (generation_of(claim) != generation || (claim & kCountMask) == 0) break;
    if (!claim_.compare_exchange_weak(claim, claim - 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      continue;  // `claim` now holds the current word
    }
    last_piece = static_cast<std::size_t>((claim & kCountMask) - 1);
    ++claimed;
    run_piece_caught(last_piece);
    claim = claim_.load(std::memory_order_acquire);
  }
  if (claimed == 0) return;  // this thread never held the job, so it must not touch it
  // Our pieces are not counted yet, so the job cannot finish while we steal from it.
  if (job_schedule_ == Schedule::kStealing) steal_from_shares(last_piece);
  // Read before counting: once every piece is counted the job may be replaced.
  const std::size_t pieces = job_pieces_;
  if (done_.fetch_add(claimed, std::memory_order_acq_rel) + claimed == pieces) done_.notify_one();
}

void ThreadPool::worker_main() {
  std::uint32_t seen = 0;
  for (;;) {
    std::uint64_t claim = claim_.load(std::memory_order_acquire);
    for (int spin = 0; generation_of(claim) == seen && spin < kSpinIterations; ++spin) {
      cpu_relax();
      claim = claim_.load(std::memory_order_acquire);
    }
    for (int y = 0; generation_of(claim) == seen && y < kYieldIterations; ++y) {
      std::this_thread::yield();
      claim = claim_.load(std::memory_order_acquire);
    }
    while (generation_of(claim) == seen) {
      claim_.wait(claim, std::memory_order_acquire);
      claim = claim_.load(std::memory_order_acquire);
    }
    if (stop_.load(std::memory_order_relaxed)) return;
    seen = generation_of(claim);
    run_pieces(seen);
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
  std::size_t n_grains = (n + grain - 1) / grain;
  // Chunked pieces and stolen grains are counted in 32 bits (the claim word, a share's halves).
  if (schedule != Schedule::kStatic && n_grains > kMaxPieces) {
    grain = (n + kMaxPieces - 1) / kMaxPieces;
    n_grains = (n + grain - 1) / grain;
  }
  const std::size_t pieces = schedule == Schedule::kChunked ? n_grains : std::min(size(), n_grains);
  if (schedule == Schedule::kStealing) {
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::uint64_t g0 = n_grains * p / pieces;
      const std::uint64_t g1 = n_grains * (p + 1) / pieces;
      shares_[p].grains.store((g1 << 32) | g0, std::memory_order_relaxed);
    }
  }
  job_fn_ = fn;
  job_n_ = n;
  job_grain_ = grain;
  job_n_grains_ = n_grains;
  job_pieces_ = pieces;
  job_schedule_ = schedule;
  job_failed_.store(false, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  if (++generation_ == 0) ++generation_;
  claim_.store((std::uint64_t{generation_} << 32) | pieces, std::memory_order_release);
  claim_.notify_all();

  run_pieces(generation_);

  // Only pieces that other threads are running are left; wait for them.
  std::uint32_t done = done_.load(std::memory_order_acquire);
  for (int spin = 0; done != pieces && spin < kSpinIterations; ++spin) {
    cpu_relax();
    done = done_.load(std::memory_order_acquire);
  }
  for (int y = 0; done != pieces && y < kYieldIterations; ++y) {
    std::this_thread::yield();
    done = done_.load(std::memory_order_acquire);
  }
  while (done != pieces) {
    done_.wait(done, std::memory_order_acquire);
    done = done_.load(std::memory_order_acquire);
  }
  // Every piece is counted, so no thread touches the job any more: take its error, if any, before
  // the pool is released to the next submitter.
  std::exception_ptr error = std::move(job_error_);
  job_error_ = nullptr;
  busy_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

}  // namespace eredu::cpu
