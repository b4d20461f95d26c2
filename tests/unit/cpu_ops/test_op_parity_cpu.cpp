// The CPU backend in the op-parity suite, against the scalar reference, at two levels:
//   * each ISA kernel table (scalar, AVX2, AVX-512), single-threaded and on a 3-thread pool -- the
//     scalar-vs-AVX2 kernel parity, including what no operator exposes (softmax, free positions);
//   * CpuBackend's NeuralBackend operators (neural_op_table.hpp), the path the model runs, on one
//     thread and on three.
#include <memory>
#include <span>
#include <vector>

#include "cpu_op_table.hpp"
#include "eredu/backends/cpu/cpu_backend.hpp"
#include "neural_op_table.hpp"
#include "op_parity_suite.hpp"
#include "optional_operator_parity.hpp"

namespace {

using eredu::cpu::Isa;
using eredu::cpu::kernels_for;
using eredu::testing::cpu_op_table;
using eredu::testing::op_parity::OpTable;

eredu::cpu::ThreadPool& shared_pool() {
  static eredu::cpu::ThreadPool pool(3);
  return pool;
}

struct CpuGenericOps {
  static OpTable make() { return cpu_op_table(kernels_for(Isa::kGeneric), nullptr, "cpu-generic"); }
};
struct CpuAvx2Ops {
  static OpTable make() { return cpu_op_table(kernels_for(Isa::kAvx2), nullptr, "cpu-avx2"); }
};
struct CpuAvx512Ops {
  static OpTable make() { return cpu_op_table(kernels_for(Isa::kAvx512), nullptr, "cpu-avx512"); }
};
struct CpuAvx2ThreadedOps {
  static OpTable make() {
    return cpu_op_table(kernels_for(Isa::kAvx2), &shared_pool(), "cpu-avx2-3threads");
  }
};
struct CpuGenericThreadedOps {
  static OpTable make() {
    return cpu_op_table(kernels_for(Isa::kGeneric), &shared_pool(), "cpu-generic-3threads");
  }
};

// CpuBackend through the neural_op_table adapter: its tensors are host matrices already.
class CpuAdapter {
 public:
  using backend_type = eredu::cpu::CpuBackend;
  explicit CpuAdapter(std::size_t threads)
      : backend_(eredu::cpu::CpuBackendOptions{.threads = threads}) {}
  const backend_type& backend() const { return backend_; }
  backend_type::materialization_context materialization_context() const { return {}; }
  eredu::Result<eredu::cpu::CpuTensor> upload(std::span<const float> values, std::size_t rows,
                                              std::size_t cols) const {
    return eredu::cpu::CpuTensor{rows, cols,
                                 eredu::cpu::ActivationValues(values.begin(), values.end())};
  }
  eredu::Result<std::vector<float>> download(const eredu::cpu::CpuTensor& t) const {
    return std::vector<float>(t.data.begin(), t.data.end());
  }
  void after_op() const {}

 private:
  backend_type backend_;
};

struct CpuOperatorOps {
  static OpTable make() {
    return eredu::testing::neural_op_table(std::make_shared<const CpuAdapter>(1), "cpu-operators");
  }
};
struct CpuOperatorThreadedOps {
  static OpTable make() {
    static const auto adapter = std::make_shared<const CpuAdapter>(3);
    return eredu::testing::neural_op_table(adapter, "cpu-operators-3threads");
  }
};
// The optional operators the decoder families use, on 1 and on 3 threads.
struct CpuOptional {
  static std::string unavailable() { return {}; }
  static std::shared_ptr<const CpuAdapter> adapter() { return std::make_shared<CpuAdapter>(1); }
};
struct CpuOptionalThreaded {
  static std::string unavailable() { return {}; }
  static std::shared_ptr<const CpuAdapter> adapter() { return std::make_shared<CpuAdapter>(3); }
};

}  // namespace

EREDU_OP_PARITY_BACKEND(CpuGeneric, CpuGenericOps);
EREDU_OP_PARITY_BACKEND(CpuAvx2, CpuAvx2Ops);
EREDU_OP_PARITY_BACKEND(CpuAvx512, CpuAvx512Ops);
EREDU_OP_PARITY_BACKEND(CpuAvx2Threaded, CpuAvx2ThreadedOps);
EREDU_OP_PARITY_BACKEND(CpuGenericThreaded, CpuGenericThreadedOps);
EREDU_OP_PARITY_BACKEND(CpuOperators, CpuOperatorOps);
EREDU_OP_PARITY_BACKEND(CpuOperatorsThreaded, CpuOperatorThreadedOps);
EREDU_OPTIONAL_OPERATOR_PARITY(Cpu, CpuOptional)
EREDU_OPTIONAL_OPERATOR_PARITY(CpuThreaded, CpuOptionalThreaded)
