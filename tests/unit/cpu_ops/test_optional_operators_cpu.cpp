// The CPU backend's optional operators (add_bias, head_rms_norm, rotary_scaled) against float64
// definitions (tests/support/optional_operator_parity.hpp).
#include <cstring>
#include <memory>

#include "eredu/backends/cpu/cpu_backend.hpp"
#include "optional_operator_parity.hpp"

namespace {

struct CpuAdapter {
  using backend = eredu::cpu::CpuBackend;
  static std::string unavailable() { return {}; }
  static const backend& get() {
    static const backend b(eredu::cpu::CpuBackendOptions{2});
    return b;
  }
  static eredu::cpu::CpuTensor upload(std::size_t rows, std::size_t cols,
                                      const std::vector<float>& v) {
    return eredu::cpu::CpuTensor{rows, cols, v};
  }
  static eredu::cpu::CpuWeight vector_weight(const std::string& name, const std::vector<float>& v) {
    auto bytes = std::make_shared<std::vector<std::byte>>(v.size() * sizeof(float));
    std::memcpy(bytes->data(), v.data(), bytes->size());
    return eredu::cpu::CpuWeight{name, eredu::DType::kF32, {v.size()}, std::move(bytes)};
  }
  static std::vector<float> download(const eredu::cpu::CpuTensor& t) { return t.data; }
};

EREDU_OPTIONAL_OPERATOR_PARITY(Cpu, CpuAdapter)

}  // namespace
