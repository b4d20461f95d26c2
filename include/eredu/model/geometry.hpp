#pragma once
// What the runtime above a family needs to know of a model, whatever its family: the KV cache's
// geometry, the vocabulary the logits span and the context it was trained for.

#include <cstdint>

namespace eredu::model {

struct ModelGeometry {
  std::uint32_t n_layer = 0;    // layers holding a KV cache
  std::uint32_t n_head_kv = 0;  // key/value heads per layer
  std::uint32_t head_dim = 0;   // dimensions per key/value head
  std::uint32_t n_vocab = 0;    // logits per position
  std::uint32_t n_ctx_train = 0;
};

}  // namespace eredu::model
