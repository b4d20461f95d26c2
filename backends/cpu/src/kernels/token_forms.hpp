#pragma once
// Internal: the activation rows of a product in each form its kernels read (8-bit blocks, their
// prompt layout, q8_K, F16 / BF16 storage, floats rounded to F16 / BF16), each made on first use
// and then kept, so that several products of the same input (Q/K/V, gate/up) make each form once.
//
// Every form is a function of the activations alone, the same quantizer or conversion on every
// token whichever product asks first and however the tokens are split across threads, so a
// product reads the same values alone or in a group. The buffers are the calling thread's
// scratch (thread_scratch.hpp), one per form, valid until the next TokenForms on that thread asks
// for the same form; a pool job may read them, and only the calling thread makes them.
#include <cstddef>
#include <cstdint>

#include "eredu/backends/cpu/thread_pool.hpp"
#include "eredu/core/dtype.hpp"
#include "vec_ops.hpp"

namespace eredu::cpu::detail {

class TokenForms {
 public:
  // x: n_tokens rows of `cols` floats (a multiple of 32; of 256 for q8k()).
  TokenForms(const VecOps& ops, const float* x, std::size_t n_tokens, std::size_t cols)
      : ops_(ops), x_(x), n_tokens_(n_tokens), cols_(cols) {}

  [[nodiscard]] const float* f32() const noexcept { return x_; }
  [[nodiscard]] std::size_t n_tokens() const noexcept { return n_tokens_; }
  [[nodiscard]] std::size_t cols() const noexcept { return cols_; }

  // Each getter makes its form on the first call (on `pool`, or on this thread when null; the
  // pool only splits tokens) and returns the same rows afterwards.
  // quantize_act_q8: cols / 32 blocks per token.
  const ActQ8Block* q8(ThreadPool* pool);
  // q8()'s blocks as the prompt products read them (codes + 128, scales and sums apart).
  PromptActivations prompt_q8(ThreadPool* pool);
  // quantize_act_q8k: cols / 256 blocks per token.
  const encoding::BlockQ8_K* q8k(ThreadPool* pool);
  // f32_to_f16 (weights kF16) or f32_to_bf16 (kBF16), cols halves per token.
  const std::uint16_t* halves(DType weights, ThreadPool* pool);
  // round_act_to_half for F16 / BF16 weights, cols floats per token.
  const float* rounded(DType weights, ThreadPool* pool);

 private:
  const VecOps& ops_;
  const float* x_;
  std::size_t n_tokens_;
  std::size_t cols_;
  ActQ8Block* q8_ = nullptr;
  PromptActivations prompt_{};
  bool prompt_made_ = false;
  encoding::BlockQ8_K* q8k_ = nullptr;
  std::uint16_t* f16_ = nullptr;
  std::uint16_t* bf16_ = nullptr;
  float* rounded_f16_ = nullptr;
  float* rounded_bf16_ = nullptr;
};

}  // namespace eredu::cpu::detail
