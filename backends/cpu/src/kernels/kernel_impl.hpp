#pragma once
// Internal: the threaded kernels, written once against VecOps. dispatch.cpp binds them to a
// VecOps table to form each ISA's KernelTable.

#include <span>

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/backends/cpu/thread_pool.hpp"
#include "vec_ops.hpp"

namespace eredu::cpu::detail {

// Work below which handing a piece to another thread costs more than it saves: waking a worker
// takes microseconds, and on an oversubscribed machine a descheduled one much longer. Counted in
// multiply-adds (or comparable element operations); about 5 us on one core.
inline constexpr std::size_t kMinParallelWork = std::size_t{1} << 16;

// Scheduling grain (indices per piece) so that a piece holds at least kMinParallelWork when one
// index costs `work_per_index`.
constexpr std::size_t grain_for(std::size_t work_per_index) noexcept {
  const std::size_t per = work_per_index == 0 ? 1 : work_per_index;
  return (kMinParallelWork + per - 1) / per;
}

bool supports_matmul(DType dtype) noexcept;
void matmul(const VecOps& ops, const MatrixView& w, const float* x, std::size_t n_tokens, float* y,
            ThreadPool* pool);
// Several products of one input x [n_tokens][cols]: ys[i] = matmul(ws[i]) bit for bit, each
// activation form made once for all of them (token_forms.hpp).
void matmul_shared_input(const VecOps& ops, std::span<const MatrixView> ws, const float* x,
                         std::size_t n_tokens, std::span<float* const> ys, ThreadPool* pool);
// One token through several weights of its width: ys[i] = matmul(ws[i]) bit for bit, the
// activation forms made once and all the rows one pool job (one_token_matmul.cpp). Also the path
// matmul() takes for one token.
void matmul_one_token(const VecOps& ops, std::span<const MatrixView> ws, const float* x,
                      std::span<float* const> ys, ThreadPool* pool);
// Decodes one packed row into `buffer`, or returns the row itself when it is already F32.
const float* decode_row(const VecOps& ops, DType dtype, const void* row, std::size_t n,
                        float* buffer);
void get_row(const VecOps& ops, const MatrixView& table, std::size_t row, float* out);
void rms_norm(const float* x, const float* weight, std::size_t n_rows, std::size_t n, float eps,
              float* y, ThreadPool* pool);
void rope(float* x, std::size_t n_tokens, std::size_t n_heads, std::size_t head_dim,
          const std::int32_t* positions, const RopeParams& params, ThreadPool* pool);
void attention(const VecOps& ops, const AttentionArgs& args, ThreadPool* pool);
void swiglu(const VecOps& ops, const float* gate, const float* up, std::size_t n, float* out,
            ThreadPool* pool);
void add(const float* a, const float* b, std::size_t n, float* out, ThreadPool* pool);
void softmax(float* x, std::size_t n);

}  // namespace eredu::cpu::detail
