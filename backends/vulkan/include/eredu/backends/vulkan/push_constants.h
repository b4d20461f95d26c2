// Push-constant layouts, defined once and included by both the GLSL shaders and the C++ host code.
// In GLSL a shader defines EREDU_PC_<NAME> before including this file to declare exactly its own
// block (a shader may have only one push-constant block); C++ sees every layout as a plain struct
// of 32-bit fields (std430 scalars, no padding) inside namespace eredu::vulkan::shader.
#ifndef EREDU_VULKAN_PUSH_CONSTANTS_H
#define EREDU_VULKAN_PUSH_CONSTANTS_H

#ifdef __cplusplus
#define EREDU_PC_BLOCK(name) struct name
#define EREDU_PC_INSTANCE
#define EREDU_PC_ALL 1
#else
#define EREDU_PC_BLOCK(name) layout(push_constant) uniform name
#define EREDU_PC_INSTANCE pc
#define EREDU_PC_ALL 0
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_MATMUL)
// y[t][o] = sum_i W[o][i] * x[t][i]; W rows are row_words 32-bit words apart (the packed row
// bytes, which the host checks to be a multiple of 4 or handles through byte addressing).
EREDU_PC_BLOCK(MatmulPush) {
  uint rows;
  uint cols;
  uint n_tokens;
  uint row_bytes;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_EMBED)
// Embedding lookup of n_tokens ids (a device buffer) into [n_tokens][cols] F32.
EREDU_PC_BLOCK(EmbedPush) {
  uint n_tokens;
  uint cols;
  uint row_bytes;
  uint n_rows;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_KV_STORE)
// Stores n F32 values into a KV cache buffer from element dst_offset on (as F16 with KV_F16,
// where n and dst_offset are even: one invocation converts a pair into one 32-bit word).
EREDU_PC_BLOCK(KvStorePush) {
  uint n;
  uint dst_offset;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_RMS_NORM)
EREDU_PC_BLOCK(RmsNormPush) {
  uint n_rows;
  uint n;
  uint has_weight;
  float eps;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_ROPE)
// One invocation per (token, head, pair); cos/sin come from a [n_tokens][n_pairs] table.
EREDU_PC_BLOCK(RopePush) {
  uint n_tokens;
  uint n_heads;
  uint head_dim;
  uint n_pairs;
  uint neox;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_ELEMENTWISE)
EREDU_PC_BLOCK(ElementwisePush) {
  uint n;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_BIAS_ADD)
// o[i] = a[i] + bias[i % cols] over n = rows * cols elements.
EREDU_PC_BLOCK(BiasAddPush) {
  uint n;
  uint cols;
}
EREDU_PC_INSTANCE;
#endif

#if EREDU_PC_ALL || defined(EREDU_PC_ATTENTION)
EREDU_PC_BLOCK(AttentionPush) {
  uint n_tokens;
  uint n_head;
  uint n_head_kv;
  uint head_dim;
  uint n_kv;
  float scale;
}
EREDU_PC_INSTANCE;
#endif

#undef EREDU_PC_BLOCK
#undef EREDU_PC_INSTANCE
#undef EREDU_PC_ALL
#endif
