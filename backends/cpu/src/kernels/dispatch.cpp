// CPU feature detection and the per-ISA kernel tables, chosen once.
#include <cstdlib>
#include <string>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "eredu/backends/cpu/kernels.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/core/log.hpp"
#include "kernel_impl.hpp"
#include "row_groups.hpp"

namespace eredu::cpu {

namespace {

#if defined(__linux__) && defined(__x86_64__)
// Linux's arch_prctl codes (asm/prctl.h) and the tile data state component (XFEATURE_XTILEDATA).
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtileData = 18;
#endif

CpuFeatures detect_features() noexcept {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.sse4_2 = __builtin_cpu_supports("sse4.2") != 0;
  f.avx = __builtin_cpu_supports("avx") != 0;
  f.avx2 = __builtin_cpu_supports("avx2") != 0;
  f.fma = __builtin_cpu_supports("fma") != 0;
  f.avx512f = __builtin_cpu_supports("avx512f") != 0;
  // F16C has no __builtin_cpu_supports name in GCC 12: CPUID leaf 1, ECX bit 29.
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
  f.f16c = ((ecx >> 29) & 1U) != 0 && f.avx;
  f.hypervisor = ((ecx >> 31) & 1U) != 0;
  const unsigned signature = eax;  // leaf 1 EAX: family, model, stepping
  f.avx512bw = __builtin_cpu_supports("avx512bw") != 0;
  f.avx512vl = __builtin_cpu_supports("avx512vl") != 0;
  f.avx512dq = __builtin_cpu_supports("avx512dq") != 0;
  f.avx512vnni = __builtin_cpu_supports("avx512vnni") != 0;
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16") != 0;
  // XGETBV needs OSXSAVE (leaf 1, ECX bit 27). XCR0 bits 1-2 (SSE, AVX) and 5-7 (opmask, ZMM0-15
  // upper halves, ZMM16-31) must all be set for the OS to preserve AVX-512 state.
  const bool osxsave = ((ecx >> 27) & 1U) != 0;
  if (osxsave) {
    unsigned xcr0_lo = 0;
    unsigned xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    f.os_avx512 = (xcr0_lo & 0xE6U) == 0xE6U;
    f.os_amx = ((xcr0_lo >> 17) & 3U) == 3U;  // XTILECFG and XTILEDATA
  }
  unsigned max_leaf = 0;
  __asm__("cpuid" : "=a"(max_leaf), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0), "c"(0));
  // "AuthenticAMD" (leaf 0: EBX, EDX, ECX) and family 19h (base family 0xF plus extended family
  // 0x0A): Zen 3, without AVX-512, and Zen 4, whose AVX-512 runs on 256-bit units.
  const bool amd = ebx == 0x68747541U && edx == 0x69746e65U && ecx == 0x444d4163U;
  const unsigned base_family = (signature >> 8) & 0xFU;
  const unsigned family =
      base_family == 0xFU ? base_family + ((signature >> 20) & 0xFFU) : base_family;
  f.avx512_split = amd && family == 0x19U && f.avx512f;
  if (max_leaf >= 7) {
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
    f.amx_bf16 = ((edx >> 22) & 1U) != 0;
    f.amx_tile = ((edx >> 24) & 1U) != 0;
    f.amx_int8 = ((edx >> 25) & 1U) != 0;
  }
#if defined(__linux__) && defined(__x86_64__)
  // Linux keeps the tile data state off for a process until it asks (the first tile instruction
  // otherwise faults): ask once, here, only where the tiles exist and the OS enables them.
  if (f.amx_tile && f.os_amx)
    f.amx_granted = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
#endif
#endif
  return f;
}

static_assert(detail::kRowGroupRows == kRowGroupRows, "one group size, public and internal");

template <const detail::VecOps& (*Ops)() noexcept>
constexpr KernelTable make_table(Isa isa) {
  return KernelTable{
      isa,
      detail::supports_matmul,
      [](const MatrixView& w, const float* x, std::size_t n_tokens, float* y, ThreadPool* pool) {
        detail::matmul(Ops(), w, x, n_tokens, y, pool);
      },
      [](std::span<const MatrixView> ws, const float* x, std::size_t n_tokens,
         std::span<float* const> ys,
         ThreadPool* pool) { detail::matmul_shared_input(Ops(), ws, x, n_tokens, ys, pool); },
      detail::rms_norm,
      detail::rope,
      [](const AttentionArgs& args, ThreadPool* pool) { detail::attention(Ops(), args, pool); },
      // The tables with attention_block (avx2/vec_avx2.cpp, vec_avx512.cpp, and AMX's, which
      // keeps AVX-512's): their decode reads 8 or 16 positions' element d at once.
      isa == Isa::kGeneric ? KeyLayout::kRows : KeyLayout::kBlocks16,
      [](const float* gate, const float* up, std::size_t n, float* out, ThreadPool* pool) {
        detail::swiglu(Ops(), gate, up, n, out, pool);
      },
      detail::add,
      [](const MatrixView& table, std::size_t row, float* out) {
        detail::get_row(Ops(), table, row, out);
      },
      [](DType dtype, std::size_t rows, std::size_t cols) noexcept -> std::size_t {
        if (Ops().row_group_products == nullptr) return 0;
        if (!Ops().row_group_products(dtype).any()) return 0;
        return detail::row_group_bytes(dtype, rows, cols);
      },
      detail::pack_row_groups,
      detail::softmax,
      [](const float* x, std::size_t n, std::uint16_t* out) {
        if (Ops().f32_to_f16 != nullptr) return Ops().f32_to_f16(x, out, n);
        for (std::size_t i = 0; i < n; ++i)
          out[i] = encoding::fp32_to_fp16(x[i]);
      },
  };
}

// constexpr: constant-initialized, so kernels() works even from other static initializers.
constexpr KernelTable kGenericTable = make_table<detail::vec_ops_generic>(Isa::kGeneric);
constexpr KernelTable kAvx2Table = make_table<detail::vec_ops_avx2>(Isa::kAvx2);
constexpr KernelTable kAvx512Table = make_table<detail::vec_ops_avx512>(Isa::kAvx512);
constexpr KernelTable kAmxTable = make_table<detail::vec_ops_amx>(Isa::kAmx);

}  // namespace

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::kGeneric:
      return "generic";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAmx:
      return "amx";
  }
  return "unknown";
}

