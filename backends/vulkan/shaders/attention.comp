#version 450
// Causal grouped-query attention over a KV cache (F32, or F16 with KV_F16): one invocation per
// (query token, head). Two passes over the visible positions: the maximum score, then the
// softmax-weighted sum of V accumulated straight into the output row.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_ATTENTION
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { uint kdata[]; };
layout(std430, binding = 2) readonly buffer V { uint vdata[]; };
layout(std430, binding = 3) readonly buffer Pos { int positions[]; };
layout(std430, binding = 4) buffer Out { float o[]; };

float load_kv(uint which, uint index) {
#if defined(KV_F16)
  const uint word = which == 0u ? kdata[index >> 1] : vdata[index >> 1];
  return unpackHalf2x16(word).x * float((index & 1u) == 0u) +
         unpackHalf2x16(word).y * float((index & 1u) == 1u);
#else
  return uintBitsToFloat(which == 0u ? kdata[index] : vdata[index]);
#endif
}

void main() {
  const uint idx = gl_GlobalInvocationID.x;
  if (idx >= pc.n_tokens * pc.n_head) return;
  const uint t = idx / pc.n_head;
  const uint h = idx % pc.n_head;
  const uint kvh = h / (pc.n_head / pc.n_head_kv);
  const uint q_base = idx * pc.head_dim;
  const uint last = uint(positions[t]);
  const uint kv_stride = pc.n_head_kv * pc.head_dim;
  float m = -1.0 / 0.0;
  for (uint j = 0u; j <= last; ++j) {
    float s = 0.0;
    const uint k_base = j * kv_stride + kvh * pc.head_dim;
    for (uint d = 0u; d < pc.head_dim; ++d) s += q[q_base + d] * load_kv(0u, k_base + d);
    m = max(m, s * pc.scale);
  }
  for (uint d = 0u; d < pc.head_dim; ++d) o[q_base + d] = 0.0;
  float total = 0.0;
  for (uint j = 0u; j <= last; ++j) {
    float s = 0.0;
    const uint kv_base = j * kv_stride + kvh * pc.head_dim;
    for (uint d = 0u; d < pc.head_dim; ++d) s += q[q_base + d] * load_kv(0u, kv_base + d);
    const float p = exp(s * pc.scale - m);
    total += p;
    for (uint d = 0u; d < pc.head_dim; ++d) o[q_base + d] += p * load_kv(1u, kv_base + d);
  }
  for (uint d = 0u; d < pc.head_dim; ++d) o[q_base + d] /= total;
}
