// The plan checks every backend's factory makes (see backend_plan_checks.hpp).
#include "eredu/plan/backend_plan_checks.hpp"

#include "eredu/model/registry.hpp"

namespace eredu::plan {

Result<void> check_plan_for_backend(const ExecutionPlan& p, std::string_view backend,
                                    std::span<const DeviceReport> devices,
                                    const SessionCapabilities& realized) {
  const std::string name(backend);
  if (p.device().backend().value() != backend) {
    return fail(Error(ErrorCode::kUnsupported, "the plan names backend '" +
                                                   std::string(p.device().backend().value()) +
                                                   "', not '" + name + "'")
                    .with_subject("backend"));
  }
  const DeviceReport* device = nullptr;
  std::string known;
  for (const auto& report : devices) {
    if (report.descriptor.id == p.device().device()) device = &report;
    known += (known.empty() ? "" : ", ") + report.descriptor.id;
  }
  if (device == nullptr) {
    return fail(Error(ErrorCode::kNotFound, "the " + name + " backend has no device '" +
                                                p.device().device() + "' (it has " +
                                                (known.empty() ? std::string("none") : known) + ")")
                    .with_subject("device"));
  }
  EREDU_TRY_VOID(p.validate_device_capabilities(device->capabilities));
  EREDU_TRY_VOID(p.validate_session_capabilities(realized));
  return ok();
}

CandidateAdmission admit_family_candidate(const Result<void>& checked,
                                          const ArtifactInspection& inspection,
                                          std::string_view backend) {
  if (!checked) return CandidateAdmission::rejected(checked.error().what());
  if (!model::is_supported_architecture(inspection.architecture)) {
    return CandidateAdmission::rejected("architecture '" + inspection.architecture +
                                        "' is not supported by the " + std::string(backend) +
                                        " backend (" + model::supported_architectures() + ")");
  }
  return CandidateAdmission::accepted();
}

}  // namespace eredu::plan
