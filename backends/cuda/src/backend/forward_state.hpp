#pragma once
// How the operators of a CudaBackend behave during one forward pass (see decode_graph.hpp):
//   kEager    enqueue their kernels (the default, and every call outside a session's forward);
//   kDryRun   check their arguments, add themselves to the pass's signature and return
//             placeholder tensors (no buffer): nothing is allocated or enqueued. The embedding
//             keeps the token ids;
//   kCapture  enqueue as in kEager on a stream that is being captured into a CUDA graph, reading
//             the position and the token id from the graph's step buffer so that the graph can be
//             replayed at any position with any token.
// The signature is an FNV-1a hash over every operator's kind, shapes, weights and constants (not
// the position), so two decode steps of one model hash alike and a different pass does not.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace eredu::cuda {

enum class ForwardMode : std::uint8_t { kEager, kDryRun, kCapture };

struct ForwardState {
  ForwardMode mode = ForwardMode::kEager;
  std::uint64_t signature = 0xcbf29ce484222325ULL;
  std::vector<std::uint32_t> token_ids;  // what the dry run's embedding was given
  std::uint32_t embeddings = 0;          // how many embedding calls the pass made
  // kCapture: [0] the pass's first position, [1] its token id, in device memory.
  const std::uint32_t* device_step = nullptr;
  // kCapture: the KV cache's length before the capture (restored after: nothing ran).
  std::size_t length_before_capture = 0;
  // What a dry run found a decode step to be (kept across reset): its token and vocabulary.
  std::uint32_t decode_token = 0;
  std::size_t decode_vocab = 0;

  void reset(ForwardMode m) noexcept {
    mode = m;
    signature = 0xcbf29ce484222325ULL;
    token_ids.clear();
    embeddings = 0;
    device_step = nullptr;
    length_before_capture = 0;
  }
  [[nodiscard]] bool dry() const noexcept { return mode == ForwardMode::kDryRun; }
  [[nodiscard]] bool capturing() const noexcept { return mode == ForwardMode::kCapture; }
  // Mixes `values` into the signature (dry run and capture alike).
  template <typename... Values>
  void sign(Values... values) noexcept {
    (mix(static_cast<std::uint64_t>(values)), ...);
  }

 private:
  void mix(std::uint64_t v) noexcept {
    for (int i = 0; i < 8; ++i) {
      signature ^= (v >> (8 * i)) & 0xFFU;
      signature *= 0x100000001b3ULL;
    }
  }
};

}  // namespace eredu::cuda
