// ThreadPool: coverage of every index exactly once, caller participation, inline fallbacks,
// back-to-back jobs, shutdown with sleeping workers, jobs that throw on a worker thread, and the
// stealing schedule's hand-over of a slow share's grains.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "eredu/backends/cpu/thread_pool.hpp"

namespace {

using eredu::cpu::Schedule;
using eredu::cpu::ThreadPool;

// Runs parallel_for and returns how many times each index was visited.
std::vector<int> visit_counts(ThreadPool& pool, std::size_t n, std::size_t grain,
                              Schedule schedule) {
  std::vector<std::atomic<int>> counts(n);
  auto fn = [&](std::size_t begin, std::size_t end) {
    EXPECT_LE(begin, end);
    EXPECT_LE(end, n);
    for (std::size_t i = begin; i < end; ++i)
      counts[i].fetch_add(1);
  };
  pool.parallel_for(n, fn, grain, schedule);
  std::vector<int> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = counts[i].load();
  return out;
}

TEST(ThreadPool, EveryIndexIsVisitedExactlyOnceForAnySizeGrainScheduleAndThreadCount) {
  for (std::size_t threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (Schedule schedule : {Schedule::kStatic, Schedule::kChunked, Schedule::kStealing}) {
      for (std::size_t n : {0, 1, 2, 5, 64, 1000, 1023}) {
        for (std::size_t grain : {1, 3, 16}) {
          const std::vector<int> counts = visit_counts(pool, n, grain, schedule);
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(counts[i], 1)
                << "index " << i << " n " << n << " grain " << grain << " threads " << threads;
          }
        }
      }
    }
  }
}

// Runs parallel_for and returns the [begin, end) of every call fn received, in no set order.
std::vector<std::pair<std::size_t, std::size_t>> calls_of(ThreadPool& pool, std::size_t n,
                                                          std::size_t grain, Schedule schedule) {
  std::mutex m;
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  auto fn = [&](std::size_t b, std::size_t e) {
    std::lock_guard<std::mutex> lock(m);
    calls.emplace_back(b, e);
  };
  pool.parallel_for(n, fn, grain, schedule);
  return calls;
}

TEST(ThreadPool, StaticPiecesStartOnGrainBoundaries) {
  ThreadPool pool(3);
  const auto pieces = calls_of(pool, 100, 8, Schedule::kStatic);
  ASSERT_FALSE(pieces.empty());
  for (const auto& [b, e] : pieces) {
    EXPECT_EQ(b % 8, 0U);
    EXPECT_TRUE(e % 8 == 0 || e == 100);
  }
}

TEST(ThreadPool, StealingRunsOneGrainPerCallOnGrainBoundaries) {
  ThreadPool pool(3);
  const auto calls = calls_of(pool, 100, 8, Schedule::kStealing);
  ASSERT_EQ(calls.size(), 13U);  // ceil(100 / 8) grains
  for (const auto& [b, e] : calls) {
    EXPECT_EQ(b % 8, 0U);
    EXPECT_EQ(e, std::min<std::size_t>(b + 8, 100));
  }
}

TEST(ThreadPool, StealingHandsASlowSharesLastGrainsToTheThreadThatFinishedFirst) {
  // Two shares of 32 grains: the first grains of each wait until both threads have entered the
  // job (so each thread owns one share), then share 0's grains are slow and share 1's fast. The
  // thread that finishes share 1 must take share 0's grains from its back, so share 0's last grain
  // runs on a different thread from its first.
  ThreadPool pool(2);
  std::mutex m;
  std::condition_variable cv;
  std::set<std::thread::id> entered;
  std::vector<std::thread::id> ran_by(64);
  auto fn = [&](std::size_t b, std::size_t) {
    {
      std::unique_lock<std::mutex> lock(m);
      entered.insert(std::this_thread::get_id());
      cv.notify_all();
      if (b == 0 || b == 32)
        cv.wait_for(lock, std::chrono::seconds(20), [&] { return entered.size() >= 2; });
      ran_by[b] = std::this_thread::get_id();
    }
    if (b < 32) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  pool.parallel_for(64, fn, 1, Schedule::kStealing);
  if (entered.size() < 2) GTEST_SKIP() << "the worker never started (an oversubscribed machine)";
  EXPECT_NE(ran_by[31], ran_by[0]) << "share 0's last grain was not stolen";
  EXPECT_EQ(ran_by[63], ran_by[32]) << "share 1's own thread ran it front to back";
}

TEST(ThreadPool, CallerThreadTakesPartAndWorkersRunElsewhere) {
  // Each of the three pieces holds its thread until three distinct threads have entered one (or a
  // generous timeout passes), so the caller cannot take them all: the workers must claim two.
  ThreadPool pool(3);
  std::mutex m;
  std::condition_variable cv;
  std::set<std::thread::id> ids;
  auto fn = [&](std::size_t, std::size_t) {
    std::unique_lock<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return ids.size() >= 3; });
  };
  pool.parallel_for(3, fn);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1U);
  EXPECT_EQ(ids.size(), 3U);  // static schedule: one piece per thread
}

