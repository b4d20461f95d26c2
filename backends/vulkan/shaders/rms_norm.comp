#version 450
// RMS norm: one workgroup per row; the sum of squares is a shared-memory tree reduction.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_RMS_NORM
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

shared float partial[64];

void main() {
  const uint row = gl_WorkGroupID.x;
  const uint lane = gl_LocalInvocationID.x;
  const uint base = row * pc.n;
  float s = 0.0;
  for (uint i = lane; i < pc.n; i += 64u) s += x[base + i] * x[base + i];
  partial[lane] = s;
  barrier();
  for (uint stride = 32u; stride > 0u; stride >>= 1) {
    if (lane < stride) partial[lane] += partial[lane + stride];
    barrier();
  }
  const float inv_rms = inversesqrt(partial[0] / float(pc.n) + pc.eps);
  for (uint i = lane; i < pc.n; i += 64u) {
    const float weight = pc.has_weight != 0u ? w[i] : 1.0;
    y[base + i] = x[base + i] * inv_rms * weight;
  }
}
