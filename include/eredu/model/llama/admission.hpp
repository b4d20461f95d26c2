#pragma once
// The checks every backend makes of a llama checkpoint and of a session's input, written once:
//
//   admit_llama(backend, inspection, context_length, preflight)
//       admission from headers alone (fail closed, before any payload byte is read): the
//       architecture is llama/mistral, the checkpoint is GGUF, the config and tensor schema are
//       valid, every owning parameter's recipe passes the backend's `preflight`, and the context
//       fits the limit;
//   check_forward_input(tokens, n_vocab, position, max_positions)
//       a prefill/decode input a session can run without changing its state.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/llama/config.hpp"
#include "eredu/model/llama/schema.hpp"

namespace eredu::model::llama {

// What admission yields: the config, the schema and the KV positions to allocate.
struct LlamaAdmission {
  LlamaConfig config;
  std::vector<ParameterSchema> schema;
  std::uint32_t max_positions = 0;
};

// The header-only part of admission (architecture, GGUF, config, schema). `backend` names the
// backend in messages ("cpu backend: ...").
[[nodiscard]] Result<LlamaAdmission> read_llama_admission(std::string_view backend,
                                                          const ArtifactInspection& inspection,
                                                          std::uint32_t context_length);

// read_llama_admission, then `preflight(recipe, source) -> Result<void>` for every owning
// parameter (aliases share their owner's weight).
template <typename Preflight>
[[nodiscard]] Result<LlamaAdmission> admit_llama(std::string_view backend,
                                                 const ArtifactInspection& inspection,
                                                 std::uint32_t context_length,
                                                 Preflight&& preflight) {
  EREDU_TRY(LlamaAdmission admitted, read_llama_admission(backend, inspection, context_length));
  for (const ParameterSchema& p : admitted.schema) {
    if (p.alias_of) continue;
    EREDU_TRY_VOID(preflight(p.recipe, *inspection.source));
  }
  return admitted;
}

// kInvalidArgument for no tokens or a token id >= n_vocab (the offset names its index);
// kLimitExceeded when position + tokens.size() exceeds max_positions.
[[nodiscard]] Result<void> check_forward_input(std::span<const std::uint32_t> tokens,
                                               std::uint32_t n_vocab, std::uint32_t position,
                                               std::uint32_t max_positions);

}  // namespace eredu::model::llama
