// The automatic planner (see planner.hpp).
#include "eredu/plan/planner.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "eredu/model/hyperparameters.hpp"
#include "eredu/plan/execution_plan_json.hpp"

namespace eredu::plan {
namespace {

constexpr std::uint64_t kUnknownBudget = std::numeric_limits<std::uint64_t>::max();

struct Budget {
  std::uint64_t bytes = kUnknownBudget;
  std::string source;
};

std::uint64_t less_headroom(std::uint64_t bytes) {
  return bytes / 100 * (100 - kHeadroomPercent);
}

Budget budget_for(const DeviceReport& device, const PlanRequest& request) {
  if (request.memory_budget_bytes) {
    return {*request.memory_budget_bytes,
            "the requested memory budget (" + format_bytes(*request.memory_budget_bytes) + ")"};
  }
  const std::string pct = std::to_string(kHeadroomPercent) + "%";
  const DeviceDescriptor& d = device.descriptor;
  if (d.free_memory_bytes) {
    return {less_headroom(*d.free_memory_bytes), "the free memory of " + d.id + " (" +
                                                     format_bytes(*d.free_memory_bytes) +
                                                     ") less " + pct + " headroom"};
  }
  if (d.memory_bytes) {
    return {less_headroom(*d.memory_bytes), "the total memory of " + d.id + " (" +
                                                format_bytes(*d.memory_bytes) +
                                                ", free unknown) less " + pct + " headroom"};
  }
  return {kUnknownBudget, "none: " + d.id + " does not report its memory"};
}

std::uint32_t estimate_threads(const PlanRequest& request) {
  return request.threads != 0 ? request.threads : std::max(1u, std::thread::hardware_concurrency());
}

MemoryEstimate estimate(const ModelRequirements& r, const PlanRequest& request, KvCacheType kv,
                        std::uint32_t context) {
  MemoryEstimate m;
  m.weights = r.weight_bytes;
  m.kv_cache = r.kv_bytes(kv, context);
  m.activations =
      r.activation_bytes(std::min(context, kPlanningBatch), context, estimate_threads(request));
  if (request.draft_model) {
    const ModelRequirements& d = *request.draft_model;
    m.drafter =
        d.weight_bytes + d.kv_bytes(kv, context) +
        d.activation_bytes(std::min(context, kPlanningBatch), context, estimate_threads(request));
  }
  return m;
}

std::string describe(const MemoryEstimate& m, KvCacheType kv, std::uint32_t context) {
  std::string out = format_bytes(m.total()) + " (weights " + format_bytes(m.weights) + " + " +
                    std::string(to_string(kv)) + " KV cache of " + std::to_string(context) +
                    " positions " + format_bytes(m.kv_cache) + " + activations " +
                    format_bytes(m.activations);
  if (m.drafter != 0) out += " + drafter " + format_bytes(m.drafter);
  return out + ")";
}

// The largest context <= `wanted` that fits `budget`, rounded down to the granule (or `wanted`
// itself when it fits); 0 when not even the minimum fits.
std::uint32_t fitting_context(const ModelRequirements& r, const PlanRequest& request,
                              KvCacheType kv, std::uint32_t wanted, std::uint64_t budget) {
  if (estimate(r, request, kv, wanted).total() <= budget) return wanted;
  const std::uint32_t floor = std::min(kMinimumContext, wanted);
  std::uint32_t lo = floor, hi = wanted;  // the answer is in [lo, hi) if lo fits
  if (estimate(r, request, kv, lo).total() > budget) return 0;
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (estimate(r, request, kv, mid).total() <= budget ? lo : hi) = mid;
  }
  const std::uint32_t rounded = lo / kContextGranule * kContextGranule;
  return rounded >= floor ? rounded : lo;
}

}  // namespace

