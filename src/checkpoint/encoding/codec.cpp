// Checked byte-level (de)quantization: size validation, then block-by-block dispatch to the
// reference block code. Blocks are copied out of (and into) the byte spans with memcpy, so the
// spans need no particular alignment and no object is accessed through a cast pointer.

#include "eredu/checkpoint/encoding/codec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "eredu/checkpoint/encoding/blocks.hpp"
#include "eredu/checkpoint/encoding/dequantize_block.hpp"
#include "eredu/checkpoint/encoding/half.hpp"
#include "eredu/checkpoint/encoding/quantize_block.hpp"
#include "eredu/checkpoint/encoding/quantize_iq4_block.hpp"
#include "eredu/checkpoint/encoding/quantize_k_block.hpp"

namespace eredu::encoding {
namespace {

constexpr std::array kDequantizable{
    DType::kF32,  DType::kF16,  DType::kQ4_0,   DType::kQ4_1,   DType::kQ5_0,
    DType::kQ5_1, DType::kQ8_0, DType::kQ2_K,   DType::kQ3_K,   DType::kQ4_K,
    DType::kQ5_K, DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS, DType::kBF16,
};
constexpr std::array kQuantizable{
    DType::kF32,  DType::kF16,  DType::kQ4_0, DType::kQ4_1,   DType::kQ5_0,
    DType::kQ5_1, DType::kQ8_0, DType::kQ2_K, DType::kQ3_K,   DType::kQ4_K,
    DType::kQ5_K, DType::kQ6_K, DType::kBF16, DType::kIQ4_NL, DType::kIQ4_XS,
};

template <typename Block>
void decode_blocks(std::span<const std::byte> src, std::span<float> dst) {
  constexpr std::size_t kElements = BlockTraits<Block>::kElements;
  const std::size_t blocks = dst.size() / kElements;
  for (std::size_t i = 0; i < blocks; ++i) {
    Block block{};
    std::memcpy(&block, src.data() + i * sizeof(Block), sizeof(Block));
    dequantize_block(block, dst.data() + i * kElements);
  }
}

template <typename Block>
void encode_blocks(std::span<const float> src, std::span<std::byte> dst) {
  constexpr std::size_t kElements = BlockTraits<Block>::kElements;
  const std::size_t blocks = src.size() / kElements;
  for (std::size_t i = 0; i < blocks; ++i) {
    Block block{};
    quantize_block(src.data() + i * kElements, block);
    std::memcpy(dst.data() + i * sizeof(Block), &block, sizeof(Block));
  }
}

std::uint16_t load_u16(const std::byte* p) {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
void store_u16(std::byte* p, std::uint16_t v) {
  std::memcpy(p, &v, sizeof(v));
}

// Checks that `n_elements` values of `dtype` take exactly `n_bytes`.
Result<void> check_sizes(DType dtype, std::uint64_t n_elements, std::uint64_t n_bytes,
                         const char* operation) {
  EREDU_TRY(const std::uint64_t expected, encoded_size(dtype, n_elements));
  if (expected != n_bytes) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(operation) + ": " + std::to_string(n_elements) + " " +
                    std::string(to_string(dtype)) + " elements take " + std::to_string(expected) +
                    " bytes, but the byte buffer holds " + std::to_string(n_bytes));
  }
  return ok();
}

}  // namespace

bool can_dequantize(DType dtype) noexcept {
  return std::find(kDequantizable.begin(), kDequantizable.end(), dtype) != kDequantizable.end();
}
bool can_quantize(DType dtype) noexcept {
  return std::find(kQuantizable.begin(), kQuantizable.end(), dtype) != kQuantizable.end();
}
std::span<const DType> dequantizable_dtypes() noexcept {
  return kDequantizable;
}
std::span<const DType> quantizable_dtypes() noexcept {
  return kQuantizable;
}

Result<std::uint64_t> encoded_size(DType dtype, std::uint64_t n_elements) {
  const DTypeInfo& info = dtype_info(dtype);
  if (n_elements % info.block_elements != 0) {
    return fail(ErrorCode::kInvalidArgument,
                std::to_string(n_elements) + " elements are not a whole number of " +
                    std::string(info.name) + " blocks of " + std::to_string(info.block_elements));
  }
  const std::uint64_t blocks = n_elements / info.block_elements;
  if (blocks > UINT64_MAX / info.block_bytes) {
    return fail(ErrorCode::kOverflow, "the byte size of " + std::to_string(n_elements) + " " +
                                          std::string(info.name) + " elements overflows 64 bits");
  }
  return blocks * info.block_bytes;
}

