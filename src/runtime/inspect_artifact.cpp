// inspect_artifact: headers-only inspection of a checkpoint (see load_model.hpp).
#include <memory>
#include <string>

#include "eredu/checkpoint/gguf_source.hpp"
#include "eredu/checkpoint/open_checkpoint.hpp"
#include "eredu/runtime/load_model.hpp"

namespace eredu::runtime {

Result<ArtifactInspection> inspect_artifact(const std::filesystem::path& path) {
  EREDU_TRY(auto opened, checkpoint::open_checkpoint(path));
  std::shared_ptr<const checkpoint::CheckpointSource> source(std::move(opened));
  ArtifactInspection inspection;
  inspection.path = path;
  inspection.source = source;
  inspection.tensors = std::shared_ptr<const checkpoint::TensorCatalog>(source, &source->catalog());
  if (const auto* gguf = dynamic_cast<const checkpoint::GgufCheckpointSource*>(source.get())) {
    inspection.format = ArtifactFormat::kGguf;
    inspection.gguf = std::shared_ptr<const checkpoint::GgufContents>(source, &gguf->primary());
    if (gguf->primary().find_metadata("general.architecture") == nullptr) {
      return fail(Error(ErrorCode::kUnsupported, "general.architecture is missing")
                      .with_subject("general.architecture")
                      .with_path(path.string()));
    }
    EREDU_TRY(auto arch, gguf->primary().get_string("general.architecture"));
    inspection.architecture = std::string(arch);
  } else {
    inspection.format = ArtifactFormat::kSafetensors;
    inspection.architecture.clear();  // SafeTensors families arrive with their config reader
  }
  return inspection;
}

}  // namespace eredu::runtime
