#pragma once
// Whether a page of this process's address space is mapped, and the flags of the mapping that
// holds an address: for tests that prove a load leaves a file's pages out of the process, and that
// the weights' row groups are advised into huge pages.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

// How many of the pages that hold [address, address + bytes) are memory of this process's own:
// mapped (bit 63 of their /proc/self/pagemap entries) and mapped exclusively (bit 56), which
// leaves out the kernel's shared zero page that reading an unwritten anonymous page maps. From one
// read of the entries; nullopt where that file cannot be read.
inline std::optional<std::size_t> own_pages(const void* address, std::size_t bytes) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(address) / page;
  const auto last = (reinterpret_cast<std::uintptr_t>(address) + bytes + page - 1) / page;
  std::vector<std::uint64_t> entries(last - first);
  std::FILE* f = std::fopen("/proc/self/pagemap", "rb");
  if (f == nullptr) return std::nullopt;
  const bool read =
      std::fseek(f, static_cast<long>(first * sizeof(std::uint64_t)), SEEK_SET) == 0 &&
      std::fread(entries.data(), sizeof(std::uint64_t), entries.size(), f) == entries.size();
  std::fclose(f);
  if (!read) return std::nullopt;
  std::size_t mapped = 0;
  for (std::uint64_t entry : entries)
    mapped += (entry >> 63 & 1) != 0 && (entry >> 56 & 1) != 0;
  return mapped;
}

// The VmFlags of the mapping (/proc/self/smaps) that holds `address`, as written there (two-letter
// flags separated by spaces, e.g. "rd wr mr mw me ac hg": hg is MADV_HUGEPAGE's advice); nullopt
// where no mapping holds it or the file cannot be read.
inline std::optional<std::string> vm_flags_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {  // "begin-end perms ..."
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8);
    }
  }
  return std::nullopt;
}

// Whether the mapping that holds `address` carries MADV_HUGEPAGE's advice; nullopt as above.
inline std::optional<bool> advised_huge(const void* address) {
  const auto flags = vm_flags_at(address);
  if (!flags) return std::nullopt;
  return (" " + *flags + " ").find(" hg ") != std::string::npos;
}

}  // namespace eredu::testing
