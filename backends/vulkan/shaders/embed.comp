#version 450
// Embedding lookup of a batch of token ids held in a device buffer (uploaded in the same
// submission): one invocation per (token, column), decoding the packed table row in place
// (bit-identical to the CPU decoders). Ids >= n_rows write zeros (the host rejects them first).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_EMBED
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer Weights { uint wdata[]; };
layout(std430, binding = 1) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

#include "decode.glsl"

void main() {
  const uint idx = gl_GlobalInvocationID.x;
  if (idx >= pc.n_tokens * pc.cols) return;
  const uint t = idx / pc.cols;
  const uint c = idx % pc.cols;
  const uint row = ids[t];
  y[idx] = row < pc.n_rows ? decode_element(row * pc.row_bytes, c) : 0.0;
}
