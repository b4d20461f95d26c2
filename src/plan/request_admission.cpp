// Request admission (see request_admission.hpp).
#include "eredu/plan/request_admission.hpp"

#include <algorithm>
#include <string>

namespace eredu::plan {

Result<AdmittedRequest> admit_request(const GenerationRequestShape& request,
                                      const SessionShape& session,
                                      const ModelRequirements& requirements) {
  if (request.prompt_tokens == 0) {
    return fail(
        Error(ErrorCode::kInvalidArgument, "the prompt has no tokens").with_subject("prompt"));
  }
  const std::uint64_t context = session.context_length;
  const std::uint64_t prompt = request.prompt_tokens;
  if (prompt > context) {
    return fail(Error(ErrorCode::kLimitExceeded,
                      "the prompt of " + std::to_string(prompt) +
                          " tokens does not fit the context of " + std::to_string(context) +
                          " positions (raise -c to at least " + std::to_string(prompt) + ")")
                    .with_subject("prompt"));
  }
  AdmittedRequest admitted;
  admitted.positions = context;
  if (request.max_tokens >= 0) {
    const std::uint64_t total = prompt + static_cast<std::uint64_t>(request.max_tokens);
    if (total > context) {
      return fail(Error(ErrorCode::kLimitExceeded,
                        "the prompt of " + std::to_string(prompt) + " tokens + " +
                            std::to_string(request.max_tokens) +
                            " requested tokens = " + std::to_string(total) +
                            " positions exceed the context of " + std::to_string(context) +
                            " (raise -c to at least " + std::to_string(total) +
                            " or lower -n to at most " + std::to_string(context - prompt) + ")")
                      .with_subject("max_tokens"));
    }
    admitted.positions = total;
  }
  const std::uint32_t batch = static_cast<std::uint32_t>(std::min<std::uint64_t>(prompt, context));
  admitted.state_bytes =
      requirements.activation_bytes(batch, session.context_length, std::max(1u, session.threads));
  if (session.free_memory_bytes && admitted.state_bytes > *session.free_memory_bytes) {
    return fail(Error(ErrorCode::kCapacityExhausted,
                      "the prompt pass of " + std::to_string(prompt) + " tokens needs about " +
                          format_bytes(admitted.state_bytes) + " of scratch, but only " +
                          format_bytes(*session.free_memory_bytes) + " is free")
                    .with_subject("prompt"));
  }
  return admitted;
}

}  // namespace eredu::plan
