// VulkanBackend's ModelLoadingBackend: the Vulkan policy and capabilities; admission,
// preparation and binding are the generic runtime's (runtime/family_model.hpp), with this
// backend's preflight and uploads.
#include <string>
#include <vector>

#include "eredu/backends/vulkan/vulkan_backend.hpp"

namespace eredu::vulkan {

PreparationPolicy VulkanBackend::preparation_policy(const load_options&) const {
  PreparationPolicy policy;
  policy.required_session_capabilities.persistent_cache = true;
  policy.required_session_capabilities.output_observation = true;
  return policy;
}

SessionCapabilities VulkanBackend::session_capabilities(const ArtifactInspection&,
                                                        const PreparationPolicy&) const {
  return realized_session_capabilities();
}

Result<runtime::FamilyPreparation> VulkanBackend::select_preparation(
    const ArtifactInspection& inspection, const load_options& options,
    const PreparationPolicy&) const {
  return runtime::select_family_preparation<VulkanBackend>("vulkan backend", inspection, options);
}

}  // namespace eredu::vulkan
