// The weight encodings with shader variants (see weight_shaders.hpp).
#include "eredu/backends/vulkan/weight_shaders.hpp"

namespace eredu::vulkan {

const char* weight_shader_suffix(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kQ8_0:
      return "q8_0";
    case DType::kQ4_0:
      return "q4_0";
    case DType::kQ4_1:
      return "q4_1";
    case DType::kQ5_0:
      return "q5_0";
    case DType::kQ5_1:
      return "q5_1";
    case DType::kQ2_K:
      return "q2_k";
    case DType::kQ3_K:
      return "q3_k";
    case DType::kQ4_K:
      return "q4_k";
    case DType::kQ5_K:
      return "q5_k";
    case DType::kQ6_K:
      return "q6_k";
    case DType::kIQ4_NL:
      return "iq4_nl";
    case DType::kIQ4_XS:
      return "iq4_xs";
    default:
      return nullptr;
  }
}

bool supports_weight_dtype(DType dtype) noexcept {
  return weight_shader_suffix(dtype) != nullptr;
}

}  // namespace eredu::vulkan