std::string_view isa_requirements(Isa isa) noexcept {
  switch (isa) {
    case Isa::kGeneric:
      return "x86-64";
    case Isa::kAvx2:
      return "AVX2, FMA and F16C";
    case Isa::kAvx512:
      return "AVX2, FMA, F16C, AVX-512 F/BW/VL/DQ and VNNI, with the OS saving AVX-512 state";
    case Isa::kAmx:
      return "the avx512 table's AVX-512 set plus AMX-TILE and AMX-INT8, with the OS enabling the "
             "tile state and granting it to this process (arch_prctl ARCH_REQ_XCOMP_PERM)";
  }
  return "unknown";
}

const CpuFeatures& cpu_features() noexcept {
  static const CpuFeatures features = detect_features();
  return features;
}

bool isa_supported(Isa isa) noexcept {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::kGeneric:
      return true;
    case Isa::kAvx2:
      return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512:
      return f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq &&
             f.avx512vnni && f.os_avx512;
    case Isa::kAmx:
      return isa_supported(Isa::kAvx512) && f.amx_tile && f.amx_int8 && f.os_amx && f.amx_granted;
  }
  return false;
}

Isa best_isa() noexcept {
  if (isa_supported(Isa::kAmx)) return Isa::kAmx;
  if (isa_supported(Isa::kAvx512)) return Isa::kAvx512;
  return isa_supported(Isa::kAvx2) ? Isa::kAvx2 : Isa::kGeneric;
}

const KernelTable* kernels_for(Isa isa) noexcept {
  if (!isa_supported(isa)) return nullptr;
  switch (isa) {
    case Isa::kGeneric:
      return &kGenericTable;
    case Isa::kAvx2:
      return &kAvx2Table;
    case Isa::kAvx512:
      return &kAvx512Table;
    case Isa::kAmx:
      return &kAmxTable;
  }
  return nullptr;
}

IsaSelection select_isa(std::string_view requested) {
  const Isa best = best_isa();
  if (requested.empty() || requested == "auto") return {best, {}};
  Isa isa = best;
  if (requested == "scalar" || requested == "generic") {
    isa = Isa::kGeneric;
  } else if (requested == "avx2") {
    isa = Isa::kAvx2;
  } else if (requested == "avx512") {
    isa = Isa::kAvx512;
  } else if (requested == "amx") {
    isa = Isa::kAmx;
  } else {
    return {best,
            "EREDU_CPU_ISA=" + std::string(requested) +
                " is not a kernel table (scalar, generic, avx2, avx512, amx or auto); using " +
                std::string(isa_name(best))};
  }
  if (!isa_supported(isa)) {
    return {best, "EREDU_CPU_ISA=" + std::string(requested) + ": this CPU cannot run the " +
                      std::string(isa_name(isa)) + " kernels (they need " +
                      std::string(isa_requirements(isa)) + "); using " +
                      std::string(isa_name(best))};
  }
  return {isa, {}};
}

namespace {
const KernelTable* chosen_table() noexcept {
  try {
    const char* env = std::getenv("EREDU_CPU_ISA");
    const IsaSelection choice = select_isa(env != nullptr ? env : "");
    if (!choice.problem.empty()) {
      log::warn("{}", choice.problem);
    } else if (env != nullptr && *env != '\0') {
      log::info("CPU kernels: {} (EREDU_CPU_ISA)", isa_name(choice.isa));
    }
    return kernels_for(choice.isa);
  } catch (...) {  // allocation failure while building the message: keep the best table
    return kernels_for(best_isa());
  }
}
}  // namespace

const KernelTable& kernels() noexcept {
  static const KernelTable* const table = chosen_table();
  return *table;
}

std::size_t argmax(const float* x, std::size_t n) noexcept {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace eredu::cpu
