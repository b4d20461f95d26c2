// Threaded matrix-vector / matrix-matrix products over packed weights.
//
// Threads split the output rows (n_out); each output element is produced by one thread with one
// fixed sequence of operations, so results do not depend on the thread count. Tokens are handled
// in tiles: for each tile, a thread walks its rows, reads and decodes each packed row once, and
// takes its dot with every token of the tile. Decoding is one row at a time into a per-thread
// buffer; the weight matrix is never densified.
#include <algorithm>
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "kernel_impl.hpp"

namespace eredu::cpu::detail {

namespace {
constexpr std::size_t kTokenTile = 16;  // tokens sharing one pass over the weight rows
constexpr std::size_t kRowGrain = 4;    // rows per scheduling unit

// Per-thread scratch that grows to the largest row seen and is then reused (no allocation per
// call once warm).
float* scratch_row(std::size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

float* scratch_rounded_act(std::size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

ActQ8Block* scratch_act(std::size_t n_blocks) {
  thread_local std::vector<ActQ8Block> buffer;
  if (buffer.size() < n_blocks) buffer.resize(n_blocks);
  return buffer.data();
}

// Decodes one packed row into `buffer` (or returns the row itself when it is already F32).
const float* decode_row(const VecOps& ops, DType dtype, const void* row, std::size_t n,
                        float* buffer) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(row);
    case DType::kF16:
      ops.f16_to_f32(static_cast<const std::uint16_t*>(row), buffer, n);
      return buffer;
    default:
      reference::dequantize_row(dtype, row, buffer, n);
      return buffer;
  }
}
}  // namespace

bool supports_matmul(DType dtype) noexcept {
  return reference::supports_dtype(dtype);
}

void get_row(const VecOps& ops, const MatrixView& table, std::size_t row, float* out) {
  const std::size_t row_bytes = packed_row_bytes(table.dtype, table.cols);
  const void* src = static_cast<const std::byte*>(table.data) + row * row_bytes;
  const float* decoded = decode_row(ops, table.dtype, src, table.cols, out);
  if (decoded != out) std::copy(decoded, decoded + table.cols, out);
}

void matmul(const VecOps& ops, const MatrixView& w, const float* x, std::size_t n_tokens, float* y,
            ThreadPool* pool) {
  if (w.rows == 0 || n_tokens == 0) return;
  const std::size_t row_bytes = packed_row_bytes(w.dtype, w.cols);
  const auto* base = static_cast<const std::byte*>(w.data);

  // Integer path: quantize every activation row once, up front, on the calling thread.
  const QuantRowDot qdot = ops.quantize_act_q8 != nullptr ? ops.quant_row_dot(w.dtype) : nullptr;
  const std::size_t n_blocks = w.cols / 32;
  const ActQ8Block* xq = nullptr;
  if (qdot != nullptr) {
    ActQ8Block* buffer = scratch_act(n_blocks * n_tokens);
    for (std::size_t t = 0; t < n_tokens; ++t) {
      ops.quantize_act_q8(x + t * w.cols, buffer + t * n_blocks, w.cols);
    }
    xq = buffer;
  }

  // F16 / BF16 weights on an ISA that tracks ggml: round the activations to the weight precision.
  if (ops.round_act_to_half != nullptr && (w.dtype == DType::kF16 || w.dtype == DType::kBF16)) {
    float* rounded = scratch_rounded_act(n_tokens * w.cols);
    ops.round_act_to_half(w.dtype, x, rounded, n_tokens * w.cols);
    x = rounded;
  }

  auto rows = [&](std::size_t r0, std::size_t r1) {
    float* buffer = qdot != nullptr ? nullptr : scratch_row(w.cols);
    for (std::size_t t0 = 0; t0 < n_tokens; t0 += kTokenTile) {
      const std::size_t t1 = std::min(n_tokens, t0 + kTokenTile);
      for (std::size_t o = r0; o < r1; ++o) {
        const void* row = base + o * row_bytes;
        if (qdot != nullptr) {
          for (std::size_t t = t0; t < t1; ++t) {
            y[t * w.rows + o] = qdot(row, xq + t * n_blocks, n_blocks);
          }
          continue;
        }
        const float* decoded = decode_row(ops, w.dtype, row, w.cols, buffer);
        for (std::size_t t = t0; t < t1; ++t) {
          y[t * w.rows + o] = ops.dot_f32(decoded, x + t * w.cols, w.cols);
        }
      }
    }
  };
  parallel_for(pool, w.rows, rows, kRowGrain);
}

}  // namespace eredu::cpu::detail
