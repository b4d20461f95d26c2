// Transparent huge pages for the streamed buffers (huge_pages.hpp): only the whole huge pages
// inside a buffer are advised, an advised buffer's interior carries MADV_HUGEPAGE's advice ("hg"
// in its mapping's VmFlags) while the pages at its edges do not, and EREDU_CPU_HUGE_PAGES with the
// system's setting and the hypervisor bit choose whether the weights get it. Whether the kernel
// then backs the interior with huge pages depends on its free memory, so the tests check the
// advice, which is deterministic, not AnonHugePages.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include "eredu/backends/cpu/huge_pages.hpp"
#include "page_residency.hpp"

namespace {

using eredu::cpu::whole_pages_inside;

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(HugePages, WholePagesInsideABufferLeaveOutItsPartialFirstAndLastPages) {
  constexpr std::size_t kPage = 2 * kMiB;
  // Aligned at both ends: the whole buffer.
  EXPECT_EQ(whole_pages_inside(4 * kMiB, 6 * kMiB, kPage).begin, 4 * kMiB);
  EXPECT_EQ(whole_pages_inside(4 * kMiB, 6 * kMiB, kPage).end, 10 * kMiB);
  // Unaligned: from the first boundary after the start to the last one before the end.
  EXPECT_EQ(whole_pages_inside(4 * kMiB + 64, 6 * kMiB, kPage).begin, 6 * kMiB);
  EXPECT_EQ(whole_pages_inside(4 * kMiB + 64, 6 * kMiB, kPage).end, 10 * kMiB);
  EXPECT_EQ(whole_pages_inside(4 * kMiB + 64, 6 * kMiB, kPage).bytes(), 4 * kMiB);
  // Smaller than a page, or across one boundary only: empty.
  EXPECT_EQ(whole_pages_inside(4 * kMiB + 64, kMiB, kPage).bytes(), 0);
  EXPECT_EQ(whole_pages_inside(5 * kMiB, 2 * kMiB, kPage).bytes(), 0);
  EXPECT_EQ(whole_pages_inside(5 * kMiB, 3 * kMiB, kPage).bytes(), 2 * kMiB);
  EXPECT_EQ(whole_pages_inside(0, 0, kPage).bytes(), 0);
}

TEST(HugePages, AutoAdvisesBeforeTheFirstWriteOnBareMetalAndAfterItUnderAHypervisor) {
  using eredu::cpu::choose_huge_pages;
  using eredu::cpu::HugePageAdvice;
  EXPECT_EQ(choose_huge_pages("", "madvise", false).advice, HugePageAdvice::kBeforeFirstWrite);
  EXPECT_EQ(choose_huge_pages("auto", "madvise", false).advice, HugePageAdvice::kBeforeFirstWrite);
  EXPECT_EQ(choose_huge_pages("", "madvise", true).advice, HugePageAdvice::kAfterFirstWrite);
  EXPECT_EQ(choose_huge_pages("auto", "madvise", true).advice, HugePageAdvice::kAfterFirstWrite);
  const auto guest = choose_huge_pages("", "madvise", true);
  EXPECT_NE(guest.reason.find("khugepaged"), std::string::npos) << guest.reason;
  EXPECT_NE(guest.reason.find("EREDU_CPU_HUGE_PAGES=always"), std::string::npos) << guest.reason;
  // A system set to always gives huge pages to all memory at its first fault anyway.
  EXPECT_EQ(choose_huge_pages("", "always", true).advice, HugePageAdvice::kBeforeFirstWrite);
  EXPECT_TRUE(guest.problem.empty());
}

TEST(HugePages, AlwaysAndNeverOverrideAutoButNotASystemWithoutHugePages) {
  using eredu::cpu::choose_huge_pages;
  using eredu::cpu::HugePageAdvice;
  EXPECT_EQ(choose_huge_pages("always", "madvise", true).advice, HugePageAdvice::kBeforeFirstWrite);
  EXPECT_EQ(choose_huge_pages("never", "madvise", false).advice, HugePageAdvice::kNone);
  EXPECT_EQ(choose_huge_pages("never", "always", false).advice, HugePageAdvice::kNone);
  for (const char* mode : {"never", "unavailable"}) {
    const auto choice = choose_huge_pages("always", mode, false);
    EXPECT_EQ(choice.advice, HugePageAdvice::kNone) << mode;
    EXPECT_NE(choice.reason.find(mode), std::string::npos) << choice.reason;
  }
}

TEST(HugePages, AnUnknownValueIsNamedInTheProblemAndTakenAsAuto) {
  using eredu::cpu::HugePageAdvice;
  const auto choice = eredu::cpu::choose_huge_pages("yes", "madvise", false);
  EXPECT_EQ(choice.advice, HugePageAdvice::kBeforeFirstWrite);
  EXPECT_NE(choice.problem.find("EREDU_CPU_HUGE_PAGES=yes"), std::string::npos) << choice.problem;
  EXPECT_NE(choice.problem.find("auto, always or never"), std::string::npos) << choice.problem;
  EXPECT_EQ(eredu::cpu::choose_huge_pages("yes", "madvise", true).advice,
            HugePageAdvice::kAfterFirstWrite);
}

TEST(HugePages, TheModeIsOneOfTheKernelsSettings) {
  const std::string mode = eredu::cpu::transparent_huge_pages_mode();
  EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never" || mode == "unavailable")
      << mode;
}

TEST(HugePages, AnAdvisedBufferCarriesTheAdviceInsideAndNotOnItsPartialEdgePages) {
  const std::size_t page = eredu::cpu::huge_page_bytes();
  if (page == 0) GTEST_SKIP() << "this kernel has no transparent huge pages (no hpage_pmd_size)";
  if (!eredu::testing::vm_flags_at(&page).has_value())
    GTEST_SKIP() << "/proc/self/smaps cannot be read";
  // Not yet written, as the row groups are when they are advised; 64 bytes past an alignment of
  // `page`, so that both edges are partial huge pages.
  const std::size_t bytes = 4 * page + page / 2;
  auto* block = static_cast<std::byte*>(::operator new (bytes + 2 * page, std::align_val_t{page}));
  std::byte* data = block + 64;
  const std::size_t advised = eredu::cpu::advise_huge_pages(data, bytes);
  if (advised == 0) {
    ::operator delete (block, std::align_val_t{page});
    GTEST_SKIP() << "madvise(MADV_HUGEPAGE) refused: the kernel was built without transparent "
                    "huge pages";
  }
  EXPECT_EQ(advised, 3 * page);  // from block + page to block + 4 * page
  EXPECT_EQ(eredu::testing::advised_huge(block + page), true);
  EXPECT_EQ(eredu::testing::advised_huge(block + 4 * page - 1), true);
  EXPECT_EQ(eredu::testing::advised_huge(data), false);
  EXPECT_EQ(eredu::testing::advised_huge(block + 4 * page), false);
  ::operator delete (block, std::align_val_t{page});
}

TEST(HugePages, NothingIsAdvisedInABufferSmallerThanAHugePage) {
  const std::size_t page = eredu::cpu::huge_page_bytes();
  if (page == 0) GTEST_SKIP() << "this kernel has no transparent huge pages (no hpage_pmd_size)";
  auto* block = static_cast<std::byte*>(::operator new (page, std::align_val_t{64}));
  EXPECT_EQ(eredu::cpu::advise_huge_pages(block, page - 64), 0U);
  EXPECT_EQ(eredu::cpu::advise_huge_pages(nullptr, 4 * page), 0U);
  ::operator delete (block, std::align_val_t{64});
}

}  // namespace
