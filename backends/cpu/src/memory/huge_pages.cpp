// Transparent huge pages for the streamed buffers, and the choice whether the weights get them:
// see huge_pages.hpp.
#include "eredu/backends/cpu/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/core/log.hpp"

namespace eredu::cpu {

namespace {

constexpr const char* kThpDirectory = "/sys/kernel/mm/transparent_hugepage/";

std::size_t read_huge_page_bytes() noexcept {
  try {
    std::ifstream in(std::string(kThpDirectory) + "hpage_pmd_size");
    std::size_t bytes = 0;
    if (!(in >> bytes)) return 0;
    return bytes != 0 && (bytes & (bytes - 1)) == 0 ? bytes : 0;  // a power of two, or none
  } catch (...) {  // std::string's allocation: no huge pages rather than an escape
    return 0;
  }
}

HugePageChoice chosen() noexcept {
  try {
    const char* env = std::getenv("EREDU_CPU_HUGE_PAGES");
    HugePageChoice choice = choose_huge_pages(
        env != nullptr ? env : "", transparent_huge_pages_mode(), cpu_features().hypervisor);
    if (!choice.problem.empty()) log::warn("{}", choice.problem);
    log::info("CPU weights: {}", choice.reason);
    return choice;
  } catch (...) {  // allocation failure while building the reason: the kernel's default pages
    return {};
  }
}

}  // namespace

std::size_t huge_page_bytes() noexcept {
  static const std::size_t bytes = read_huge_page_bytes();
  return bytes;
}

std::string transparent_huge_pages_mode() {
  std::ifstream in(std::string(kThpDirectory) + "enabled");
  std::string line;
  if (!std::getline(in, line)) return "unavailable";
  const auto open = line.find('[');
  const auto close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "unavailable";
  return line.substr(open + 1, close - open - 1);
}

std::size_t advise_huge_pages(void* data, std::size_t bytes) noexcept {
  const std::size_t page = huge_page_bytes();
  if (page == 0 || data == nullptr) return 0;
  const AddressRange inside =
      whole_pages_inside(reinterpret_cast<std::uintptr_t>(data), bytes, page);
  if (inside.bytes() == 0) return 0;
  if (::madvise(reinterpret_cast<void*>(inside.begin), inside.bytes(), MADV_HUGEPAGE) != 0)
    return 0;
  return inside.bytes();
}

std::string_view advice_name(HugePageAdvice advice) noexcept {
  switch (advice) {
    case HugePageAdvice::kNone:
      return "none";
    case HugePageAdvice::kBeforeFirstWrite:
      return "before-first-write";
    case HugePageAdvice::kAfterFirstWrite:
      return "after-first-write";
  }
  return "none";
}

HugePageChoice choose_huge_pages(std::string_view requested, std::string_view thp_mode,
                                 bool under_hypervisor) {
  HugePageChoice choice;
  if (!requested.empty() && requested != "auto" && requested != "always" && requested != "never") {
    choice.problem = "EREDU_CPU_HUGE_PAGES=" + std::string(requested) +
                     " is not one of auto, always or never; taken as auto";
    requested = "auto";
  }
  if (requested == "never") {
    choice.reason = "4 KiB pages (EREDU_CPU_HUGE_PAGES=never)";
  } else if (thp_mode != "always" && thp_mode != "madvise") {
    choice.reason = "4 KiB pages (transparent huge pages are " + std::string(thp_mode) + ")";
  } else if (requested == "always" || thp_mode == "always" || !under_hypervisor) {
    choice.advice = HugePageAdvice::kBeforeFirstWrite;
    choice.reason = requested == "always"  ? "huge pages (EREDU_CPU_HUGE_PAGES=always)"
                    : thp_mode == "always" ? "huge pages (the system's setting is always)"
                                           : "huge pages, advised before the load writes them";
  } else {
    choice.advice = HugePageAdvice::kAfterFirstWrite;
    choice.reason =
        "4 KiB pages at load, advised afterwards: khugepaged collapses them into huge pages in "
        "the background (under a hypervisor a fresh huge page can fault in far more slowly; "
        "EREDU_CPU_HUGE_PAGES=always advises them before the load)";
  }
  return choice;
}

HugePageAdvice weights_huge_page_advice() noexcept {
  static const HugePageAdvice advice = chosen().advice;
  return advice;
}

}  // namespace eredu::cpu
