#pragma once
// Whether a page of this process's address space is mapped: for tests that prove a load leaves a
// file's pages out of the process.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <optional>

namespace eredu::testing {

// Whether the page at `address` is mapped into this process (present in its page table), from
// /proc/self/pagemap (bit 63 of the page's entry); nullopt where that file cannot be read.
inline std::optional<bool> page_is_mapped(const void* address) {
  static const long page = ::sysconf(_SC_PAGESIZE);
  std::FILE* f = std::fopen("/proc/self/pagemap", "rb");
  if (f == nullptr) return std::nullopt;
  const auto index = reinterpret_cast<std::uintptr_t>(address) / static_cast<std::uintptr_t>(page);
  std::uint64_t entry = 0;
  const bool read = std::fseek(f, static_cast<long>(index * sizeof(entry)), SEEK_SET) == 0 &&
                    std::fread(&entry, sizeof(entry), 1, f) == 1;
  std::fclose(f);
  if (!read) return std::nullopt;
  return (entry >> 63) != 0;
}

}  // namespace eredu::testing