Result<PlannedExecution> plan_execution(const BackendId& backend, const HardwareProfile& hardware,
                                        const ModelRequirements& requirements,
                                        const PlanRequest& request,
                                        const CandidateAdmitter& admit) {
  const std::uint32_t trained = requirements.geometry.n_ctx_train;
  if (request.context_length) {
    if (*request.context_length == 0) {
      return fail(Error(ErrorCode::kInvalidArgument, "the context length must be positive")
                      .with_subject("context_length"));
    }
    if (*request.context_length > model::kMaxContext) {
      return fail(Error(ErrorCode::kInvalidArgument,
                        "a context of " + std::to_string(*request.context_length) +
                            " positions exceeds the limit of " + std::to_string(model::kMaxContext))
                      .with_subject("context_length"));
    }
  }
  const KvCacheType kv = request.kv_cache_type.value_or(KvCacheType::kF16);
  const std::uint32_t wanted =
      request.context_length.value_or(std::min(trained, model::kDefaultContextLength));

  std::vector<const DeviceReport*> candidates;
  std::string present;
  for (const DeviceReport& d : hardware.devices) {
    present += (present.empty() ? "" : ", ") + d.descriptor.id;
    if (!request.device || *request.device == d.descriptor.id) candidates.push_back(&d);
  }
  if (candidates.empty()) {
    return fail(Error(ErrorCode::kNotFound,
                      "backend '" + backend.value() + "' has no device" +
                          (request.device ? " '" + *request.device + "'" : std::string()) +
                          " (present: " + (present.empty() ? std::string("none") : present) + ")")
                    .with_subject("device"));
  }

  PlanReport report;
  report.requirements = requirements;
  bool memory_rejection = false;
  for (const DeviceReport* device : candidates) {
    const std::string& id = device->descriptor.id;
    ExecutionPlanOptions options;
    options.drafting = request.drafting;
    options.session = SessionPlan{wanted, kv, request.threads};
    EREDU_TRY(DevicePlan device_plan, DevicePlan::create(backend, id));
    EREDU_TRY(ExecutionPlan provisional, ExecutionPlan::create(device_plan, options));
    const CandidateAdmission verdict = admit(provisional);
    if (!verdict.supported) {
      report.rejections.push_back("device " + id + ": " + verdict.rejection);
      continue;
    }
    const Budget budget = budget_for(*device, request);
    std::uint32_t context = wanted;
    if (budget.bytes != kUnknownBudget) {
      const MemoryEstimate needed = estimate(requirements, request, kv, wanted);
      if (needed.total() > budget.bytes) {
        context = request.context_length
                      ? 0  // an asked-for context is never silently shrunk
                      : fitting_context(requirements, request, kv, wanted, budget.bytes);
        if (context == 0) {
          memory_rejection = true;
          std::string what = "device " + id + ": needs " + describe(needed, kv, wanted);
          if (!request.context_length) {
            const std::uint32_t least = std::min(kMinimumContext, wanted);
            what += "; even " + std::to_string(least) + " positions need " +
                    describe(estimate(requirements, request, kv, least), kv, least);
          }
          what += ", but the budget is " + format_bytes(budget.bytes) + " (" + budget.source + ")";
          if (request.context_length) {
            what += kv == KvCacheType::kF32 ? "; ask for a smaller context (-c) or an f16 KV cache"
                                            : "; ask for a smaller context (-c)";
          }
          report.rejections.push_back(std::move(what));
          continue;
        }
        report.rejections.push_back("context " + std::to_string(wanted) + " on " + id + ": needs " +
                                    describe(needed, kv, wanted) + ", over the budget of " +
                                    format_bytes(budget.bytes));
      }
    }
    if (budget.bytes != kUnknownBudget) {
      options.memory_budget_bytes = budget.bytes;
    } else {
      report.warnings.push_back(budget.source + "; the plan is not checked against memory");
    }
    options.session.context_length = context;
    EREDU_TRY(ExecutionPlan plan, ExecutionPlan::create(device_plan, options));

    report.budget_bytes = budget.bytes == kUnknownBudget ? 0 : budget.bytes;
    report.budget_source = budget.source;
    report.memory = estimate(requirements, request, kv, context);
    report.decisions.push_back("backend " + backend.value() + ", device " + id + ": " +
                               (request.device ? std::string("requested")
                                               : std::string("the first device the backend "
                                                             "admits that fits")) +
                               " (" + device->descriptor.name + ")");
    report.decisions.push_back(
        "KV cache " + std::string(to_string(kv)) + ": " +
        (request.kv_cache_type ? std::string("requested")
                               : std::string("the default (half the bytes of f32)")) +
        ", " + format_bytes(requirements.kv_bytes_per_position(kv)) + " per position");
    std::string why;
    if (request.context_length) {
      why = "requested";
    } else if (context == wanted) {
      why = trained <= model::kDefaultContextLength
                ? "the model's training context"
                : "the default cap of " + std::to_string(model::kDefaultContextLength) +
                      " (the model is trained for " + std::to_string(trained) + ")";
    } else {
      why = "the largest multiple of " + std::to_string(kContextGranule) +
            " that fits the budget (wanted " + std::to_string(wanted) + ")";
    }
    report.decisions.push_back("context " + std::to_string(context) + " positions: " + why);
    report.decisions.push_back(
        "memory: " + describe(report.memory, kv, context) +
        (budget.bytes == kUnknownBudget
             ? std::string()
             : " of a budget of " + format_bytes(budget.bytes) + " (" + budget.source + ")"));
    report.decisions.push_back("threads: " + (request.threads != 0
                                                  ? std::to_string(request.threads) + " (requested)"
                                                  : std::string("the backend's default")));
    std::string drafting(to_string(request.drafting.kind()));
    if (request.drafting.is_external()) drafting += " (" + request.drafting.external_model() + ")";
    if (request.drafting.is_ngram()) {
      drafting +=
          " (prompt lookup of up to " + std::to_string(request.drafting.ngram_size()) + " tokens)";
    }
    report.decisions.push_back("drafting: " + drafting);
    if (context > trained) {
      report.warnings.push_back("the context of " + std::to_string(context) +
                                " positions exceeds the " + std::to_string(trained) +
                                " the model was trained for; quality past it is not assured");
    }
    return PlannedExecution{std::move(plan), std::move(report)};
  }
  std::string reasons;
  for (const std::string& r : report.rejections)
    reasons += (reasons.empty() ? "" : "; ") + r;
  return fail(
      Error(memory_rejection ? ErrorCode::kCapacityExhausted : ErrorCode::kCapabilityMissing,
            "no plan on backend '" + backend.value() + "' fits the " + requirements.architecture +
                " model: " + reasons)
          .with_subject("plan"));
}

