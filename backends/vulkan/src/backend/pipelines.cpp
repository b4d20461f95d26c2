// VulkanPipelines (see pipelines.hpp).
#include "pipelines.hpp"

#include <string>

#include "eredu/backends/vulkan/weight_shaders.hpp"

namespace eredu::vulkan {

namespace shader {
// The push-constant layouts shared with the GLSL sources (uint = 32-bit unsigned there too).
using uint = std::uint32_t;
#include "eredu/backends/vulkan/push_constants.h"
// std430 push-constant blocks of 32-bit scalars have no padding: the C++ structs must match.
static_assert(sizeof(MatmulPush) == 16 && sizeof(EmbedPush) == 16 && sizeof(RmsNormPush) == 16);
static_assert(sizeof(RopePush) == 20 && sizeof(ElementwisePush) == 4 && sizeof(BiasAddPush) == 8);
static_assert(sizeof(AttentionPush) == 24 && sizeof(KvStorePush) == 8);
}  // namespace shader

Result<VulkanPipelines> VulkanPipelines::resolve(Device& device) {
  VulkanPipelines p(device);
  EREDU_TRY(p.rms_norm, device.pipeline("rms_norm", 3, sizeof(shader::RmsNormPush)));
  EREDU_TRY(p.rope, device.pipeline("rope", 2, sizeof(shader::RopePush)));
  EREDU_TRY(p.add, device.pipeline("add", 3, sizeof(shader::ElementwisePush)));
  EREDU_TRY(p.swiglu, device.pipeline("swiglu", 3, sizeof(shader::ElementwisePush)));
  EREDU_TRY(p.bias_add, device.pipeline("bias_add", 3, sizeof(shader::BiasAddPush)));
  EREDU_TRY(p.attention_f32, device.pipeline("attention_f32", 5, sizeof(shader::AttentionPush)));
  EREDU_TRY(p.attention_f16, device.pipeline("attention_f16", 5, sizeof(shader::AttentionPush)));
  return p;
}

Result<const Pipeline*> VulkanPipelines::resolve_weight(Table& table, const char* family,
                                                        DType dtype) {
  const char* suffix = weight_shader_suffix(dtype);
  if (suffix == nullptr) {
    return fail(ErrorCode::kUnsupported, std::string("vulkan: no ") + family + " shader for " +
                                             std::string(to_string(dtype)) + " weights");
  }
  // Both families bind (weights, input, output) with a 16-byte push block.
  EREDU_TRY(const Pipeline* p,
            device_->pipeline(std::string(family) + suffix, 3, sizeof(shader::MatmulPush)));
  table[slot(dtype)] = p;
  return p;
}

}  // namespace eredu::vulkan
