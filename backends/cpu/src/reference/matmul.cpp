// Reference matrix products and row decoding over packed weights.
#include <vector>

#include "eredu/backends/cpu/reference.hpp"
#include "eredu/checkpoint/encoding/dequantize_block.hpp"

namespace eredu::cpu::reference {

namespace enc = eredu::encoding;

bool supports_dtype(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ8_0:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kIQ4_NL:
    case DType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

void dequantize_row(DType dtype, const void* row, float* out, std::size_t n) {
  switch (dtype) {
    case DType::kF32: {
      const auto* src = static_cast<const float*>(row);
      for (std::size_t i = 0; i < n; ++i)
        out[i] = src[i];
      return;
    }
    case DType::kF16:
      return enc::dequantize_row_f16(static_cast<const std::uint16_t*>(row), out, n);
    case DType::kBF16:
      return enc::dequantize_row_bf16(static_cast<const std::uint16_t*>(row), out, n);
    case DType::kQ4_0:
      return enc::dequantize_row(static_cast<const enc::BlockQ4_0*>(row), out, n);
    case DType::kQ4_1:
      return enc::dequantize_row(static_cast<const enc::BlockQ4_1*>(row), out, n);
    case DType::kQ5_0:
      return enc::dequantize_row(static_cast<const enc::BlockQ5_0*>(row), out, n);
    case DType::kQ5_1:
      return enc::dequantize_row(static_cast<const enc::BlockQ5_1*>(row), out, n);
    case DType::kQ8_0:
      return enc::dequantize_row(static_cast<const enc::BlockQ8_0*>(row), out, n);
    case DType::kQ2_K:
      return enc::dequantize_row(static_cast<const enc::BlockQ2_K*>(row), out, n);
    case DType::kQ3_K:
      return enc::dequantize_row(static_cast<const enc::BlockQ3_K*>(row), out, n);
    case DType::kQ4_K:
      return enc::dequantize_row(static_cast<const enc::BlockQ4_K*>(row), out, n);
    case DType::kQ5_K:
      return enc::dequantize_row(static_cast<const enc::BlockQ5_K*>(row), out, n);
    case DType::kQ6_K:
      return enc::dequantize_row(static_cast<const enc::BlockQ6_K*>(row), out, n);
    case DType::kIQ4_NL:
      return enc::dequantize_row(static_cast<const enc::BlockIQ4_NL*>(row), out, n);
    case DType::kIQ4_XS:
      return enc::dequantize_row(static_cast<const enc::BlockIQ4_XS*>(row), out, n);
    default:
      return;  // precondition: supports_dtype(dtype)
  }
}

void get_row(const MatrixView& table, std::size_t row, float* out) {
  const std::size_t row_bytes = packed_row_bytes(table.dtype, table.cols);
  const auto* base = static_cast<const std::byte*>(table.data);
  dequantize_row(table.dtype, base + row * row_bytes, out, table.cols);
}

void matmul(const MatrixView& w, const float* x, std::size_t n_tokens, float* y) {
  std::vector<float> w_row(w.cols);
  for (std::size_t o = 0; o < w.rows; ++o) {
    get_row(w, o, w_row.data());
    for (std::size_t t = 0; t < n_tokens; ++t) {
      const float* x_row = x + t * w.cols;
      double sum = 0.0;
      for (std::size_t i = 0; i < w.cols; ++i) {
        sum += static_cast<double>(w_row[i]) * static_cast<double>(x_row[i]);
      }
      y[t * w.rows + o] = static_cast<float>(sum);
    }
  }
}

}  // namespace eredu::cpu::reference
