#pragma once
// Sampling parameters of one request and their validation.
//
// The sampler applies them in llama.cpp's default chain order (common/sampling.cpp):
//
//   1. penalties   over the last `penalty_window` accepted tokens (see below);
//   2. top_k       keep the k highest logits (0 = off);
//   3. top_p       keep the smallest highest-first prefix whose softmax mass reaches p (1 = off);
//   4. min_p       keep tokens whose probability is at least min_p times the top one (0 = off);
//   5. temperature divide the logits by it;
//   6. dist        draw from the softmax of what is left.
//
// top_p and min_p are therefore computed on the penalized but un-tempered logits, as in
// llama.cpp. Temperature 0 or top_k 1 selects greedy decoding: the arg-max of the penalized
// logits, ties going to the lowest token id; greedy decoding consumes no random numbers.
//
// Penalties (llama.cpp `llama_sampler_penalties`), for a token seen `count` > 0 times in the
// window: a logit <= 0 is multiplied by `repeat_penalty`, a positive one divided by it; then
// `count * frequency_penalty + presence_penalty` is subtracted.

#include <cstdint>

#include "eredu/core/result.hpp"

namespace eredu::generation {

struct SamplingConfig {
  // Largest accepted temperature: beyond it the distribution is uniform to float precision, so a
  // larger value is almost certainly a unit or typing mistake.
  static constexpr float kMaxTemperature = 100.0f;
  // Largest penalty window; bounds the ring buffer allocated when the sampler is created.
  static constexpr std::int32_t kMaxPenaltyWindow = 1 << 20;
  // penalty_window value meaning "every token accepted since the last reset".
  static constexpr std::int32_t kWholeHistory = -1;

  float temperature = 0.8f;          // >= 0, finite, <= kMaxTemperature; 0 = greedy
  std::int32_t top_k = 40;           // >= 0; 0 = off, 1 = greedy
  float top_p = 0.95f;               // in (0, 1]; 1 = off
  float min_p = 0.05f;               // in [0, 1]; 0 = off
  float repeat_penalty = 1.0f;       // > 0, finite; 1 = off
  float frequency_penalty = 0.0f;    // finite; 0 = off
  float presence_penalty = 0.0f;     // finite; 0 = off
  std::int32_t penalty_window = 64;  // last N accepted tokens; 0 = off, -1 = whole history
  std::uint64_t seed = 0x5EEDULL;    // seeds the sampler's xoshiro256** generator

  // Deterministic arg-max decoding (temperature 0, no truncation, no penalties).
  [[nodiscard]] static SamplingConfig greedy() noexcept;

  // True when sample() returns the arg-max (temperature 0 or top_k 1).
  [[nodiscard]] bool is_greedy() const noexcept { return temperature == 0.0f || top_k == 1; }

  // kInvalidArgument whose subject() is the offending field name ("temperature", "top_p", ...)
  // and whose message gives the value and the accepted range.
  [[nodiscard]] Result<void> validate() const;
};

}  // namespace eredu::generation