Result<void> dequantize(DType dtype, std::span<const std::byte> src, std::span<float> dst) {
  if (!can_dequantize(dtype)) {
    return fail(ErrorCode::kUnsupported,
                "dequantize: no decoder for encoding " + std::string(to_string(dtype)));
  }
  EREDU_TRY_VOID(check_sizes(dtype, dst.size(), src.size(), "dequantize"));
  switch (dtype) {
    case DType::kF32:
      if (!dst.empty()) std::memcpy(dst.data(), src.data(), src.size());
      break;
    case DType::kF16:
      for (std::size_t i = 0; i < dst.size(); ++i)
        dst[i] = fp16_to_fp32(load_u16(&src[2 * i]));
      break;
    case DType::kBF16:
      for (std::size_t i = 0; i < dst.size(); ++i)
        dst[i] = bf16_to_fp32(load_u16(&src[2 * i]));
      break;
    case DType::kQ4_0:
      decode_blocks<BlockQ4_0>(src, dst);
      break;
    case DType::kQ4_1:
      decode_blocks<BlockQ4_1>(src, dst);
      break;
    case DType::kQ5_0:
      decode_blocks<BlockQ5_0>(src, dst);
      break;
    case DType::kQ5_1:
      decode_blocks<BlockQ5_1>(src, dst);
      break;
    case DType::kQ8_0:
      decode_blocks<BlockQ8_0>(src, dst);
      break;
    case DType::kQ2_K:
      decode_blocks<BlockQ2_K>(src, dst);
      break;
    case DType::kQ3_K:
      decode_blocks<BlockQ3_K>(src, dst);
      break;
    case DType::kQ4_K:
      decode_blocks<BlockQ4_K>(src, dst);
      break;
    case DType::kQ5_K:
      decode_blocks<BlockQ5_K>(src, dst);
      break;
    case DType::kQ6_K:
      decode_blocks<BlockQ6_K>(src, dst);
      break;
    case DType::kIQ4_NL:
      decode_blocks<BlockIQ4_NL>(src, dst);
      break;
    case DType::kIQ4_XS:
      decode_blocks<BlockIQ4_XS>(src, dst);
      break;
    default:
      return fail(ErrorCode::kInternal, "dequantize: decoder table and dispatch disagree on " +
                                            std::string(to_string(dtype)));
  }
  return ok();
}

Result<void> quantize(DType dtype, std::span<const float> src, std::span<std::byte> dst) {
  if (!can_quantize(dtype)) {
    return fail(ErrorCode::kUnsupported,
                "quantize: no encoder for encoding " + std::string(to_string(dtype)));
  }
  EREDU_TRY_VOID(check_sizes(dtype, src.size(), dst.size(), "quantize"));
  if (dtype_info(dtype).is_quantized) {
    for (std::size_t i = 0; i < src.size(); ++i) {
      if (!std::isfinite(src[i])) {
        return fail(ErrorCode::kInvalidArgument,
                    "quantize: element " + std::to_string(i) + " is not finite; " +
                        std::string(to_string(dtype)) + " can only encode finite values");
      }
    }
  }
  switch (dtype) {
    case DType::kF32:
      if (!src.empty()) std::memcpy(dst.data(), src.data(), dst.size());
      break;
    case DType::kF16:
      for (std::size_t i = 0; i < src.size(); ++i)
        store_u16(&dst[2 * i], fp32_to_fp16(src[i]));
      break;
    case DType::kBF16:
      for (std::size_t i = 0; i < src.size(); ++i)
        store_u16(&dst[2 * i], fp32_to_bf16(src[i]));
      break;
    case DType::kQ4_0:
      encode_blocks<BlockQ4_0>(src, dst);
      break;
    case DType::kQ4_1:
      encode_blocks<BlockQ4_1>(src, dst);
      break;
    case DType::kQ5_0:
      encode_blocks<BlockQ5_0>(src, dst);
      break;
    case DType::kQ5_1:
      encode_blocks<BlockQ5_1>(src, dst);
      break;
    case DType::kQ8_0:
      encode_blocks<BlockQ8_0>(src, dst);
      break;
    case DType::kQ2_K:
      encode_blocks<BlockQ2_K>(src, dst);
      break;
    case DType::kQ3_K:
      encode_blocks<BlockQ3_K>(src, dst);
      break;
    case DType::kQ4_K:
      encode_blocks<BlockQ4_K>(src, dst);
      break;
    case DType::kQ5_K:
      encode_blocks<BlockQ5_K>(src, dst);
      break;
    case DType::kQ6_K:
      encode_blocks<BlockQ6_K>(src, dst);
      break;
    case DType::kIQ4_NL:
      encode_blocks<BlockIQ4_NL>(src, dst);
      break;
    case DType::kIQ4_XS:
      encode_blocks<BlockIQ4_XS>(src, dst);
      break;
    default:
      return fail(ErrorCode::kInternal, "quantize: encoder table and dispatch disagree on " +
                                            std::string(to_string(dtype)));
  }
  return ok();
}

}  // namespace eredu::encoding
