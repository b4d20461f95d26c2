#pragma once
// The automatic planner: from the hardware a backend discovered and a model's header-only
// requirements, the plan that runs it (device, context, KV precision, threads, drafting) and a
// report that explains every decision, warning and rejection. Nothing here reads a weight byte,
// so a model that does not fit is rejected before loading, with the numbers.
//
//   plan_execution(backend, hardware, requirements, request, admit)      the decision itself;
//   plan_automatically(factory, inspection, request)                     over a backend's factory
//       (AutomaticPlanningBackend: its hardware, and its admission of each candidate plan).
//
// How it decides:
//   budget   --memory-budget when given, else the device's free memory (its total when free is
//            unknown) less kHeadroomPercent: other processes, the allocator and page tables need
//            it;
//   KV type  the requested one, else f16 (half the bytes of f32; llama.cpp's default too);
//   context  the requested one, which must fit (it is never silently shrunk), else the largest of
//            min(model context, kDefaultContextLength) that fits beside the weights and the
//            activation scratch, rounded down to kContextGranule; a model whose weights and a
//            kMinimumContext-position cache do not fit is rejected;
//   device   the requested one, else the first the backend lists (its own preference order) that
//            the backend admits and that fits.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "eredu/core/backend_id.hpp"
#include "eredu/core/concepts/automatic_planning_backend.hpp"
#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/model_loading.hpp"
#include "eredu/core/result.hpp"
#include "eredu/plan/automatic_planning.hpp"
#include "eredu/plan/execution_plan.hpp"
#include "eredu/plan/model_requirements.hpp"

namespace eredu::plan {

inline constexpr std::uint32_t kHeadroomPercent = 10;
inline constexpr std::uint32_t kContextGranule = 256;
inline constexpr std::uint32_t kMinimumContext = 256;

// What the caller asks of the plan; every absent field is the planner's to decide.
struct PlanRequest {
  std::optional<std::uint32_t> context_length;       // KV positions (-c)
  std::optional<KvCacheType> kv_cache_type;          // --kv-type
  std::optional<std::uint64_t> memory_budget_bytes;  // --memory-budget
  std::optional<std::string> device;                 // a device id (--device)
  std::uint32_t threads = 0;                         // 0: the backend's default
  DraftingPlan drafting = DraftingPlan::disabled();
  // An external drafter's requirements: its weights, its own KV cache of the planned context and
  // its scratch count against the budget too.
  std::optional<ModelRequirements> draft_model;
};

// Where the planned bytes go.
struct MemoryEstimate {
  std::uint64_t weights = 0;
  std::uint64_t kv_cache = 0;
  std::uint64_t activations = 0;
  std::uint64_t drafter = 0;
  [[nodiscard]] std::uint64_t total() const noexcept {
    return weights + kv_cache + activations + drafter;
  }
};

struct PlanReport {
  std::string model;                    // the inspected path
  ModelRequirements requirements;       // what the model needs
  std::uint64_t budget_bytes = 0;       // what the plan was admitted against
  std::string budget_source;            // where that budget came from
  MemoryEstimate memory;                // the chosen plan's estimate
  std::vector<std::string> decisions;   // one line per decided field, with its reason
  std::vector<std::string> warnings;    // admitted, but worth knowing
  std::vector<std::string> rejections;  // candidates (devices, contexts) turned down, and why
};

struct PlannedExecution {
  ExecutionPlan plan;
  PlanReport report;
};

// The backend's verdict on one candidate plan (AutomaticPlanningBackend::admit_candidate).
using CandidateAdmitter = std::function<CandidateAdmission(const ExecutionPlan&)>;

// The decision (see the header comment). Fails with kCapacityExhausted when nothing fits (the
// message gives needed and available bytes per component, for every candidate device), kNotFound
// for a requested device the backend does not have, kCapabilityMissing when the backend admits
// no device (the message gives its reasons), kInvalidArgument for a zero or oversized context.
[[nodiscard]] Result<PlannedExecution> plan_execution(const BackendId& backend,
                                                      const HardwareProfile& hardware,
                                                      const ModelRequirements& requirements,
                                                      const PlanRequest& request,
                                                      const CandidateAdmitter& admit);

template <AutomaticPlanningBackend F>
[[nodiscard]] Result<PlannedExecution> plan_automatically(const F& factory,
                                                          const ArtifactInspection& inspection,
                                                          const PlanRequest& request) {
  auto hardware = factory.discover_hardware();
  if (!hardware) return fail(hardware.error().cause());
  EREDU_TRY(ModelRequirements requirements, inspect_model_requirements(inspection));
  auto planned = plan_execution(factory.backend_id(), *hardware, requirements, request,
                                [&](const ExecutionPlan& candidate) -> CandidateAdmission {
                                  auto verdict = factory.admit_candidate(inspection, candidate);
                                  if (!verdict)
                                    return CandidateAdmission::rejected(verdict.error().what());
                                  return std::move(verdict).value();
                                });
  if (planned) planned->report.model = inspection.path.string();
  return planned;
}

// The plan and its report as one JSON object {"plan": ..., "report": ...}.
[[nodiscard]] nlohmann::json planned_execution_to_json(const PlannedExecution& planned);

}  // namespace eredu::plan
