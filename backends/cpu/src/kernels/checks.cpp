// Argument checks for the kernels (see kernel_checks.hpp).
#include <cmath>
#include <limits>
#include <string>

#include "eredu/backends/cpu/kernel_checks.hpp"
#include "eredu/backends/cpu/reference.hpp"

namespace eredu::cpu {

Result<void> check_matrix(const MatrixView& w, std::size_t available_bytes) {
  const std::string name(to_string(w.dtype));
  if (!reference::supports_dtype(w.dtype)) {
    return fail(ErrorCode::kUnsupported, "the CPU kernels cannot read " + name + " weights");
  }
  const std::size_t block = dtype_info(w.dtype).block_elements;
  if (w.cols == 0 || w.cols % block != 0) {
    return fail(ErrorCode::kInvalidArgument,
                "matrix of " + name + " has " + std::to_string(w.cols) +
                    " columns, not a positive multiple of the block size " + std::to_string(block));
  }
  if (w.data == nullptr && w.rows != 0) {
    return fail(ErrorCode::kInvalidArgument, "matrix of " + name + " has no data");
  }
  const std::size_t row_bytes = packed_row_bytes(w.dtype, w.cols);
  if (w.rows > std::numeric_limits<std::size_t>::max() / row_bytes) {
    return fail(ErrorCode::kOverflow, "matrix of " + std::to_string(w.rows) + " rows of " +
                                          std::to_string(row_bytes) + " bytes overflows");
  }
  if (w.rows * row_bytes > available_bytes) {
    return fail(ErrorCode::kInvalidArgument,
                "matrix [" + std::to_string(w.rows) + ", " + std::to_string(w.cols) + "] of " +
                    name + " needs " + std::to_string(w.rows * row_bytes) + " bytes, " +
                    std::to_string(available_bytes) + " available");
  }
  return ok();
}

Result<void> check_rope(const RopeParams& params, std::size_t head_dim) {
  if (params.n_rot == 0 || params.n_rot % 2 != 0 || params.n_rot > head_dim) {
    return fail(ErrorCode::kInvalidArgument, "rope n_rot " + std::to_string(params.n_rot) +
                                                 " must be even, positive and at most head_dim " +
                                                 std::to_string(head_dim));
  }
  if (!(std::isfinite(params.freq_base) && params.freq_base > 0.0F)) {
    return fail(ErrorCode::kInvalidArgument,
                "rope freq_base " + std::to_string(params.freq_base) + " must be positive");
  }
  if (!(std::isfinite(params.freq_scale) && params.freq_scale > 0.0F)) {
    return fail(ErrorCode::kInvalidArgument,
                "rope freq_scale " + std::to_string(params.freq_scale) + " must be positive");
  }
  return ok();
}

Result<void> check_attention(const AttentionArgs& a) {
  if (a.n_head_kv == 0 || a.n_head == 0 || a.n_head % a.n_head_kv != 0) {
    return fail(ErrorCode::kInvalidArgument, "attention needs n_head (" + std::to_string(a.n_head) +
                                                 ") to be a positive multiple of n_head_kv (" +
                                                 std::to_string(a.n_head_kv) + ")");
  }
  if (a.head_dim == 0) return fail(ErrorCode::kInvalidArgument, "attention head_dim is 0");
  if (a.kv_dtype != DType::kF32 && a.kv_dtype != DType::kF16) {
    return fail(ErrorCode::kUnsupported, "attention KV cache of " +
                                             std::string(to_string(a.kv_dtype)) +
                                             " (the CPU kernels read F32 or F16)");
  }
  if (a.n_tokens > 0 && (a.q == nullptr || a.k == nullptr || a.v == nullptr ||
                         a.positions == nullptr || a.out == nullptr)) {
    return fail(ErrorCode::kInvalidArgument, "attention argument pointer is null");
  }
  for (std::size_t t = 0; t < a.n_tokens; ++t) {
    if (a.positions[t] < 0 || static_cast<std::size_t>(a.positions[t]) >= a.n_kv) {
      return fail(ErrorCode::kInvalidArgument,
                  "attention query token " + std::to_string(t) + " is at position " +
                      std::to_string(a.positions[t]) + ", outside the " + std::to_string(a.n_kv) +
                      " cached positions");
    }
  }
  return ok();
}

}  // namespace eredu::cpu