TEST(ThreadPool, NestedCallRunsInlineInsteadOfDeadlocking) {
  ThreadPool pool(2);
  std::atomic<int> inner_total{0};
  auto outer = [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      auto inner = [&](std::size_t ib, std::size_t ie) {
        inner_total.fetch_add(static_cast<int>(ie - ib));
      };
      pool.parallel_for(10, inner);
    }
  };
  pool.parallel_for(4, outer);
  EXPECT_EQ(inner_total.load(), 40);
}

TEST(ThreadPool, ManyBackToBackJobsAllComplete) {
  ThreadPool pool(3);
  std::vector<std::atomic<long>> sums(64);
  for (int job = 0; job < 500; ++job) {
    auto fn = [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i)
        sums[i].fetch_add(job);
    };
    pool.parallel_for(sums.size(), fn);
  }
  for (const auto& s : sums)
    EXPECT_EQ(s.load(), 499L * 500L / 2);
}

TEST(ThreadPool, JobAfterWorkersFellAsleepStillRunsAndDestructionJoins) {
  auto pool = std::make_unique<ThreadPool>(3);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the spin phase
  const std::vector<int> counts = visit_counts(*pool, 30, 1, Schedule::kStatic);
  for (int c : counts)
    EXPECT_EQ(c, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  pool.reset();  // must not hang on sleeping workers
  SUCCEED();
}

TEST(ThreadPool, ZeroThreadsMeansTheCallerAlone) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.size(), 1U);
  std::thread::id ran_on;
  auto fn = [&](std::size_t, std::size_t) { ran_on = std::this_thread::get_id(); };
  pool.parallel_for(5, fn);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ThreadPool, AcceptsALambdaPassedDirectly) {
  ThreadPool pool(2);
  std::atomic<std::size_t> total{0};
  pool.parallel_for(100, [&](std::size_t b, std::size_t e) { total.fetch_add(e - b); });
  EXPECT_EQ(total.load(), 100U);
}

TEST(ThreadPool, NullPoolHelperRunsTheWholeRangeInline) {
  std::size_t seen_begin = 99;
  std::size_t seen_end = 0;
  auto fn = [&](std::size_t b, std::size_t e) {
    seen_begin = b;
    seen_end = e;
  };
  eredu::cpu::parallel_for(nullptr, 17, fn);
  EXPECT_EQ(seen_begin, 0U);
  EXPECT_EQ(seen_end, 17U);
}

// Runs a three-piece job on a three-thread pool in which every piece run by a worker (not the
// caller) throws `thrown`; each piece waits until all three threads have entered one, so the
// workers do claim pieces. Returns the ids of the threads that ran a piece.
template <typename Exception>
std::set<std::thread::id> run_job_failing_on_workers(ThreadPool& pool, const Exception& thrown) {
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex m;
  std::condition_variable cv;
  std::set<std::thread::id> ids;
  auto fn = [&](std::size_t, std::size_t) {
    {
      std::unique_lock<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(20), [&] { return ids.size() >= 3; });
    }
    if (std::this_thread::get_id() != caller) throw thrown;
  };
  EXPECT_THROW(pool.parallel_for(3, fn), Exception);
  return ids;
}

TEST(ThreadPool, ExceptionThrownOnAWorkerReachesTheCallerAndThePoolRunsTheNextJob) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    const std::set<std::thread::id> ids =
        run_job_failing_on_workers(pool, std::runtime_error("piece failed"));
    EXPECT_EQ(ids.size(), 3U);  // the workers ran (and threw from) two of the pieces
    // The pool is free again and every index of the next jobs is still visited exactly once.
    for (Schedule schedule : {Schedule::kStatic, Schedule::kChunked, Schedule::kStealing}) {
      const std::vector<int> counts = visit_counts(pool, 1000, 7, schedule);
      for (std::size_t i = 0; i < counts.size(); ++i)
        ASSERT_EQ(counts[i], 1) << "index " << i << " round " << round;
    }
  }
}

TEST(ThreadPool, AllocationFailureOnAWorkerIsRethrownAsBadAlloc) {
  ThreadPool pool(3);
  const std::set<std::thread::id> ids = run_job_failing_on_workers(pool, std::bad_alloc());
  EXPECT_EQ(ids.size(), 3U);
  const std::vector<int> counts = visit_counts(pool, 64, 1, Schedule::kChunked);
  for (int c : counts)
    EXPECT_EQ(c, 1);
}

TEST(ThreadPool, ExceptionOnTheCallersOwnPieceIsRethrownAfterTheWorkersFinish) {
  ThreadPool pool(3);
  std::atomic<int> finished{0};
  const std::thread::id caller = std::this_thread::get_id();
  auto fn = [&](std::size_t, std::size_t) {
    if (std::this_thread::get_id() == caller) throw std::runtime_error("caller piece failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.fetch_add(1);
  };
  // Pieces the workers started are finished (never abandoned mid-run) before the call returns.
  std::atomic<int> started_elsewhere{0};
  auto counting = [&](std::size_t b, std::size_t e) {
    if (std::this_thread::get_id() != caller) started_elsewhere.fetch_add(1);
    fn(b, e);
  };
  EXPECT_THROW(pool.parallel_for(64, counting, 1, Schedule::kChunked), std::runtime_error);
  EXPECT_EQ(finished.load(), started_elsewhere.load());
  const std::vector<int> counts = visit_counts(pool, 100, 3, Schedule::kStatic);
  for (int c : counts)
    EXPECT_EQ(c, 1);
}

}  // namespace
