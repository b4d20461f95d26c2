#pragma once
// The CPU backend's AMX kernels instantiated on the emulated tiles (emulated_tiles.hpp), from a
// translation unit built with the AVX-512 flags their float steps need
// (emulated_amx_kernels.cpp). The tests are built for the baseline and call these only after
// checking that the CPU runs the AVX-512 table, so that nothing with AVX-512 instructions runs on
// a CPU without it: not the tests' start-up code, nor gtest's listing of them, nor a skipped test.
#include <cstddef>

#include "vec_ops.hpp"

namespace eredu::testing::amx {

// The AVX-512 table's primitives with the prompt products (blocks of 32 and K-quants read as
// stored) replaced by the AMX kernel on emulated tiles, for the backend's own matmul driver.
cpu::detail::VecOps avx512_ops_with_emulated_amx_prompts();

// The same with the row-group prompt products (K-quants, blocks of 32) replaced instead.
cpu::detail::VecOps avx512_ops_with_emulated_amx_row_groups();

// What the emulated tiles saw so far, on every thread: tile dot products executed, and the
// instructions the hardware would have faulted on (with the first one's description).
struct EmulationReport {
  std::size_t products;
  std::size_t faults;
  char first_fault[256];
};
EmulationReport emulated_amx_report();

}  // namespace eredu::testing::amx
