#pragma once
// Checked entry points over raw bytes: decode any supported tensor encoding to float32, and encode
// float32 to the encodings eredu can write. These validate sizes (whole blocks, exact byte
// lengths) before touching memory, so they are safe on untrusted tensor payloads; the per-block
// reference code they call lives in dequantize_block.hpp and quantize_block.hpp.
//
// Element order is the stored order: block b of the bytes decodes to floats
// [b * block_elements, (b + 1) * block_elements).

#include <cstddef>
#include <cstdint>
#include <span>

#include "eredu/core/dtype.hpp"
#include "eredu/core/result.hpp"

namespace eredu::encoding {

// True for the encodings dequantize() decodes: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS.
[[nodiscard]] bool can_dequantize(DType dtype) noexcept;

// True for the encodings quantize() produces: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
[[nodiscard]] bool can_quantize(DType dtype) noexcept;

// The dtypes of can_dequantize() / can_quantize(), in DType order.
[[nodiscard]] std::span<const DType> dequantizable_dtypes() noexcept;
[[nodiscard]] std::span<const DType> quantizable_dtypes() noexcept;

// Bytes that `n_elements` values take in `dtype`. Errors: kInvalidArgument when n_elements is not
// a whole number of blocks, kOverflow when the size does not fit 64 bits.
[[nodiscard]] Result<std::uint64_t> encoded_size(DType dtype, std::uint64_t n_elements);

// Decodes `src` (stored as `dtype`) into all of `dst`. Requires dst.size() to be a whole number of
// blocks and src.size() to be exactly the encoded size of dst.size() elements.
// Errors: kUnsupported for a dtype outside can_dequantize(); kInvalidArgument for a length
// mismatch (the message gives both sizes). Nothing is read outside `src` or written outside `dst`;
// on error `dst` is untouched.
[[nodiscard]] Result<void> dequantize(DType dtype, std::span<const std::byte> src,
                                      std::span<float> dst);

// Encodes all of `src` as `dtype` into `dst`. Requires src.size() to be a whole number of blocks
// and dst.size() to be exactly its encoded size. Block encodings follow ggml's reference
// quantizers (see quantize_block.hpp); F16 and BF16 round to nearest even.
// Errors: kUnsupported for a dtype outside can_quantize(); kInvalidArgument for a length mismatch
// or, for the block encodings, a NaN or infinite input (the message names its index). On error
// `dst` is untouched.
[[nodiscard]] Result<void> quantize(DType dtype, std::span<const float> src,
                                    std::span<std::byte> dst);

}  // namespace eredu::encoding
