#pragma once
// Encode with encoding::quantize() and decode with encoding::dequantize(), for the quantizer tests
// whose reference is the decoder (test_quantize_k.cpp, test_quantize_iq4.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "eredu/checkpoint/encoding/codec.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::testing::codec {

// x's encoding, written into bytes first set to `fill` (so a byte left unwritten shows).
inline std::vector<std::uint8_t> encode(DType dtype, const std::vector<float>& x,
                                        std::uint8_t fill) {
  std::vector<std::uint8_t> bytes(encoding::encoded_size(dtype, x.size()).value(), fill);
  const auto r = encoding::quantize(dtype, x, std::as_writable_bytes(std::span(bytes)));
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().what());
  return bytes;
}

// The n values `bytes` decode to.
inline std::vector<float> decode(DType dtype, const std::vector<std::uint8_t>& bytes,
                                 std::size_t n) {
  std::vector<float> y(n);
  const auto r = encoding::dequantize(dtype, std::as_bytes(std::span(bytes)), y);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().what());
  return y;
}

}  // namespace eredu::testing::codec
