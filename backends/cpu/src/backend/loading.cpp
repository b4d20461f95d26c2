// CpuBackend's ModelLoadingBackend: the CPU's policy and capabilities; admission itself is the
// generic runtime's (runtime::select_family_preparation), with this backend's preflight.
#include <new>
#include <string>
#include <vector>

#include "eredu/backends/cpu/cpu_backend.hpp"

namespace eredu::cpu {

PreparationPolicy CpuBackend::preparation_policy(const load_options&) const {
  PreparationPolicy policy;
  policy.required_session_capabilities.persistent_cache = true;
  policy.required_session_capabilities.output_observation = true;
  return policy;
}

SessionCapabilities CpuBackend::session_capabilities(const ArtifactInspection&,
                                                     const PreparationPolicy&) const {
  return realized_session_capabilities();
}

Result<runtime::FamilyPreparation> CpuBackend::select_preparation(
    const ArtifactInspection& inspection, const load_options& options,
    const PreparationPolicy&) const {
  return runtime::select_family_preparation<CpuBackend>("cpu backend", inspection, options);
}

Result<std::vector<float>> CpuBackend::observe_forward(const CpuTensor& logits) const {
  try {
    return logits.data;
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kCapacityExhausted,
                "cpu observe_output: cannot allocate " +
                    std::to_string(logits.data.size() * sizeof(float)) + " bytes");
  }
}

}  // namespace eredu::cpu
