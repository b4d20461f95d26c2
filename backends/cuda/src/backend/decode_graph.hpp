#pragma once
// DecodeGraph: one session's decode step captured as a CUDA graph and replayed at every later
// step. A decode step enqueues a few hundred small kernels (embedding, per layer norms, products,
// rotary, KV store, attention, SwiGLU, adds, then the logits); launching them one by one costs
// microseconds of host time each, which on a small model is more than the GPU's time reading the
// weights. Replaying the captured graph is one launch.
//
// What changes between steps lives in device memory, not in the graph's kernel arguments: `step`
// holds [first position, token id], uploaded before each replay; the kernels that depend on the
// position (rotary, KV store, attention) read it there while capturing, and attention is launched
// over the cache's whole capacity, its chunks past the visible positions exiting at once. The
// activations are allocated and freed inside the graph (cudaMallocAsync under capture becomes
// graph memory nodes), so the graph owns no live allocation between launches. The logits end in
// `logits`, a buffer of the graph, copied to pinned host memory after each launch.
//
// The graph is valid as long as the pass is the same: same model weights, same cache, same shapes.
// Every operator signs the pass (forward_state.hpp) in the dry run that precedes each step; a
// replay happens only when that signature equals the captured one.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "eredu/backends/cuda/cuda_types.hpp"

namespace eredu::cuda {

class DecodeGraph {
 public:
  DecodeGraph() = default;
  DecodeGraph(const DecodeGraph&) = delete;
  DecodeGraph& operator=(const DecodeGraph&) = delete;
  ~DecodeGraph();

  cudaGraphExec_t exec = nullptr;
  std::uint64_t signature = 0;
  DeviceBufferPtr step;    // [first position, token id]
  DeviceBufferPtr logits;  // vocab floats
  std::size_t vocab = 0;
};

}  // namespace eredu::cuda
