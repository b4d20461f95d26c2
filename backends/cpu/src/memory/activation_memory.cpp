// Blocks of CpuTensor values (activation_allocator.hpp): from 16 KiB on 64-byte aligned and kept
// per thread for reuse instead of going back to glibc, which would return them to the kernel.
// Smaller blocks are plain operator new (malloc's thread cache): through the aligned operator new
// they cost a decode of stories260K a tenth of its time in glibc's memalign splits.
//
// A block's size is rounded up to its size class (four classes per power of two, so at most a
// quarter more than asked), and a freed block waits in the freeing thread's list for its class.
// A thread keeps at most kMaxCachedBytes and kMaxPerClass blocks per class, and all threads
// together at most kMaxCachedBytesAllThreads (a server with a thread per request does not keep
// 64 MiB on each); beyond that, and after the thread's cache is gone (thread exit, static
// destruction), blocks are freed at once. release() frees the calling thread's blocks.
//
// Under AddressSanitizer nothing is kept (every block goes back, so a use after free is still
// reported), and in builds with assertions every block handed out is first filled with NaNs, so an
// operator that leaves part of its output unwritten shows up in the tests instead of reading zeros
// or an earlier tensor's values.
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstring>
#include <new>
#include <vector>

#include "eredu/backends/cpu/activation_allocator.hpp"

namespace eredu::cpu::activation_memory {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepBlocks = false;
#else
constexpr bool kKeepBlocks = true;
#endif
#ifdef NDEBUG
constexpr bool kPoisonBlocks = false;
#else
constexpr bool kPoisonBlocks = true;
#endif

constexpr std::align_val_t kAlignment{64};
constexpr std::size_t kMinCachedBytes = std::size_t{16} << 10;
constexpr std::size_t kMaxCachedBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxCachedBytesAllThreads = std::size_t{256} << 20;
constexpr std::size_t kMaxPerClass = 16;
constexpr std::size_t kClassesPerOctave = 4;
constexpr std::size_t kClasses = 64 * kClassesPerOctave;

// The class of `bytes` (>= kMinCachedBytes) and the size every block of it has: the bit length
// picks the power of two, the next two bits the quarter within it.
struct SizeClass {
  std::size_t index;
  std::size_t bytes;
};

SizeClass size_class(std::size_t bytes) {
  const std::size_t top = std::bit_width(bytes - 1) - 1;  // 2^top < bytes <= 2^(top + 1)
  const std::size_t step = std::size_t{1} << (top - 2);   // a quarter of 2^top
  const std::size_t quarters = (bytes - (std::size_t{1} << top) + step - 1) / step;  // 1..4
  return {top * kClassesPerOctave + quarters - 1, (std::size_t{1} << top) + quarters * step};
}

void* allocate_block(std::size_t bytes) {
  return ::operator new(bytes, kAlignment);
}

void free_block(void* block) noexcept {
  ::operator delete(block, kAlignment);
}

// Bytes kept by all threads' caches.
std::atomic<std::size_t> all_threads_bytes{0};

// Trivially destructible, so it can still be read after the cache below is destroyed.
thread_local bool cache_gone = false;

struct Cache {
  std::array<std::vector<void*>, kClasses> free;
  std::size_t bytes = 0;

  void release() noexcept {
    for (auto& blocks : free) {
      for (void* b : blocks)
        free_block(b);
      blocks.clear();
    }
    all_threads_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    bytes = 0;
  }

  ~Cache() {
    cache_gone = true;
    release();
  }
};

Cache* cache() noexcept {
  if (cache_gone) return nullptr;
  thread_local Cache c;
  return &c;
}

void* reuse_or_allocate(std::size_t bytes) {
  if (bytes < kMinCachedBytes) return ::operator new(bytes);
  if (!kKeepBlocks) return allocate_block(bytes);
  const SizeClass c = size_class(bytes);
  if (Cache* cached = cache(); cached != nullptr && !cached->free[c.index].empty()) {
    void* block = cached->free[c.index].back();
    cached->free[c.index].pop_back();
    cached->bytes -= c.bytes;
    all_threads_bytes.fetch_sub(c.bytes, std::memory_order_relaxed);
    return block;
  }
  return allocate_block(c.bytes);
}

}  // namespace

void* take(std::size_t bytes) {
  void* block = reuse_or_allocate(bytes);
  if constexpr (kPoisonBlocks) std::memset(block, 0xFF, bytes);  // all-ones floats: NaN
  return block;
}

void give(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes < kMinCachedBytes) return ::operator delete(block);
  if (!kKeepBlocks) return free_block(block);
  const SizeClass c = size_class(bytes);
  Cache* cached = cache();
  if (cached == nullptr || cached->bytes + c.bytes > kMaxCachedBytes ||
      cached->free[c.index].size() >= kMaxPerClass) {
    return free_block(block);
  }
  if (all_threads_bytes.fetch_add(c.bytes, std::memory_order_relaxed) + c.bytes >
      kMaxCachedBytesAllThreads) {
    all_threads_bytes.fetch_sub(c.bytes, std::memory_order_relaxed);
    return free_block(block);
  }
  try {
    cached->free[c.index].push_back(block);
  } catch (...) {  // no room for the list entry: free the block instead
    all_threads_bytes.fetch_sub(c.bytes, std::memory_order_relaxed);
    return free_block(block);
  }
  cached->bytes += c.bytes;
}

void release() noexcept {
  if (Cache* cached = cache(); cached != nullptr) cached->release();
}

std::size_t cached_bytes() noexcept {
  const Cache* cached = cache();
  return cached != nullptr ? cached->bytes : 0;
}

std::size_t cached_bytes_all_threads() noexcept {
  return all_threads_bytes.load(std::memory_order_relaxed);
}

}  // namespace eredu::cpu::activation_memory