nlohmann::json planned_execution_to_json(const PlannedExecution& planned) {
  using nlohmann::json;
  const PlanReport& r = planned.report;
  const ModelRequirements& q = r.requirements;
  json encodings = json::array();
  for (const EncodingBytes& e : q.by_encoding) {
    encodings.push_back(json{
        {"encoding", std::string(to_string(e.dtype))}, {"tensors", e.tensors}, {"bytes", e.bytes}});
  }
  json budget = nullptr;
  if (r.budget_bytes != 0) budget = r.budget_bytes;
  return json{
      {"plan", execution_plan_to_json(planned.plan)},
      {"report",
       json{{"model", r.model},
            {"requirements", json{{"architecture", q.architecture},
                                  {"training_context", q.geometry.n_ctx_train},
                                  {"layers", q.geometry.n_layer},
                                  {"weight_bytes", q.weight_bytes},
                                  {"weights_by_encoding", std::move(encodings)},
                                  {"layer_bytes", q.layer_bytes},
                                  {"non_layer_bytes", q.non_layer_bytes},
                                  {"kv_bytes_per_position",
                                   json{{"f16", q.kv_bytes_per_position(KvCacheType::kF16)},
                                        {"f32", q.kv_bytes_per_position(KvCacheType::kF32)}}}}},
            {"budget", json{{"bytes", std::move(budget)}, {"source", r.budget_source}}},
            {"memory", json{{"weights", r.memory.weights},
                            {"kv_cache", r.memory.kv_cache},
                            {"activations", r.memory.activations},
                            {"drafter", r.memory.drafter},
                            {"total", r.memory.total()}}},
            {"decisions", r.decisions},
            {"warnings", r.warnings},
            {"rejections", r.rejections}}},
  };
}

}  // namespace eredu::plan
