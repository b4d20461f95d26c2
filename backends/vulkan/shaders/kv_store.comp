#version 450
// Appends rows of F32 keys or values to a KV cache buffer inside the forward pass's command
// buffer: F32 as is, or (KV_F16) rounded to F16 two at a time with packHalf2x16 (round to
// nearest even, as the CPU's fp32_to_fp16).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#define EREDU_PC_KV_STORE
#include "eredu/backends/vulkan/push_constants.h"

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) buffer Dst { uint dst[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
#if defined(KV_F16)
  if (2u * i >= pc.n) return;
  dst[(pc.dst_offset >> 1) + i] = packHalf2x16(vec2(src[2u * i], src[2u * i + 1u]));
#else
  if (i >= pc.n) return;
  dst[pc.dst_offset + i] = floatBitsToUint(src[i]);
#endif
}
