#pragma once
// Transparent huge pages for the memory a decode streams through once per token: the weights' row
// groups (parameters.cpp) and, so that the two are measured alike, the read test's buffer
// (bench/eredu-bench/bandwidth.cpp).
//
// Why: a token reads every weight once, hundreds of MB in order, and with 4 KiB pages that is a
// translation per 4 KiB and a hardware prefetcher that stops at every page's end. Debian's kernels
// (and most distributions') hand out huge pages only to memory advised with MADV_HUGEPAGE
// (/sys/kernel/mm/transparent_hugepage/enabled = "madvise"), so without the advice neither eredu
// nor llama.cpp gets them. On a Zen 4 EPYC guest (2 threads), advised: a plain 1 GiB read 30-34
// GB/s against 22-27, and llama1b decode, paired rounds in alternating order, Q4_K_M 1.05x (10
// rounds, 0.94-1.28) and Q4_0 1.08x (8 rounds, 0.99-1.25).
//
// When to advise. A huge page is cleared whole when it is first written. On bare metal that runs
// at memory speed, so the weights are advised before the load writes them (kBeforeFirstWrite). On
// that guest a fresh huge page mostly faulted in at 0.1-1.6 GB/s (the host backs and zeroes it
// 4 KiB at a time, and takes back what the guest frees) against 2.2-2.8 GB/s for 4 KiB pages:
// llama1b Q4_K_M took 2.5-2.9 s to its first token instead of 0.7 s. A probe timing a few MiB of
// each kind could not tell the two apart (huge pages another process had just freed, still backed,
// faulted in at 10-11 GB/s, and the load's hundreds of MB then at the slow rate). So under a
// hypervisor (cpuid's hypervisor bit) the weights are advised after the load has written them in
// 4 KiB pages (kAfterFirstWrite): the first token comes as soon as without the advice, and the
// kernel's khugepaged collapses the advised ranges into huge pages in the background, at its
// default pace 16 MiB every 10 s (llama1b Q4_K_M's 450 MB in about 5 minutes, seen on that
// guest), for as long as the model stays loaded. EREDU_CPU_HUGE_PAGES=auto (the default) chooses
// so; `always` advises before the first write anywhere, `never` not at all.
//
// Only the whole huge pages inside a buffer are advised, so a buffer's first and last partial huge
// page stay 4 KiB pages and no buffer grows its resident size. Where the kernel has no transparent
// huge pages, or the system has them set to "never", nothing changes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace eredu::cpu {

// The whole pages of `page_bytes` (a power of two) inside the buffer [address, address + bytes):
// [begin, end), empty (begin == end) when none fits.
struct AddressRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  [[nodiscard]] constexpr std::size_t bytes() const noexcept { return end - begin; }
};
[[nodiscard]] constexpr AddressRange whole_pages_inside(std::uintptr_t address, std::size_t bytes,
                                                        std::size_t page_bytes) noexcept {
  const std::uintptr_t mask = page_bytes - 1;
  const std::uintptr_t begin = (address + mask) & ~mask;
  const std::uintptr_t end = (address + bytes) & ~mask;
  return end > begin ? AddressRange{begin, end} : AddressRange{begin, begin};
}

// The size of a transparent huge page (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size, 2 MiB
// on x86-64), read once; 0 where the kernel has none.
[[nodiscard]] std::size_t huge_page_bytes() noexcept;

// The system's setting ("always", "madvise" or "never", the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled); "unavailable" where it cannot be read.
[[nodiscard]] std::string transparent_huge_pages_mode();

// Advises the whole huge pages inside [data, data + bytes) with MADV_HUGEPAGE. Returns the bytes
// advised: 0 where none fits or the kernel refused (no transparent huge pages); never fails
// otherwise, since the advice only changes speed.
std::size_t advise_huge_pages(void* data, std::size_t bytes) noexcept;

// When the weights' row groups are advised.
enum class HugePageAdvice {
  kNone,              // never: 4 KiB pages (or whatever the system's setting gives)
  kBeforeFirstWrite,  // huge pages from the first fault
  kAfterFirstWrite,   // 4 KiB pages at load, collapsed into huge pages by khugepaged later
};
// "none", "before-first-write", "after-first-write".
[[nodiscard]] std::string_view advice_name(HugePageAdvice advice) noexcept;

// The advice, why (for the log), and what was wrong with the variable.
struct HugePageChoice {
  HugePageAdvice advice = HugePageAdvice::kNone;
  std::string reason;
  std::string problem;
};
// The choice for EREDU_CPU_HUGE_PAGES = `requested` ("", "auto", "always" or "never") on a system
// whose setting is `thp_mode` (transparent_huge_pages_mode()): never, and a system without them,
// kNone; always, and a system set to always (where the advice changes nothing),
// kBeforeFirstWrite; auto on a system set to madvise kBeforeFirstWrite, or kAfterFirstWrite
// `under_hypervisor`. An unknown value is reported in `problem` and taken as auto.
[[nodiscard]] HugePageChoice choose_huge_pages(std::string_view requested,
                                               std::string_view thp_mode, bool under_hypervisor);

// The process's choice (EREDU_CPU_HUGE_PAGES, the system's setting, cpu_features().hypervisor),
// made once and logged.
[[nodiscard]] HugePageAdvice weights_huge_page_advice() noexcept;

}  // namespace eredu::cpu
