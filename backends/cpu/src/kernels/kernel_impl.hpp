#pragma once
// Internal: the threaded kernels, written once against VecOps. dispatch.cpp binds them to a
// VecOps table to form each ISA's KernelTable.

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/backends/cpu/thread_pool.hpp"
#include "vec_ops.hpp"

namespace eredu::cpu::detail {

bool supports_matmul(DType dtype) noexcept;
void matmul(const VecOps& ops, const MatrixView& w, const float* x, std::size_t n_tokens, float* y,
            ThreadPool* pool);
void get_row(const VecOps& ops, const MatrixView& table, std::size_t row, float* out);
void rms_norm(const float* x, const float* weight, std::size_t n_rows, std::size_t n, float eps,
              float* y, ThreadPool* pool);
void rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
          const std::int32_t* positions, const RopeParams& params, ThreadPool* pool);
void attention(const VecOps& ops, const AttentionArgs& args, ThreadPool* pool);
void swiglu(const float* gate, const float* up, std::size_t n, float* out, ThreadPool* pool);
void add(const float* a, const float* b, std::size_t n, float* out, ThreadPool* pool);
void softmax(float* x, std::size_t n);

}  // namespace eredu::cpu::detail
