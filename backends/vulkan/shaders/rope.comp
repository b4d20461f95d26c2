#version 450
// Rotary embedding in place. The angles come from a host-computed [n_tokens][n_pairs] cos/sin
// table (float64 on the host, like the reference), so the shader does no transcendental math.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_ROPE
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer CosSin { vec2 cs[]; };

void main() {
  const uint idx = gl_GlobalInvocationID.x;
  if (idx >= pc.n_tokens * pc.n_heads * pc.n_pairs) return;
  const uint i = idx % pc.n_pairs;
  const uint th = idx / pc.n_pairs;  // token * n_heads + head
  const uint t = th / pc.n_heads;
  const uint base = th * pc.head_dim;
  const uint a = base + (pc.neox != 0u ? i : 2u * i);
  const uint b = base + (pc.neox != 0u ? i + pc.n_pairs : 2u * i + 1u);
  const vec2 c = cs[t * pc.n_pairs + i];
  const float x0 = x[a];
  const float x1 = x[b];
  x[a] = x0 * c.x - x1 * c.y;
  x[b] = x0 * c.y + x1 * c.x;
}
