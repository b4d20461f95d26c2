#pragma once
// DType -> compile-time format, written once for every kernel family: with_decode_format calls
// `f` with a value of the decode:: format of a weight encoding (embed, matmul), with_dot_traits
// with the dot:: traits of a quantized encoding (matvec over q8_1 activations). An encoding
// without a kernel is kUnsupported, naming the operation.

#include <string>

#include "eredu/backends/cuda/decode/decode_block.hpp"
#include "eredu/backends/cuda/dot/all_dots.hpp"
#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::cuda::kernels {

inline Error no_kernel(const char* op, DType dtype) {
  return Error(ErrorCode::kUnsupported, std::string("cuda ") + op + ": no kernel for weights of " +
                                            std::string(to_string(dtype)));
}

template <typename F>
Result<void> with_decode_format(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kF32:
      return f(decode::F32{});
    case DType::kF16:
      return f(decode::F16{});
    case DType::kBF16:
      return f(decode::BF16{});
    case DType::kQ8_0:
      return f(decode::Q8_0{});
    case DType::kQ4_0:
      return f(decode::Q4_0{});
    case DType::kQ4_1:
      return f(decode::Q4_1{});
    case DType::kQ5_0:
      return f(decode::Q5_0{});
    case DType::kQ5_1:
      return f(decode::Q5_1{});
    case DType::kQ2_K:
      return f(decode::Q2_K{});
    case DType::kQ3_K:
      return f(decode::Q3_K{});
    case DType::kQ4_K:
      return f(decode::Q4_K{});
    case DType::kQ5_K:
      return f(decode::Q5_K{});
    case DType::kQ6_K:
      return f(decode::Q6_K{});
    case DType::kIQ4_NL:
      return f(decode::IQ4_NL{});
    case DType::kIQ4_XS:
      return f(decode::IQ4_XS{});
    default:
      return fail(no_kernel(op, dtype));
  }
}

// The float encodings only (F32, F16, BF16): kernels that take float activations.
template <typename F>
Result<void> with_float_format(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kF32:
      return f(decode::F32{});
    case DType::kF16:
      return f(decode::F16{});
    case DType::kBF16:
      return f(decode::BF16{});
    default:
      return fail(no_kernel(op, dtype));
  }
}

template <typename F>
Result<void> with_dot_traits(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kQ8_0:
      return f(dot::DotQ8_0{});
    case DType::kQ4_0:
      return f(dot::DotQ4_0{});
    case DType::kQ4_1:
      return f(dot::DotQ4_1{});
    case DType::kQ5_0:
      return f(dot::DotQ5_0{});
    case DType::kQ5_1:
      return f(dot::DotQ5_1{});
    case DType::kQ2_K:
      return f(dot::DotQ2_K{});
    case DType::kQ3_K:
      return f(dot::DotQ3_K{});
    case DType::kQ4_K:
      return f(dot::DotQ4_K{});
    case DType::kQ5_K:
      return f(dot::DotQ5_K{});
    case DType::kQ6_K:
      return f(dot::DotQ6_K{});
    case DType::kIQ4_NL:
      return f(dot::DotIQ4_NL{});
    case DType::kIQ4_XS:
      return f(dot::DotIQ4_XS{});
    default:
      return fail(no_kernel(op, dtype));
  }
}

// Warp-wide sum (every lane gets it).
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  return v;
}

}  // namespace eredu::cuda::kernels
