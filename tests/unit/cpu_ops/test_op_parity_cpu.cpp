// The CPU backend in the op-parity suite: each ISA table, single-threaded and on a 3-thread pool,
// against the scalar reference.
#include "cpu_op_table.hpp"
#include "op_parity_suite.hpp"

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

}  // namespace

EREDU_OP_PARITY_BACKEND(CpuGeneric, CpuGenericOps);
EREDU_OP_PARITY_BACKEND(CpuAvx2, CpuAvx2Ops);
EREDU_OP_PARITY_BACKEND(CpuAvx2Threaded, CpuAvx2ThreadedOps);
EREDU_OP_PARITY_BACKEND(CpuGenericThreaded, CpuGenericThreadedOps);
