// The replaceable global operator new / delete of this test executable (see allocation_limit.hpp).
// Only lock-free atomics are touched on the allocation path: it must not allocate itself.
#include "allocation_limit.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace eredu::testing {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_budget{0};
std::atomic<std::size_t> g_used{0};
std::atomic<std::size_t> g_requests{0};
std::atomic<std::size_t> g_failures{0};
std::atomic<std::size_t> g_sizes[kMaxCountedSizes];

}  // namespace

void arm_allocation_limit(std::size_t budget_bytes) noexcept {
  g_budget.store(budget_bytes);
  g_used.store(0);
  g_armed.store(true);
}

void disarm_allocation_limit() noexcept {
  g_armed.store(false);
}

bool allocation_limit_armed() noexcept {
  return g_armed.load();
}

std::size_t allocation_failures() noexcept {
  return g_failures.load();
}

void start_counting_allocations() noexcept {
  g_requests.store(0);
  g_counting.store(true);
}

std::size_t stop_counting_allocations() noexcept {
  g_counting.store(false);
  return g_requests.load();
}

std::size_t counted_allocation_size(std::size_t i) noexcept {
  return i < kMaxCountedSizes ? g_sizes[i].load() : 0;
}

namespace {

// False when this request must fail. A zero-byte request counts as one byte, so that every
// request can be made to fail.
[[maybe_unused]] bool admit(std::size_t requested) noexcept {
  const std::size_t size = requested == 0 ? 1 : requested;
  if (g_counting.load(std::memory_order_relaxed)) {
    const std::size_t i = g_requests.fetch_add(1, std::memory_order_relaxed);
    if (i < kMaxCountedSizes) g_sizes[i].store(size, std::memory_order_relaxed);
    return true;
  }
  if (!g_armed.load(std::memory_order_relaxed)) return true;
  const std::size_t used = g_used.fetch_add(size, std::memory_order_relaxed) + size;
  if (used <= g_budget.load(std::memory_order_relaxed)) return true;
  bool armed = true;
  if (!g_armed.compare_exchange_strong(armed, false)) return true;  // another request failed first
  g_failures.fetch_add(1);
  return false;
}

}  // namespace
}  // namespace eredu::testing

#if !defined(EREDU_TEST_ASAN)

namespace {

void* allocate(std::size_t size) noexcept {
  if (!eredu::testing::admit(size)) return nullptr;
  return std::malloc(size == 0 ? 1 : size);
}

void* allocate_aligned(std::size_t size, std::align_val_t align) noexcept {
  if (!eredu::testing::admit(size)) return nullptr;
  const auto alignment = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}

void* allocate_or_throw(std::size_t size) {
  void* p = allocate(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* allocate_aligned_or_throw(std::size_t size, std::align_val_t align) {
  void* p = allocate_aligned(size, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate_or_throw(size);
}
void* operator new[](std::size_t size) {
  return allocate_or_throw(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return allocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return allocate(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
  return allocate_aligned_or_throw(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return allocate_aligned_or_throw(size, align);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
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
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

#endif  // !EREDU_TEST_ASAN
