#pragma once
// The allocator of CpuTensor's values. Every CPU operator returns a new tensor, and the standard
// allocator costs such an output twice before the operator writes it: it zeroes the floats (the
// operator then overwrites all of them), and glibc returns freed blocks above its trim / mmap
// thresholds (128 KiB) to the kernel, so the next operator's output of that size page-faults
// again. On stories260K's 128-token prompt the two were a fifth of the main thread's time
// (memset and page faults in `perf`). So the values are left uninitialized (a new tensor's
// contents are unspecified until its operator writes them), and blocks of 16 KiB and more are
// kept on the freeing thread for the next allocation of their size class (activation_memory.cpp),
// up to 64 MiB per thread and 256 MiB for all threads. Those blocks are 64-byte aligned; smaller
// ones have operator new's alignment.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace eredu::cpu {

namespace activation_memory {
// `bytes` (> 0) of memory, 64-byte aligned from 16 KiB on; throws std::bad_alloc when none is left.
void* take(std::size_t bytes);
// Gives back a block from take(bytes), from any thread.
void give(void* block, std::size_t bytes) noexcept;
// Frees the blocks the calling thread keeps (e.g. after a long prompt, on a thread that will not
// run another soon).
void release() noexcept;
// Bytes the calling thread keeps for later allocations, and all threads together.
std::size_t cached_bytes() noexcept;
std::size_t cached_bytes_all_threads() noexcept;
}  // namespace activation_memory

template <typename T>
struct ActivationAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "small activation blocks have operator new's alignment");

  ActivationAllocator() noexcept = default;
  template <typename U>
  ActivationAllocator(const ActivationAllocator<U>& /*other*/) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(activation_memory::take(n == 0 ? sizeof(T) : n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    activation_memory::give(p, n == 0 ? sizeof(T) : n * sizeof(T));
  }

  // Value-initialization (vector(n), resize(n)) leaves trivial values uninitialized; everything
  // else is constructed as usual.
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const ActivationAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

}  // namespace eredu::cpu
