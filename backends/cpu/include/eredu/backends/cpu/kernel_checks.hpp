#pragma once
// Argument checks for the kernels. The kernels themselves trust their arguments (they sit on the
// hot path); callers that take shapes from a checkpoint or a request validate them once with
// these, at bind or plan time, and get an error naming what is wrong.

#include <cstddef>

#include "eredu/backends/cpu/kernel_types.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cpu {

// `w` can be read by matmul / get_row: a supported encoding, data present, cols a positive
// multiple of the block size, and rows * row bytes (overflow-checked) within `available_bytes`.
[[nodiscard]] Result<void> check_matrix(const MatrixView& w, std::size_t available_bytes);

// n_rot even, positive and <= head_dim; freq_base > 0 and freq_scale > 0, both finite.
[[nodiscard]] Result<void> check_rope(const RopeParams& params, std::size_t head_dim);

// Pointers present, n_head a positive multiple of n_head_kv, head_dim > 0, KV cache F32 or F16,
// and every query position in [0, n_kv).
[[nodiscard]] Result<void> check_attention(const AttentionArgs& args);

}  // namespace eredu::cpu
