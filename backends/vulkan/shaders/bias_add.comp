#version 450
// Broadcast add of a bias vector to every row of an F32 [rows, cols] activation (q/k/v biases).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_BIAS_ADD
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer Bias { float bias[]; };
layout(std430, binding = 2) writeonly buffer Out { float o[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  o[i] = a[i] + bias[i % pc.cols];
}
