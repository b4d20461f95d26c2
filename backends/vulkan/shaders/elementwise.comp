#version 450
// Element-wise ops on F32 vectors; OP_ADD (residual add) or OP_SWIGLU (silu(gate) * up).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_ELEMENTWISE
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Out { float o[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
#if defined(OP_ADD)
  o[i] = a[i] + b[i];
#elif defined(OP_SWIGLU)
  const float g = a[i];
  o[i] = g / (1.0 + exp(-g)) * b[i];
#else
#error "define OP_ADD or OP_SWIGLU"
#endif
}
