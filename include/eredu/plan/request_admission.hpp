#pragma once
// Request admission: whether one generation request fits the session it is about to run in,
// checked before any compute (and, in eredu-run, before any weight is read), with errors that give
// the numbers. Positions: the prompt plus the requested tokens must fit the context (a request
// that may run "until the context is full" needs only its prompt to fit). State memory: the
// activation scratch of the prompt's forward pass (the KV cache was admitted with the plan) must
// fit what is free now, when the device can tell.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "eredu/core/kv_cache_type.hpp"
#include "eredu/core/result.hpp"
#include "eredu/plan/model_requirements.hpp"

namespace eredu::plan {

struct GenerationRequestShape {
  std::size_t prompt_tokens = 0;
  std::int64_t max_tokens = -1;  // -1: until the context is full
};

struct SessionShape {
  std::uint32_t context_length = 0;
  std::uint32_t threads = 1;
  std::optional<std::uint64_t> free_memory_bytes;  // absent: not checked
};

struct AdmittedRequest {
  std::uint64_t positions = 0;    // the most positions the request can occupy
  std::uint64_t state_bytes = 0;  // the estimated scratch of its prompt pass
};

// kInvalidArgument for an empty prompt; kLimitExceeded when the positions do not fit (the message
// gives prompt, requested, total and context); kCapacityExhausted when the state estimate exceeds
// the free memory (the message gives both).
[[nodiscard]] Result<AdmittedRequest> admit_request(const GenerationRequestShape& request,
                                                    const SessionShape& session,
                                                    const ModelRequirements& requirements);

}  // namespace eredu::plan
