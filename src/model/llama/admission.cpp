// Admission of a llama checkpoint and of a session's input, shared by every backend.
#include "eredu/model/llama/admission.hpp"

#include <string>

#include "eredu/checkpoint/source.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"

namespace eredu::model::llama {

Result<LlamaAdmission> read_llama_admission(std::string_view backend,
                                            const ArtifactInspection& inspection,
                                            std::uint32_t context_length) {
  const std::string who(backend);
  if (!is_llama_architecture(inspection.architecture)) {
    return fail(Error(ErrorCode::kUnsupported, who + ": architecture '" + inspection.architecture +
                                                   "' is not supported (llama, mistral)")
                    .with_subject("general.architecture"));
  }
  if (inspection.gguf == nullptr || inspection.source == nullptr) {
    return fail(ErrorCode::kUnsupported, who + ": the llama family loads from GGUF only");
  }
  const checkpoint::TensorCatalog& catalog = inspection.source->catalog();
  const checkpoint::TensorMetadata* embd = catalog.find(kTokenEmbd);
  EREDU_TRY(
      LlamaConfig config,
      read_llama_config(*inspection.gguf, embd && embd->shape.size() == 2 ? embd->shape[0] : 0));
  EREDU_TRY(auto schema, llama_schema(config, catalog));
  LlamaAdmission admitted;
  admitted.max_positions = context_length != 0 ? context_length : config.n_ctx_train;
  if (admitted.max_positions > kMaxContext) {
    return fail(
        Error(ErrorCode::kLimitExceeded,
              "context_length " + std::to_string(admitted.max_positions) + " exceeds the limit")
            .with_subject("context_length"));
  }
  admitted.config = std::move(config);
  admitted.schema = std::move(schema);
  return admitted;
}

Result<void> check_forward_input(std::span<const std::uint32_t> tokens, std::uint32_t n_vocab,
                                 std::uint32_t position, std::uint32_t max_positions) {
  if (tokens.empty()) return fail(ErrorCode::kInvalidArgument, "prefill: no tokens");
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] >= n_vocab) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "token id " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                            " is out of range (vocabulary " + std::to_string(n_vocab) + ")")
                      // An index into the token list, not a byte offset: the message says it.
                      .with_subject("tokens"));
    }
  }
  if (static_cast<std::uint64_t>(position) + tokens.size() > max_positions) {
    return fail(Error(ErrorCode::kLimitExceeded, "context full: " + std::to_string(position) +
                                                     " cached + " + std::to_string(tokens.size()) +
                                                     " new positions exceed " +
                                                     std::to_string(max_positions)));
  }
  return ok();
}

}  // namespace eredu::model::llama
