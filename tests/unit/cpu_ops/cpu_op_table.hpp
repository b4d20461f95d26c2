#pragma once
// The CPU backend's dispatched kernels as an op-parity OpTable.

#include <memory>
#include <string>

#include "eredu/backends/cpu/kernels.hpp"
#include "op_parity.hpp"

namespace eredu::testing {

// Wraps `table` (null: unavailable on this CPU) running on `pool` (null: single-threaded).
inline op_parity::OpTable cpu_op_table(const cpu::KernelTable* table, cpu::ThreadPool* pool,
                                       std::string name) {
  using namespace op_parity;
  OpTable t;
  t.name = std::move(name);
  if (table == nullptr) {
    t.unavailable = "this CPU lacks the instruction set of " + t.name;
    return t;
  }
  t.matmul = [table, pool](const MatrixView& w, const float* x, std::size_t n, float* y) {
    if (!table->supports_matmul(w.dtype)) return unsupported(std::string(to_string(w.dtype)));
    table->matmul(w, x, n, y, pool);
    return op_parity::ok();
  };
  t.rms_norm = [table, pool](const float* x, const float* w, std::size_t r, std::size_t n,
                             float eps, float* y) {
    table->rms_norm(x, w, r, n, eps, y, pool);
    return op_parity::ok();
  };
  t.rope = [table, pool](float* x, std::size_t nt, std::size_t nh, std::size_t hd,
                         const std::int32_t* p, const RopeParams& params) {
    table->rope(x, nt, nh, hd, p, params, pool);
    return op_parity::ok();
  };
  t.attention = [table, pool](const AttentionArgs& a) {
    table->attention(a, pool);
    return op_parity::ok();
  };
  t.swiglu = [table, pool](const float* g, const float* u, std::size_t n, float* o) {
    table->swiglu(g, u, n, o, pool);
    return op_parity::ok();
  };
  t.add = [table, pool](const float* a, const float* b, std::size_t n, float* o) {
    table->add(a, b, n, o, pool);
    return op_parity::ok();
  };
  t.get_row = [table](const MatrixView& m, std::size_t row, float* out) {
    if (!table->supports_matmul(m.dtype)) return unsupported(std::string(to_string(m.dtype)));
    table->get_row(m, row, out);
    return op_parity::ok();
  };
  t.softmax = [table](float* x, std::size_t n) {
    table->softmax(x, n);
    return op_parity::ok();
  };
  return t;
}

}  // namespace eredu::testing
