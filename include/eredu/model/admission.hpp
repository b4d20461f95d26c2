#pragma once
// What every backend checks of a checkpoint before any payload byte is read, and of a session's
// input before it runs, written once over the family registry:
//
//   read_model_admission(backend, inspection, context_length)
//       the architecture is a registered family, the checkpoint is GGUF, the family's config and
//       tensor schema are valid and the context fits the limit;
//   admit_model(backend, inspection, context_length, preflight)
//       that, then the backend's `preflight(recipe, source)` for every owning parameter;
//   declare_model<B>(admission)
//       the family's model on B with every slot declared (nothing bound yet);
//   check_forward_input(tokens, n_vocab, position, max_positions)
//       a prefill/decode input a session can run without changing its state.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"
#include "eredu/model/registry.hpp"

namespace eredu::model {

struct ModelAdmission {
  std::size_t family = 0;  // index into Families
  AnyConfig config;
  ModelGeometry geometry;
  OperatorCapabilities required_operators;
  std::vector<ParameterSchema> schema;
  std::uint32_t max_positions = 0;  // KV positions to allocate
};

// `backend` names the backend in messages ("cpu backend: ..."). An unregistered architecture is
// kUnsupported naming it and listing the supported ones.
[[nodiscard]] Result<ModelAdmission> read_model_admission(std::string_view backend,
                                                          const ArtifactInspection& inspection,
                                                          std::uint32_t context_length);

template <typename Preflight>
[[nodiscard]] Result<ModelAdmission> admit_model(std::string_view backend,
                                                 const ArtifactInspection& inspection,
                                                 std::uint32_t context_length,
                                                 Preflight&& preflight) {
  EREDU_TRY(ModelAdmission admitted, read_model_admission(backend, inspection, context_length));
  for (const ParameterSchema& p : admitted.schema) {
    if (p.alias_of) continue;
    EREDU_TRY_VOID(preflight(p.recipe, *inspection.source));
  }
  return admitted;
}

// The admitted family's model on B, every slot declared from the schema.
template <ModelBackend B>
[[nodiscard]] Result<AnyModel<B>> declare_model(const ModelAdmission& admitted) {
  return Families::with_family<Result<AnyModel<B>>>(
      admitted.family, [&]<typename F>() -> Result<AnyModel<B>> {
        using M = typename F::template model<B>;
        static_assert(ArchitectureModel<M, B>, "a family's model must be an ArchitectureModel");
        const auto* config = std::get_if<typename F::config>(&admitted.config);
        if (config == nullptr) {
          return fail(ErrorCode::kInternal, "admission holds another family's config");
        }
        EREDU_TRY(M m, M::declare(*config, admitted.schema));
        return AnyModel<B>(std::in_place_type<M>, std::move(m));
      });
}

// kInvalidArgument for no tokens or a token id >= n_vocab (the message names its index);
// kLimitExceeded when position + tokens.size() exceeds max_positions.
[[nodiscard]] Result<void> check_forward_input(std::span<const std::uint32_t> tokens,
                                               std::uint32_t n_vocab, std::uint32_t position,
                                               std::uint32_t max_positions);

}  // namespace eredu::model
