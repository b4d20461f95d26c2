#pragma once
// Runs the CUDA backend's block decoders (decode/decode_block.hpp) on the host over a whole
// tensor, chosen by DType, so that tests can compare them with reference values.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "eredu/backends/cuda/decode/decode_block.hpp"
#include "eredu/core/dtype.hpp"

namespace eredu::testing {

template <typename Format>
bool decode_all(std::span<const std::byte> bytes, std::vector<float>& out) {
  const std::size_t n_blocks = bytes.size() / Format::kBlockBytes;
  if (n_blocks * Format::kBlockBytes != bytes.size()) return false;
  out.assign(n_blocks * Format::kBlockElements, 0.0f);
  cuda::decode::decode_blocks<Format>(reinterpret_cast<const std::uint8_t*>(bytes.data()), n_blocks,
                                      out.data());
  return true;
}

// Decodes every block of `bytes` (an encoding of `dtype`) into `out`; false for an encoding
// without a device decoder or bytes that are not whole blocks.
inline bool decode_with_device_decoders(DType dtype, std::span<const std::byte> bytes,
                                        std::vector<float>& out) {
  namespace d = cuda::decode;
  switch (dtype) {
    case DType::kF16:
      return decode_all<d::F16>(bytes, out);
    case DType::kBF16:
      return decode_all<d::BF16>(bytes, out);
    case DType::kQ8_0:
      return decode_all<d::Q8_0>(bytes, out);
    case DType::kQ4_0:
      return decode_all<d::Q4_0>(bytes, out);
    case DType::kQ4_1:
      return decode_all<d::Q4_1>(bytes, out);
    case DType::kQ5_0:
      return decode_all<d::Q5_0>(bytes, out);
    case DType::kQ5_1:
      return decode_all<d::Q5_1>(bytes, out);
    case DType::kQ2_K:
      return decode_all<d::Q2_K>(bytes, out);
    case DType::kQ3_K:
      return decode_all<d::Q3_K>(bytes, out);
    case DType::kQ4_K:
      return decode_all<d::Q4_K>(bytes, out);
    case DType::kQ5_K:
      return decode_all<d::Q5_K>(bytes, out);
    case DType::kQ6_K:
      return decode_all<d::Q6_K>(bytes, out);
    case DType::kIQ4_NL:
      return decode_all<d::IQ4_NL>(bytes, out);
    case DType::kIQ4_XS:
      return decode_all<d::IQ4_XS>(bytes, out);
    default:
      return false;
  }
}

}  // namespace eredu::testing
