#pragma once
// What the runtime above a family needs to know of a model, whatever its family: the KV cache's
// geometry, the vocabulary the logits span, the context it was trained for and the widths of its
// activations.

#include <cstdint>

namespace eredu::model {

struct ModelGeometry {
  std::uint32_t n_layer = 0;    // layers holding a KV cache
  std::uint32_t n_head_kv = 0;  // key/value heads per layer
  std::uint32_t head_dim = 0;   // dimensions per key/value head
  std::uint32_t n_vocab = 0;    // logits per position
  std::uint32_t n_ctx_train = 0;
  // The widths a forward pass's activations take (the planner's scratch estimate).
  std::uint32_t n_embd = 0;  // hidden size
  std::uint32_t n_head = 0;  // query heads
  std::uint32_t n_ff = 0;    // feed-forward width
};

}  // namespace eredu::model
