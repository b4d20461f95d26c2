// Kernel dispatch: the table is chosen once from the CPU's features, which agree with the kernel's
// view of the CPU (/proc/cpuinfo).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "eredu/backends/cpu/kernels.hpp"

namespace {

using eredu::cpu::Isa;

bool cpuinfo_has_flag(const std::string& flags, const std::string& flag) {
  std::istringstream in(flags);
  std::string word;
  while (in >> word) {
    if (word == flag) return true;
  }
  return false;
}

TEST(KernelDispatch, FeaturesAgreeWithProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  if (!cpuinfo) GTEST_SKIP() << "/proc/cpuinfo is not readable here";
  std::string line;
  std::string flags;
  std::string vendor;
  std::string family;
  auto value = [&] { return line.substr(line.find(':') + 2); };
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("vendor_id", 0) == 0 && vendor.empty()) vendor = value();
    if (line.rfind("cpu family", 0) == 0 && family.empty()) family = value();
    if (line.rfind("flags", 0) == 0) {
      flags = line.substr(line.find(':') + 1);
      break;
    }
  }
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo lists no flags";
  const auto& f = eredu::cpu::cpu_features();
  EXPECT_EQ(f.avx2, cpuinfo_has_flag(flags, "avx2"));
  EXPECT_EQ(f.fma, cpuinfo_has_flag(flags, "fma"));
  EXPECT_EQ(f.f16c, cpuinfo_has_flag(flags, "f16c"));
  EXPECT_EQ(f.avx512f, cpuinfo_has_flag(flags, "avx512f"));
  // The kernel lists AVX-512 flags only where it saves the AVX-512 state (XCR0), so a listed flag
  // must come with os_avx512.
  EXPECT_EQ(f.avx512bw, cpuinfo_has_flag(flags, "avx512bw"));
  EXPECT_EQ(f.avx512vl, cpuinfo_has_flag(flags, "avx512vl"));
  EXPECT_EQ(f.avx512dq, cpuinfo_has_flag(flags, "avx512dq"));
  EXPECT_EQ(f.avx512vnni, cpuinfo_has_flag(flags, "avx512_vnni"));
  EXPECT_EQ(f.avx512bf16, cpuinfo_has_flag(flags, "avx512_bf16"));
  if (cpuinfo_has_flag(flags, "avx512f")) {
    EXPECT_TRUE(f.os_avx512);
  }
  // Zen 4 (AMD family 25 = 19h, the one family with AVX-512 on 256-bit units).
  EXPECT_EQ(f.avx512_split,
            vendor == "AuthenticAMD" && family == "25" && cpuinfo_has_flag(flags, "avx512f"))
      << "vendor " << vendor << ", family " << family;
}

TEST(KernelDispatch, ChosenTableIsTheBestSupportedIsaOrTheOverrideAndStaysFixed) {
  const auto& table = eredu::cpu::kernels();
  const char* env = std::getenv("EREDU_CPU_ISA");
  EXPECT_EQ(table.isa, eredu::cpu::select_isa(env != nullptr ? env : "").isa);
  EXPECT_EQ(&table, &eredu::cpu::kernels());
  EXPECT_EQ(&table, eredu::cpu::kernels_for(table.isa));
  const auto& f = eredu::cpu::cpu_features();
  const bool avx512 = f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl &&
                      f.avx512dq && f.avx512vnni && f.os_avx512;
  const bool amx = avx512 && f.amx_tile && f.amx_int8 && f.os_amx && f.amx_granted;
  EXPECT_EQ(eredu::cpu::best_isa() == Isa::kAmx, amx);
  EXPECT_EQ(eredu::cpu::best_isa() == Isa::kAvx512, avx512 && !amx);
  EXPECT_EQ(eredu::cpu::best_isa() == Isa::kAvx2, !avx512 && f.avx2 && f.fma && f.f16c);
}

