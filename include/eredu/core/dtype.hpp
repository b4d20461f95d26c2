#pragma once
// Stored element encodings: every GGML tensor type id up to MXFP4 (39) and every SafeTensors dtype,
// in one vocabulary, with their block geometry. Shapes elsewhere in eredu are row-major with the
// outermost dimension first (SafeTensors order); a GGUF `ne` array is the same shape reversed.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "eredu/core/result.hpp"

namespace eredu {

enum class DType : std::uint8_t {
  // GGML / GGUF tensor types (ggml type id in the comment).
  kF32,      // 0
  kF16,      // 1
  kQ4_0,     // 2
  kQ4_1,     // 3
  kQ5_0,     // 6
  kQ5_1,     // 7
  kQ8_0,     // 8
  kQ8_1,     // 9
  kQ2_K,     // 10
  kQ3_K,     // 11
  kQ4_K,     // 12
  kQ5_K,     // 13
  kQ6_K,     // 14
  kQ8_K,     // 15
  kIQ2_XXS,  // 16
  kIQ2_XS,   // 17
  kIQ3_XXS,  // 18
  kIQ1_S,    // 19
  kIQ4_NL,   // 20
  kIQ3_S,    // 21
  kIQ2_S,    // 22
  kIQ4_XS,   // 23
  kI8,       // 24
  kI16,      // 25
  kI32,      // 26
  kI64,      // 27
  kF64,      // 28
  kIQ1_M,    // 29
  kBF16,     // 30
  kTQ1_0,    // 34
  kTQ2_0,    // 35
  kMXFP4,    // 39
  // SafeTensors-only dtypes.
  kBool,
  kU8,
  kU16,
  kU32,
  kU64,
  kF8_E4M3,
  kF8_E5M2,
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;         // GGML spelling for GGML types ("Q4_K"), SafeTensors otherwise
  std::uint32_t block_elements;  // elements per block (1 for plain scalars)
  std::uint32_t block_bytes;     // bytes per block
  std::optional<std::uint32_t> ggml_type_id;  // present for types GGUF can store
  std::string_view safetensors_name;          // empty when SafeTensors cannot store it
  bool is_quantized;                          // block-encoded with scales
  bool is_float;                              // plain floating point (F64, F32, F16, BF16, F8_*)
};

namespace detail {
inline constexpr std::array<DTypeInfo, 39> kDTypeTable{{
    {DType::kF32, "F32", 1, 4, 0, "F32", false, true},
    {DType::kF16, "F16", 1, 2, 1, "F16", false, true},
    {DType::kQ4_0, "Q4_0", 32, 18, 2, "", true, false},
    {DType::kQ4_1, "Q4_1", 32, 20, 3, "", true, false},
    {DType::kQ5_0, "Q5_0", 32, 22, 6, "", true, false},
    {DType::kQ5_1, "Q5_1", 32, 24, 7, "", true, false},
    {DType::kQ8_0, "Q8_0", 32, 34, 8, "", true, false},
    {DType::kQ8_1, "Q8_1", 32, 36, 9, "", true, false},
    {DType::kQ2_K, "Q2_K", 256, 84, 10, "", true, false},
    {DType::kQ3_K, "Q3_K", 256, 110, 11, "", true, false},
    {DType::kQ4_K, "Q4_K", 256, 144, 12, "", true, false},
    {DType::kQ5_K, "Q5_K", 256, 176, 13, "", true, false},
    {DType::kQ6_K, "Q6_K", 256, 210, 14, "", true, false},
    {DType::kQ8_K, "Q8_K", 256, 292, 15, "", true, false},
    {DType::kIQ2_XXS, "IQ2_XXS", 256, 66, 16, "", true, false},
    {DType::kIQ2_XS, "IQ2_XS", 256, 74, 17, "", true, false},
    {DType::kIQ3_XXS, "IQ3_XXS", 256, 98, 18, "", true, false},
    {DType::kIQ1_S, "IQ1_S", 256, 50, 19, "", true, false},
    {DType::kIQ4_NL, "IQ4_NL", 32, 18, 20, "", true, false},
    {DType::kIQ3_S, "IQ3_S", 256, 110, 21, "", true, false},
    {DType::kIQ2_S, "IQ2_S", 256, 82, 22, "", true, false},
    {DType::kIQ4_XS, "IQ4_XS", 256, 136, 23, "", true, false},
    {DType::kI8, "I8", 1, 1, 24, "I8", false, false},
    {DType::kI16, "I16", 1, 2, 25, "I16", false, false},
    {DType::kI32, "I32", 1, 4, 26, "I32", false, false},
    {DType::kI64, "I64", 1, 8, 27, "I64", false, false},
    {DType::kF64, "F64", 1, 8, 28, "F64", false, true},
    {DType::kIQ1_M, "IQ1_M", 256, 56, 29, "", true, false},
    {DType::kBF16, "BF16", 1, 2, 30, "BF16", false, true},
    {DType::kTQ1_0, "TQ1_0", 256, 54, 34, "", true, false},
    {DType::kTQ2_0, "TQ2_0", 256, 66, 35, "", true, false},
    {DType::kMXFP4, "MXFP4", 32, 17, 39, "", true, false},
    {DType::kBool, "BOOL", 1, 1, std::nullopt, "BOOL", false, false},
    {DType::kU8, "U8", 1, 1, std::nullopt, "U8", false, false},
    {DType::kU16, "U16", 1, 2, std::nullopt, "U16", false, false},
    {DType::kU32, "U32", 1, 4, std::nullopt, "U32", false, false},
    {DType::kU64, "U64", 1, 8, std::nullopt, "U64", false, false},
    {DType::kF8_E4M3, "F8_E4M3", 1, 1, std::nullopt, "F8_E4M3", false, true},
    {DType::kF8_E5M2, "F8_E5M2", 1, 1, std::nullopt, "F8_E5M2", false, true},
}};
}  // namespace detail

[[nodiscard]] constexpr const DTypeInfo& dtype_info(DType dtype) noexcept {
  return detail::kDTypeTable[static_cast<std::size_t>(dtype)];
}
[[nodiscard]] constexpr std::string_view to_string(DType dtype) noexcept {
  return dtype_info(dtype).name;
}
[[nodiscard]] constexpr std::span<const DTypeInfo> all_dtypes() noexcept {
  return detail::kDTypeTable;
}

// The dtype for a GGML type id; nullopt for ids that were removed from ggml (4, 5, 31–33, 36–38)
// or are unknown to this build (> 39).
[[nodiscard]] constexpr std::optional<DType> dtype_from_ggml_type(std::uint32_t id) noexcept {
  for (const DTypeInfo& info : detail::kDTypeTable) {
    if (info.ggml_type_id && *info.ggml_type_id == id) return info.dtype;
  }
  return std::nullopt;
}

// The dtype for a SafeTensors dtype string ("F32", "BF16", "F8_E4M3", ...); nullopt otherwise.
[[nodiscard]] constexpr std::optional<DType> dtype_from_safetensors(
    std::string_view name) noexcept {
  for (const DTypeInfo& info : detail::kDTypeTable) {
    if (!info.safetensors_name.empty() && info.safetensors_name == name) return info.dtype;
  }
  return std::nullopt;
}

// Number of elements of a row-major shape, with overflow checked. An empty shape is a scalar (1).
[[nodiscard]] inline Result<std::uint64_t> checked_element_count(
    std::span<const std::uint64_t> shape) {
  std::uint64_t count = 1;
  for (std::uint64_t dim : shape) {
    if (dim != 0 && count > UINT64_MAX / dim) {
      return fail(ErrorCode::kOverflow, "element count of the shape overflows 64 bits");
    }
    count *= dim;
  }
  return count;
}

// Byte size of a row-major shape in `dtype`. The innermost (last) dimension must be a whole number
// of blocks; every multiplication is overflow-checked.
[[nodiscard]] inline Result<std::uint64_t> checked_byte_size(DType dtype,
                                                             std::span<const std::uint64_t> shape) {
  const DTypeInfo& info = dtype_info(dtype);
  const std::uint64_t inner = shape.empty() ? 1 : shape.back();
  if (inner % info.block_elements != 0) {
    return fail(ErrorCode::kInvalidModel,
                "innermost dimension " + std::to_string(inner) + " is not a multiple of the " +
                    std::string(info.name) + " block size " + std::to_string(info.block_elements));
  }
  EREDU_TRY(const std::uint64_t elements, checked_element_count(shape));
  const std::uint64_t blocks = elements / info.block_elements;
  if (blocks != 0 && blocks > UINT64_MAX / info.block_bytes) {
    return fail(ErrorCode::kOverflow, "byte size of the tensor overflows 64 bits");
  }
  return blocks * info.block_bytes;
}

// Bytes of one packed row of `cols` elements of `dtype`; 0 when cols is not a multiple of the
// block size (every backend sizes weight rows this way).
[[nodiscard]] constexpr std::size_t packed_row_bytes(DType dtype, std::size_t cols) noexcept {
  const DTypeInfo& info = dtype_info(dtype);
  if (info.block_elements == 0 || cols % info.block_elements != 0) return 0;
  return cols / info.block_elements * info.block_bytes;
}

}  // namespace eredu
