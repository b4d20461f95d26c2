#include "token_forms.hpp"

#include <cstring>

#include "kernel_impl.hpp"
#include "thread_scratch.hpp"

namespace eredu::cpu::detail {

namespace {
// A token's q8 blocks laid out for the prompt products: + 128 modulo 256 flips the sign bit
// (eight codes per step), the scales and sums apart.
void lay_out_prompt(const ActQ8Block* xq, std::size_t b0, std::size_t b1, std::uint8_t* codes,
                    float* scales, float* sums) {
  for (std::size_t b = b0; b < b1; ++b) {
    for (std::size_t i = 0; i < 32; i += 8) {
      std::uint64_t eight;
      std::memcpy(&eight, xq[b].qs + i, 8);
      eight ^= 0x8080808080808080ULL;
      std::memcpy(codes + 32 * b + i, &eight, 8);
    }
    scales[b] = xq[b].d;
    sums[b] = xq[b].s;
  }
}
}  // namespace

const ActQ8Block* TokenForms::q8(ThreadPool* pool) {
  if (q8_ != nullptr) return q8_;
  const std::size_t n_blocks = cols_ / 32;
  ActQ8Block* xq = thread_scratch<ActQ8Block, ActQ8>(n_blocks * n_tokens_);
  auto quantize = [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t)
      ops_.quantize_act_q8(x_ + t * cols_, xq + t * n_blocks, cols_);
  };
  parallel_for(pool, n_tokens_, quantize, grain_for(8 * cols_));
  q8_ = xq;
  return q8_;
}

PromptActivations TokenForms::prompt_q8(ThreadPool* pool) {
  if (prompt_made_) return prompt_;
  const std::size_t n_blocks = cols_ / 32;
  auto* codes = thread_scratch<std::uint8_t, PromptCodes>(n_blocks * n_tokens_ * 32);
  auto* scales = thread_scratch<float, PromptScales>(n_blocks * n_tokens_);
  auto* sums = thread_scratch<float, PromptSums>(n_blocks * n_tokens_);
  // Quantized and laid out in one pass over each token; where q8() already ran, its blocks are
  // written again, with the same values, rather than read back in a second pass.
  ActQ8Block* xq = thread_scratch<ActQ8Block, ActQ8>(n_blocks * n_tokens_);
  auto quantize = [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) {
      ops_.quantize_act_q8(x_ + t * cols_, xq + t * n_blocks, cols_);
      lay_out_prompt(xq, t * n_blocks, (t + 1) * n_blocks, codes, scales, sums);
    }
  };
  parallel_for(pool, n_tokens_, quantize, grain_for(8 * cols_));
  q8_ = xq;
  prompt_ = PromptActivations{codes, scales, sums};
  prompt_made_ = true;
  return prompt_;
}

const encoding::BlockQ8_K* TokenForms::q8k(ThreadPool* pool) {
  if (q8k_ != nullptr) return q8k_;
  const std::size_t n_super = cols_ / encoding::kQK_K;
  auto* xq = thread_scratch<encoding::BlockQ8_K, ActQ8K>(n_super * n_tokens_);
  auto quantize = [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t)
      ops_.quantize_act_q8k(x_ + t * cols_, xq + t * n_super, cols_);
  };
  parallel_for(pool, n_tokens_, quantize, grain_for(8 * cols_));
  q8k_ = xq;
  return q8k_;
}

const std::uint16_t* TokenForms::halves(DType weights, ThreadPool* pool) {
  const bool f16 = weights == DType::kF16;
  std::uint16_t*& made = f16 ? f16_ : bf16_;
  if (made != nullptr) return made;
  std::uint16_t* out = f16 ? thread_scratch<std::uint16_t, HalfAct>(n_tokens_ * cols_)
                           : thread_scratch<std::uint16_t, Bf16Act>(n_tokens_ * cols_);
  const auto convert = f16 ? ops_.f32_to_f16 : ops_.f32_to_bf16;
  auto round = [&](std::size_t t0, std::size_t t1) {
    convert(x_ + t0 * cols_, out + t0 * cols_, (t1 - t0) * cols_);
  };
  parallel_for(pool, n_tokens_, round, grain_for(4 * cols_));
  made = out;
  return made;
}

const float* TokenForms::rounded(DType weights, ThreadPool* pool) {
  const bool f16 = weights == DType::kF16;
  float*& made = f16 ? rounded_f16_ : rounded_bf16_;
  if (made != nullptr) return made;
  float* out = f16 ? thread_scratch<float, RoundedAct>(n_tokens_ * cols_)
                   : thread_scratch<float, RoundedBf16Act>(n_tokens_ * cols_);
  auto round = [&](std::size_t t0, std::size_t t1) {
    ops_.round_act_to_half(weights, x_ + t0 * cols_, out + t0 * cols_, (t1 - t0) * cols_);
  };
  parallel_for(pool, n_tokens_, round, grain_for(4 * cols_));
  made = out;
  return made;
}

}  // namespace eredu::cpu::detail