TEST(KernelDispatch, GenericTableAlwaysExistsAndAvx2OnlyWhenSupported) {
  ASSERT_NE(eredu::cpu::kernels_for(Isa::kGeneric), nullptr);
  EXPECT_EQ(eredu::cpu::kernels_for(Isa::kGeneric)->isa, Isa::kGeneric);
  EXPECT_EQ(eredu::cpu::kernels_for(Isa::kAvx2) != nullptr, eredu::cpu::isa_supported(Isa::kAvx2));
  EXPECT_EQ(eredu::cpu::kernels_for(Isa::kAvx512) != nullptr,
            eredu::cpu::isa_supported(Isa::kAvx512));
  EXPECT_EQ(eredu::cpu::kernels_for(Isa::kAmx) != nullptr, eredu::cpu::isa_supported(Isa::kAmx));
  // AVX-512 implies AVX2: the AVX-512 table is built on the AVX2 primitives; AMX implies AVX-512,
  // whose table the AMX one extends.
  if (eredu::cpu::isa_supported(Isa::kAvx512)) {
    EXPECT_TRUE(eredu::cpu::isa_supported(Isa::kAvx2));
  }
  if (eredu::cpu::isa_supported(Isa::kAmx)) {
    EXPECT_TRUE(eredu::cpu::isa_supported(Isa::kAvx512));
    EXPECT_EQ(eredu::cpu::kernels_for(Isa::kAmx)->isa, Isa::kAmx);
  }
  // Tile data is asked for only where the tiles exist and the OS enables them.
  const auto& f = eredu::cpu::cpu_features();
  if (f.amx_granted) {
    EXPECT_TRUE(f.amx_tile);
    EXPECT_TRUE(f.os_amx);
  }
  EXPECT_EQ(eredu::cpu::isa_name(Isa::kAmx), "amx");
  EXPECT_EQ(eredu::cpu::isa_name(Isa::kAvx2), "avx2");
  EXPECT_EQ(eredu::cpu::isa_name(Isa::kAvx512), "avx512");
  EXPECT_EQ(eredu::cpu::isa_name(Isa::kGeneric), "generic");
}

TEST(KernelDispatch, IsaOverrideForcesATableTheCpuRunsAndRefusesOthers) {
  using eredu::cpu::select_isa;
  const Isa best = eredu::cpu::best_isa();
  EXPECT_EQ(select_isa("").isa, best);
  EXPECT_TRUE(select_isa("").problem.empty());
  EXPECT_EQ(select_isa("auto").isa, best);
  EXPECT_EQ(select_isa("scalar").isa, Isa::kGeneric);
  EXPECT_TRUE(select_isa("scalar").problem.empty());
  EXPECT_EQ(select_isa("generic").isa, Isa::kGeneric);
  const auto avx2 = select_isa("avx2");
  if (eredu::cpu::isa_supported(Isa::kAvx2)) {
    EXPECT_EQ(avx2.isa, Isa::kAvx2);
    EXPECT_TRUE(avx2.problem.empty());
  } else {
    EXPECT_EQ(avx2.isa, best);
    EXPECT_NE(avx2.problem.find("cannot run"), std::string::npos) << avx2.problem;
  }
  const auto avx512 = select_isa("avx512");
  if (eredu::cpu::isa_supported(Isa::kAvx512)) {
    EXPECT_EQ(avx512.isa, Isa::kAvx512);
    EXPECT_TRUE(avx512.problem.empty());
  } else {
    EXPECT_EQ(avx512.isa, best);
    EXPECT_NE(avx512.problem.find("cannot run the avx512 kernels"), std::string::npos)
        << avx512.problem;
  }
  const auto amx = select_isa("amx");
  if (eredu::cpu::isa_supported(Isa::kAmx)) {
    EXPECT_EQ(amx.isa, Isa::kAmx);
    EXPECT_TRUE(amx.problem.empty());
  } else {
    EXPECT_EQ(amx.isa, best);
    EXPECT_NE(amx.problem.find("cannot run the amx kernels"), std::string::npos) << amx.problem;
  }
  const auto unknown = select_isa("avx9000");
  EXPECT_EQ(unknown.isa, best);
  EXPECT_NE(unknown.problem.find("avx9000"), std::string::npos) << unknown.problem;
}

}  // namespace
