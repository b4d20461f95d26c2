// Admission over the family registry, and the session input check (see admission.hpp).
#include "eredu/model/admission.hpp"

#include <algorithm>
#include <string>

#include "eredu/checkpoint/source.hpp"
#include "eredu/checkpoint/tensor_catalog.hpp"
#include "eredu/model/hyperparameters.hpp"

namespace eredu::model {

std::string supported_architectures() {
  std::string out;
  for (std::string_view name : Families::names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

Result<ModelAdmission> read_model_admission(std::string_view backend,
                                            const ArtifactInspection& inspection,
                                            std::uint32_t context_length) {
  const std::string who(backend);
  const std::size_t index = family_index(inspection.architecture);
  if (index == Families::size) {
    return fail(Error(ErrorCode::kUnsupported, who + ": architecture '" + inspection.architecture +
                                                   "' is not supported (" +
                                                   supported_architectures() + ")")
                    .with_subject("general.architecture"));
  }
  if (inspection.gguf == nullptr || inspection.source == nullptr) {
    return fail(ErrorCode::kUnsupported,
                who + ": the " + inspection.architecture + " family loads from GGUF only");
  }
  const checkpoint::TensorCatalog& catalog = inspection.source->catalog();
  ModelAdmission admitted;
  admitted.family = index;
  EREDU_TRY_VOID((Families::with_family<Result<void>>(index, [&]<typename F>() -> Result<void> {
    EREDU_TRY(typename F::config config, F::read_config(*inspection.gguf, catalog));
    EREDU_TRY(admitted.schema, F::schema(config, catalog));
    admitted.geometry = F::geometry(config);
    admitted.required_operators = F::required_operators(config);
    admitted.config = std::move(config);
    return ok();
  })));
  admitted.max_positions = context_length != 0
                               ? context_length
                               : std::min(admitted.geometry.n_ctx_train, kDefaultContextLength);
  if (admitted.max_positions > kMaxContext) {
    return fail(
        Error(ErrorCode::kLimitExceeded,
              "context_length " + std::to_string(admitted.max_positions) + " exceeds the limit")
            .with_subject("context_length"));
  }
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

}  // namespace eredu::model
