#pragma once
// Which weight encodings the Vulkan shaders decode: matmul_<suffix> and embed_<suffix> exist for
// each of them (the variants are listed in backends/vulkan/CMakeLists.txt).

#include "eredu/core/dtype.hpp"

namespace eredu::vulkan {

// Whether matmul / embed have a shader variant for this encoding.
[[nodiscard]] bool supports_weight_dtype(DType dtype) noexcept;
// The shader-variant suffix of an encoding ("q4_k": matmul_q4_k, embed_q4_k), or nullptr when
// there is none.
[[nodiscard]] const char* weight_shader_suffix(DType dtype) noexcept;

}  // namespace eredu::vulkan
