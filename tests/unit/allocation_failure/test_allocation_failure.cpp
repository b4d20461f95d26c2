// Errors stay values under memory pressure: with the allocation limiter of this executable
// (allocation_limit.hpp), an allocation that fails inside a CPU operator, inside a kernel's scratch
// (on the caller or a pool worker) or anywhere in a session's prefill comes back as
// kCapacityExhausted, never as an exception; the backend, its pool and the session stay usable,
// and a session whose prefill failed keeps its position and then computes the logits of a session
// that never failed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "allocation_limit.hpp"
#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/runtime/load_model.hpp"
#include "shared_data.hpp"

namespace {

using eredu::ErrorCode;
using eredu::cpu::CpuBackend;
using eredu::cpu::CpuBackendOptions;
using eredu::cpu::CpuTensor;
using eredu::cpu::CpuWeight;
using eredu::testing::counted_allocation_size;
using eredu::testing::ScopedAllocationLimit;

// Deterministic, smooth test values (not the code under test).
float value_at(std::size_t i, float scale) {
  return scale * std::sin(0.37F * static_cast<float>(i) + 0.1F);
}

CpuTensor make_input(std::size_t rows, std::size_t cols, float scale) {
  CpuTensor t{rows, cols, eredu::cpu::ActivationValues(rows * cols)};
  for (std::size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = value_at(i, scale);
  return t;
}

CpuWeight make_f32_weight(std::size_t rows, std::size_t cols) {
  std::vector<float> values(rows * cols);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = value_at(i + 11, 0.25F);
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  CpuWeight w;
  w.name = "w";
  w.dtype = eredu::DType::kF32;
  w.shape = {rows, cols};
  w.hold(std::move(bytes));
  return w;
}

// y = x W^T in double, independently of the kernels.
std::vector<double> reference_linear(const CpuTensor& x, const CpuWeight& w) {
  const auto* wf = static_cast<const float*>(w.data());
  std::vector<double> y(x.rows * w.rows());
  for (std::size_t t = 0; t < x.rows; ++t) {
    for (std::size_t o = 0; o < w.rows(); ++o) {
      double sum = 0.0;
      for (std::size_t i = 0; i < x.cols; ++i)
        sum += static_cast<double>(x.data[t * x.cols + i]) * wf[o * x.cols + i];
      y[t * w.rows() + o] = sum;
    }
  }
  return y;
}

void expect_linear_matches_reference(const CpuBackend& backend, const CpuTensor& x,
                                     const CpuWeight& w) {
  auto y = backend.linear(x, w);
  ASSERT_TRUE(y.has_value()) << y.error().what();
  const std::vector<double> expected = reference_linear(x, w);
  ASSERT_EQ(y->data.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(y->data[i], expected[i], 1e-4) << "element " << i;
}

// Fails each allocation `call` makes, one per call (measured by an unlimited run first), and
// expects every failing call to return kCapacityExhausted, not to throw. `prepare` runs, unlimited,
// before each call (e.g. to build its input) and `after` after each failed one (e.g. to check
// state). Returns the number of allocations swept.
template <typename Prepare, typename Call, typename After>
std::size_t expect_each_allocation_failure_is_capacity_exhausted(Prepare prepare, Call call,
                                                                 After after) {
  // Unlimited runs first: the kernels' per-thread scratch grows once and is then reused, so the
  // measured run allocates exactly what every later run does (the scratch has its own test). A
  // pool worker grows its scratch only in a run where it claims a piece, and a busy machine can
  // leave it none (the caller then runs every piece): after one warm-up the worker's first piece
  // could fall in the measured run and never again, and the sweep then found its allocation gone
  // (about 1 run in 120 on a loaded 2-core guest). Eight warm-ups make that vanishingly rare.
  constexpr int kWarmUps = 8;
  for (int i = 0; i < kWarmUps; ++i) {
    prepare();
    auto warm_up = call();
    EXPECT_TRUE(warm_up.has_value()) << warm_up.error().what();
  }
  prepare();
  eredu::testing::start_counting_allocations();
  {
    auto measured = call();
    EXPECT_TRUE(measured.has_value()) << measured.error().what();
  }
  const std::size_t requests = eredu::testing::stop_counting_allocations();
  EXPECT_LT(requests, eredu::testing::kMaxCountedSizes);
  std::vector<std::size_t> sizes(requests);
  for (std::size_t i = 0; i < requests; ++i)
    sizes[i] = counted_allocation_size(i);
  std::size_t before = 0;  // bytes of the requests before request i
  for (std::size_t i = 0; i < requests; ++i) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << i << " of " << requests << " ("
                                      << sizes[i] << " bytes)");
    bool fired = false;
    bool threw = false;
    prepare();
    {
      ScopedAllocationLimit limit(before);
      try {
        auto result = call();
        fired = !eredu::testing::allocation_limit_armed();
        eredu::testing::disarm_allocation_limit();
        EXPECT_TRUE(fired) << "the allocation sequence changed: nothing failed";
        if (fired) {
          EXPECT_FALSE(result.has_value());
          if (!result.has_value()) {
            EXPECT_EQ(result.error().code(), ErrorCode::kCapacityExhausted)
                << result.error().what();
          }
        }
      } catch (...) {
        threw = true;
      }
    }
    EXPECT_FALSE(threw) << "an exception escaped instead of an error value";
    after();
    before += sizes[i];
  }
  return requests;
}

TEST(AllocationLimit, FailsTheFirstRequestPastTheBudgetAndThenDisarms) {
  EREDU_REQUIRE_ALLOCATION_LIMIT();
  const std::size_t failures = eredu::testing::allocation_failures();
  void* first = nullptr;
  bool threw = false;
  {
    ScopedAllocationLimit limit(100);
    first = ::operator new(60);  // 60 of 100 bytes
    try {
      ::operator delete(::operator new(60));  // 120 > 100: fails
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    EXPECT_FALSE(eredu::testing::allocation_limit_armed());
    ::operator delete(::operator new(1000));  // disarmed: succeeds
  }
  ::operator delete(first);
  EXPECT_TRUE(threw);
  EXPECT_EQ(eredu::testing::allocation_failures(), failures + 1);
  ScopedAllocationLimit limit(0);
  EXPECT_EQ(::operator new(8, std::nothrow), nullptr);  // the nothrow form returns null
}

TEST(CpuOpsUnderAllocationLimit,
     LinearAddRotaryAndAttentionReturnCapacityExhaustedForEachAllocation) {
  EREDU_REQUIRE_ALLOCATION_LIMIT();
  const CpuBackend backend(CpuBackendOptions{2});
  const CpuTensor x = make_input(5, 64, 1.0F);
  const CpuWeight w = make_f32_weight(96, 64);
  const auto nothing = [] {};
  // After each failure the backend (and its pool) still computes a correct linear.
  const auto still_correct = [&] { expect_linear_matches_reference(backend, x, w); };

  EXPECT_GE(expect_each_allocation_failure_is_capacity_exhausted(
                nothing, [&] { return backend.linear(x, w); }, still_correct),
            1U);  // the output
  const CpuTensor b = make_input(5, 64, 0.5F);
  EXPECT_GE(expect_each_allocation_failure_is_capacity_exhausted(
                nothing, [&] { return backend.add(x, b); }, still_correct),
            1U);
  const eredu::RotarySpec rope{4, 16, 16, 10000.0F, 1.0F, eredu::RotaryLayout::kInterleaved};
  EXPECT_GE(expect_each_allocation_failure_is_capacity_exhausted(
                nothing, [&] { return backend.rotary(x, rope, 3); }, still_correct),
            2U);  // the copy of x and the positions

  eredu::KvCacheSpec geometry{1, 2, 16, 64};
  auto cache = backend.create_kv_cache(geometry);
  ASSERT_TRUE(cache.has_value()) << cache.error().what();
  const CpuTensor q = make_input(5, 64, 1.0F);
  const CpuTensor kv = make_input(5, 32, 0.7F);
  const eredu::AttentionSpec spec{0, 4, 2, 16, 0.25F};
  EXPECT_GE(
      expect_each_allocation_failure_is_capacity_exhausted(
          nothing, [&] { return backend.attention(q, kv, kv, *cache, spec, 7); }, still_correct),
      2U);  // the positions and the output
}

TEST(CpuOpsUnderAllocationLimit, AttentionScratchFailureOnAnyThreadIsCapacityExhausted) {
  EREDU_REQUIRE_ALLOCATION_LIMIT();
  // Every thread that takes part is new, so its per-thread attention scratch is still empty: a
  // fresh backend has fresh pool workers, and the operator is called from a fresh thread. The
  // first request after the operator's own two buffers is therefore a kernel's scratch, on
  // whichever thread (caller or worker) runs a piece first.
  const CpuBackend backend(CpuBackendOptions{3});
  constexpr std::uint32_t kFirst = 3000;
  eredu::KvCacheSpec geometry{1, 2, 16, 4096};
  auto cache = backend.create_kv_cache(geometry);
  ASSERT_TRUE(cache.has_value()) << cache.error().what();
  const std::size_t n = 8;
  const CpuTensor q = make_input(n, 64, 1.0F);
  const CpuTensor kv = make_input(n, 32, 0.7F);
  const eredu::AttentionSpec spec{0, 4, 2, 16, 0.25F};
  const std::size_t own_buffers = n * sizeof(std::int32_t) + n * 64 * sizeof(float);
  bool threw = false;
  bool fired = false;
  std::optional<eredu::Error> error;
  std::thread caller([&] {
    ScopedAllocationLimit limit(own_buffers);
    try {
      auto out = backend.attention(q, kv, kv, *cache, spec, kFirst);
      fired = !eredu::testing::allocation_limit_armed();
      eredu::testing::disarm_allocation_limit();
      if (!out.has_value()) error = out.error();
    } catch (...) {
      threw = true;
    }
  });
  caller.join();
  EXPECT_FALSE(threw) << "an exception escaped instead of an error value";
  EXPECT_TRUE(fired) << "no scratch allocation failed";
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code(), ErrorCode::kCapacityExhausted) << error->what();
  EXPECT_NE(error->message().find("cpu attention"), std::string::npos) << error->what();
  // The pool runs the next jobs: the same attention now succeeds, and a linear is still correct.
  auto again = backend.attention(q, kv, kv, *cache, spec, kFirst);
  ASSERT_TRUE(again.has_value()) << again.error().what();
  for (float v : again->data)
    ASSERT_TRUE(std::isfinite(v));
  expect_linear_matches_reference(backend, make_input(5, 64, 1.0F), make_f32_weight(96, 64));
}

// ----- a session on stories260K -----

const std::vector<std::uint32_t> kHead = {1, 403, 407};        // prefilled before the failures
const std::vector<std::uint32_t> kRest = {261, 378, 356, 30};  // the prefill that fails

std::uint32_t argmax(const std::vector<float>& v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[best]) best = i;
  return static_cast<std::uint32_t>(best);
}

