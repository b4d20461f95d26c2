// Every model family on the CPU backend generates llama.cpp's exact greedy tokens (the suite is
// tests/support/family_greedy_suite.hpp, written once for every backend).
#include "eredu/backends/cpu/cpu_backend.hpp"
#include "eredu/runtime/load_model.hpp"
#include "family_greedy_suite.hpp"

namespace {

struct Cpu {
  static std::string unavailable() { return {}; }
  static auto load(const std::filesystem::path& path, eredu::KvCacheType kv) {
    eredu::cpu::CpuLoadOptions options;
    options.kv_cache_type = kv;
    return eredu::runtime::load_model(eredu::cpu::CpuBackend(eredu::cpu::CpuBackendOptions{2}),
                                      path, options);
  }
  static void after_case() {}
};

EREDU_FAMILY_GREEDY_SUITE(Cpu, Cpu)

}  // namespace
