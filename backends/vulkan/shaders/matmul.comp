#version 450
// Matrix-vector / matrix-matrix product over packed weights: one invocation per output element
// y[t][o] = sum_i W[o][i] * x[t][i]. Variants by WTYPE_* define (see decode.glsl).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_MATMUL
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer Weights { uint wdata[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

#include "decode.glsl"

void main() {
  const uint idx = gl_GlobalInvocationID.x;
  if (idx >= pc.rows * pc.n_tokens) return;
  const uint t = idx / pc.rows;
  const uint o = idx % pc.rows;
  const uint row_base = o * pc.row_bytes;
  const uint x_base = t * pc.cols;
  float sum = 0.0;
  for (uint i = 0u; i < pc.cols; ++i) {
    sum += decode_element(row_base, i) * x[x_base + i];
  }
  y[idx] = sum;
}