// Prefills kRest (after kHead), then decodes `steps` greedy tokens, calling before_step(token)
// before each; returns the prefill's and every step's logits.
template <typename Runtime, typename BeforeStep>
std::vector<std::vector<float>> continue_from_head(Runtime& runtime, int steps,
                                                   BeforeStep before_step) {
  std::vector<std::vector<float>> out;
  auto sub = runtime.prefill(std::vector<std::uint32_t>(kRest));
  EXPECT_TRUE(sub.has_value()) << sub.error().what();
  if (!sub.has_value()) return out;
  auto logits = runtime.observe_output(sub->output);
  EXPECT_TRUE(logits.has_value());
  out.push_back(*logits);
  for (int i = 0; i < steps; ++i) {
    const std::uint32_t token = argmax(out.back());
    before_step(token);
    auto step = runtime.decode(std::uint32_t{token});
    EXPECT_TRUE(step.has_value()) << step.error().what();
    if (!step.has_value()) return out;
    auto next = runtime.observe_output(step->output);
    EXPECT_TRUE(next.has_value());
    out.push_back(*next);
  }
  return out;
}

void expect_failed_prefills_leave_the_session_as_it_was(std::size_t threads) {
  EREDU_REQUIRE_ALLOCATION_LIMIT();
  const auto model_path = eredu::testing::models_dir() / "stories260K.gguf";
  EREDU_REQUIRE_SHARED_PATH(model_path);
  constexpr int kSteps = 6;

  // Reference: a session that never failed, making the same calls.
  std::vector<std::vector<float>> expected;
  {
    auto fresh = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{threads}), model_path,
                                            eredu::cpu::CpuLoadOptions{});
    ASSERT_TRUE(fresh.has_value()) << fresh.error().what();
    ASSERT_TRUE(fresh->prefill(std::vector<std::uint32_t>(kHead)).has_value());
    expected = continue_from_head(*fresh, kSteps, [](std::uint32_t) {});
    ASSERT_EQ(expected.size(), static_cast<std::size_t>(kSteps + 1));
  }

  auto runtime = eredu::runtime::load_model(CpuBackend(CpuBackendOptions{threads}), model_path,
                                            eredu::cpu::CpuLoadOptions{});
  ASSERT_TRUE(runtime.has_value()) << runtime.error().what();
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kHead)).has_value());
  const auto head = static_cast<std::uint32_t>(kHead.size());
  ASSERT_EQ(runtime->session().checkpoint(), head);
  // Warm the kernels' per-thread scratch, so that the measured run allocates what later runs do.
  ASSERT_TRUE(runtime->prefill(std::vector<std::uint32_t>(kRest)).has_value());
  ASSERT_TRUE(runtime->session_mut().truncate(head).has_value());

  std::vector<std::uint32_t> input;
  const std::size_t swept = expect_each_allocation_failure_is_capacity_exhausted(
      [&] { input = kRest; },  // the call's input, built unlimited
      [&] {
        auto sub = runtime->prefill(std::move(input));
        if (sub.has_value()) {
          EXPECT_TRUE(runtime->session_mut().truncate(head).has_value());
        }
        return sub;
      },
      [&] { EXPECT_EQ(runtime->session().checkpoint(), head); });  // the position is kept
  EXPECT_GE(swept, 10U);  // embedding, every layer's operators, logits
  ::testing::Test::RecordProperty("allocations_swept", static_cast<int>(swept));
  ASSERT_EQ(runtime->session().checkpoint(), head);

  // With the limit lifted, the session continues exactly like the one that never failed, though
  // before each step a decode (and the observation of its logits) fails at each allocation.
  const auto failing_decodes = [&](std::uint32_t token) {
    const std::uint32_t position = runtime->session().checkpoint();
    const std::size_t decode_swept = expect_each_allocation_failure_is_capacity_exhausted(
        [] {},
        [&]() -> eredu::Result<std::vector<float>> {
          auto step = runtime->decode(std::uint32_t{token});
          if (!step.has_value()) return eredu::fail(std::move(step).error());
          EXPECT_TRUE(runtime->session_mut().truncate(position).has_value());
          return runtime->observe_output(step->output);
        },
        [&] { EXPECT_EQ(runtime->session().checkpoint(), position); });
    EXPECT_GE(decode_swept, 10U);
  };
  const std::vector<std::vector<float>> got = continue_from_head(*runtime, kSteps, failing_decodes);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], expected[i]) << "step " << i;
}

TEST(CpuSessionUnderAllocationLimit,
     PrefillAndDecodeFailingAtEachAllocationKeepThePositionThenMatchAFreshSessionSingleThread) {
  expect_failed_prefills_leave_the_session_as_it_was(1);
}

TEST(CpuSessionUnderAllocationLimit,
     PrefillAndDecodeFailingAtEachAllocationKeepThePositionThenMatchAFreshSessionOnAPool) {
  expect_failed_prefills_leave_the_session_as_it_was(2);
}

}  // namespace
