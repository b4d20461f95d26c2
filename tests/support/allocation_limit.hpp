#pragma once
// A test-only allocation limiter. The test executable that links allocation_limit.cpp (only
// tests/unit/allocation_failure) replaces the global operator new / delete with versions that
// count the bytes requested while the limiter is armed and fail the first request that takes the
// count past the armed budget: std::bad_alloc from the throwing forms, nullptr from the nothrow
// forms. The limiter then disarms itself, so one failure is injected per arming and the code
// under test can still build its error message, as it would when one large buffer does not fit.
//
// AddressSanitizer replaces operator new itself; under it the replacement is compiled out,
// kAllocationLimitAvailable is false and the tests skip (EREDU_REQUIRE_ALLOCATION_LIMIT).

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EREDU_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EREDU_TEST_ASAN 1
#endif

namespace eredu::testing {

#if defined(EREDU_TEST_ASAN)
inline constexpr bool kAllocationLimitAvailable = false;
#else
inline constexpr bool kAllocationLimitAvailable = true;
#endif

// Arms the limiter: of the bytes requested from now on, the request that would bring the total
// past `budget_bytes` fails (budget 0: the first request fails).
void arm_allocation_limit(std::size_t budget_bytes) noexcept;
// Disarms it without a failure.
void disarm_allocation_limit() noexcept;
// True while armed (no request has failed since the last arming).
bool allocation_limit_armed() noexcept;
// Requests failed since the program started.
std::size_t allocation_failures() noexcept;

// Counts requests (and their bytes) from now on, without failing any: a measuring run. The sizes
// of the first kMaxCountedSizes requests are kept, in order, so that a test can then fail each
// request in turn: arming with the sum of the sizes before request i fails request i. A zero-byte
// request counts as one byte.
inline constexpr std::size_t kMaxCountedSizes = 1 << 16;
void start_counting_allocations() noexcept;
// Stops counting; returns the number of requests counted.
std::size_t stop_counting_allocations() noexcept;
// The size of counted request `i` (i < min(count, kMaxCountedSizes)).
std::size_t counted_allocation_size(std::size_t i) noexcept;

// Disarms on scope exit, so a failed assertion cannot leave the limiter armed.
class ScopedAllocationLimit {
 public:
  explicit ScopedAllocationLimit(std::size_t budget_bytes) noexcept {
    arm_allocation_limit(budget_bytes);
  }
  ~ScopedAllocationLimit() { disarm_allocation_limit(); }
  ScopedAllocationLimit(const ScopedAllocationLimit&) = delete;
  ScopedAllocationLimit& operator=(const ScopedAllocationLimit&) = delete;
};

}  // namespace eredu::testing

#define EREDU_REQUIRE_ALLOCATION_LIMIT()                                                    \
  do {                                                                                      \
    if (!::eredu::testing::kAllocationLimitAvailable) {                                     \
      GTEST_SKIP() << "the allocation limiter replaces operator new, which conflicts with " \
                      "AddressSanitizer's own; skipped under the sanitize pass";            \
    }                                                                                       \
  } while (false)
