#version 450
// Embedding lookup: decodes one packed row to F32 (bit-identical to the CPU decoders).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_GET_ROW
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer Weights { uint wdata[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

#include "decode.glsl"

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.cols) return;
  y[i] = decode_element(pc.row * pc.row_bytes, i);
}
