#pragma once
// The neutral inputs a ModelLoadingBackend works from: a header-only inspection of an artifact,
// the preparation policy derived from the caller's load options, and the preparation plan handed
// to `build_model_config`. These are deliberately small: the inspection layer (checkpoint readers)
// fills ArtifactInspection, and the model layer (architectures) extends the plan with its recipes.

#include <filesystem>
#include <memory>
#include <string>

#include "eredu/checkpoint/fwd.hpp"
#include "eredu/core/capabilities.hpp"
#include "eredu/core/result.hpp"

namespace eredu::checkpoint {
class GgufContents;
}

namespace eredu {

enum class ArtifactFormat : std::uint8_t { kGguf, kSafetensors };

// What was learned about an artifact from its headers alone (no payload byte read).
struct ArtifactInspection {
  std::filesystem::path path;  // the file or model directory that was inspected
  ArtifactFormat format = ArtifactFormat::kGguf;
  std::string architecture;  // the normalized family name, e.g. "llama"
  std::shared_ptr<const checkpoint::TensorCatalog> tensors;  // the header-only tensor catalog
  // The checkpoint opened headers-only (the "GGUF handle" of the design): metadata is read from
  // it, payload only later through bounded leases. Null for inspections made without a source.
  std::shared_ptr<const checkpoint::CheckpointSource> source;
  // For GGUF: the primary shard's parsed header and metadata (configuration is read from it).
  std::shared_ptr<const checkpoint::GgufContents> gguf;
};

// What the caller's load options demand of the backend. Admission fails closed: a session
// capability the policy requires must be among those the backend derives from the inspection.
struct PreparationPolicy {
  SessionCapabilities required_session_capabilities{};

  [[nodiscard]] Result<void> admit(const SessionCapabilities& derived) const {
    return required_session_capabilities.validate(derived);
  }
};

// The input of ModelLoadingBackend::build_model_config: the inspection the preparation was
// selected from and the session capabilities admitted for it (the PreparedModel carries these).
struct ModelPreparationPlan {
  ArtifactInspection inspection;
  SessionCapabilities admitted_session_capabilities;
};

}  // namespace eredu
