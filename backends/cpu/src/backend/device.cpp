// CpuBackend device discovery: the host CPU (model name from /proc/cpuinfo, hardware threads,
// memory from sysconf, ISA features from cpuid). Capabilities fail closed: only exact completion
// (every CPU submission finishes before it returns) is reported.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/backends/cpu/kernels.hpp"

namespace eredu::cpu {
namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        const auto start = name.find_first_not_of(" \t");
        return start == std::string::npos ? std::string("cpu") : name.substr(start);
      }
    }
  }
  return "cpu";
}

std::string isa_features() {
  const CpuFeatures& f = cpu_features();
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(f.avx2, "AVX2");
  add(f.fma, "FMA");
  add(f.f16c, "F16C");
  add(f.avx512f, "AVX512F");
  add(f.amx_tile && f.amx_int8 && f.amx_granted, "AMX");
  add(f.amx_tile && f.amx_int8 && !f.amx_granted, "AMX(tile data not granted)");
  return out.empty() ? std::string("baseline") : out;
}

// MemAvailable of /proc/meminfo (what the kernel can hand out without swapping: free pages plus
// reclaimable cache), in bytes; nullopt where it cannot be read.
std::optional<std::uint64_t> available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

BackendDescriptor CpuBackend::descriptor() const {
  return BackendDescriptor{"cpu", "1"};
}

Result<std::vector<DeviceReport>> CpuBackend::devices() const {
  DeviceReport report;
  report.descriptor.id = "cpu:0";
  report.descriptor.name =
      cpu_model_name() + " (" + std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
      " threads; " + isa_features() + "; kernels " + std::string(isa_name(kernels().isa)) + ")";
  report.descriptor.family = "cpu";
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) {
    report.descriptor.memory_bytes =
        static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  }
  report.descriptor.free_memory_bytes = available_memory_bytes();
  report.capabilities.exact_completion = true;
  return std::vector<DeviceReport>{report};
}

}  // namespace eredu::cpu
