#version 450
// Softmax of one F32 vector in place, one workgroup: maximum, sum of exponentials, scale, each a
// strided pass followed by a shared-memory tree reduction.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_ELEMENTWISE
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) buffer X { float x[]; };

shared float partial[64];

void main() {
  const uint lane = gl_LocalInvocationID.x;
  float m = -1.0 / 0.0;
  for (uint i = lane; i < pc.n; i += 64u) m = max(m, x[i]);
  partial[lane] = m;
  barrier();
  for (uint stride = 32u; stride > 0u; stride >>= 1) {
    if (lane < stride) partial[lane] = max(partial[lane], partial[lane + stride]);
    barrier();
  }
  const float maximum = partial[0];
  barrier();
  float s = 0.0;
  for (uint i = lane; i < pc.n; i += 64u) {
    const float e = exp(x[i] - maximum);
    x[i] = e;
    s += e;
  }
  partial[lane] = s;
  barrier();
  for (uint stride = 32u; stride > 0u; stride >>= 1) {
    if (lane < stride) partial[lane] += partial[lane + stride];
    barrier();
  }
  const float inv = 1.0 / partial[0];
  for (uint i = lane; i < pc.n; i += 64u) x[i] *= inv;
}
