#pragma once
// The JSON form of an ExecutionPlan. Schema 2 is written; schema 1 and 2 are read. Reading
// validates again: every value goes through the same constructors as a plan built in code, and
// anything unknown is rejected rather than ignored (fail closed), with an error whose subject is
// the JSON field ("schema_version", "device.device", "drafting.kind", "session.kv_cache_type",
// "required_device_capabilities[1]", ...).
//
//   {
//     "schema_version": 2,
//     "device": {"backend": "cpu", "device": "cpu:0"},
//     "residency": {"kind": "fully_resident"},
//     "drafting": {"kind": "disabled"},   // or {"kind": "external", "model": "d.gguf"}
//                                         // or {"kind": "ngram", "ngram": 3}          (schema 2)
//     "session": {"context_length": 4096, "kv_cache_type": "f16", "threads": 0},  // schema 2
//     "memory_budget_bytes": 25769803776,                                         // schema 2
//     "max_cached_shards": 4,
//     "required_device_capabilities": ["exact_completion"],
//     "required_session_capabilities": ["persistent_cache", "output_observation"]
//   }
//
// "residency" and "drafting" may be omitted (fully resident, disabled); "max_cached_shards" too
// (4); the capability lists too (none); "session" and its fields too (context 0 = the loader's
// default, f16, threads 0 = every core); "memory_budget_bytes" too (or null: none). A schema-1
// plan may not carry the schema-2 fields. "schema_version" and "device" are required.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "eredu/core/result.hpp"
#include "eredu/plan/execution_plan.hpp"

namespace eredu::plan {

// Largest plan file read_execution_plan_file accepts (a plan is a few hundred bytes).
inline constexpr std::size_t kMaxExecutionPlanFileBytes = 1u << 20;

// The plan as a JSON object (every field written, so the output documents the defaults).
[[nodiscard]] nlohmann::json execution_plan_to_json(const ExecutionPlan& plan);
// The plan as JSON text, pretty-printed with `indent` spaces (-1 = one line).
[[nodiscard]] std::string execution_plan_to_json_string(const ExecutionPlan& plan, int indent = 2);

// A plan from a JSON value: kInvalidArgument (wrong type, missing or unknown field, empty id,
// zero shards, unknown drafting kind, KV type or capability name) or kUnsupported (schema version
// other than 1 or 2, residency other than fully_resident), with the field as subject.
[[nodiscard]] Result<ExecutionPlan> execution_plan_from_json(const nlohmann::json& value);
// The above from JSON text; malformed JSON is kInvalidArgument with the byte offset.
[[nodiscard]] Result<ExecutionPlan> parse_execution_plan(std::string_view text);
// The above from a file (kIo when it cannot be read, kLimitExceeded over the size limit); every
// error carries the path.
[[nodiscard]] Result<ExecutionPlan> read_execution_plan_file(const std::filesystem::path& path);

}  // namespace eredu::plan
