#pragma once
// The neutral vocabulary of TextGenerationBackend: what a backend reports about the text a runtime
// can generate (context length, vocabulary size, end-of-generation ids), and the forward
// declaration of the sampling configuration its generation state is started from.
//
// Layering: generation::SamplingConfig belongs to the generation layer, which core never
// includes. The concept takes it by reference only, so a declaration suffices here; include
// eredu/generation/sampling_config.hpp to implement or check a backend.

#include <cstdint>
#include <vector>

namespace eredu::generation {
struct SamplingConfig;
}  // namespace eredu::generation

namespace eredu {

// What a loaded runtime can generate. The driver checks prompts against these numbers before any
// compute is spent.
struct TextGenerationLimits {
  std::uint32_t context_length = 0;  // positions the session's cache holds (prompt + generated)
  std::uint32_t vocab_size = 0;      // valid token ids are [0, vocab_size)
  std::vector<std::uint32_t> end_of_generation_ids;  // EOS / EOT from the model's metadata

  friend bool operator==(const TextGenerationLimits&, const TextGenerationLimits&) = default;
};

}  // namespace eredu
