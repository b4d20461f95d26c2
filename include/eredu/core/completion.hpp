#pragma once
// Completion: an exact handle on one submission's work, and Submission<T, C>: that work's output
// together with its completion.
//
// A completion observes only the work it was returned for (never a device-wide sync) and retains
// every resource that work needs; it is move-only so that exactly one owner decides when to wait.
// `wait()` reports the work's outcome; it does not promise that resources are already free.

#include <utility>

#include "eredu/core/concepts/completion.hpp"
#include "eredu/core/result.hpp"

namespace eredu {

// The output of one submission and the completion that says when it is ready. Move-only because
// its completion is.
template <typename T, Completion C>
struct Submission {
  using output_type = T;
  using completion_type = C;
  using error_type = typename C::error_type;

  T output;
  C completion;

  // Waits for exactly this work, then hands out the output (or the work's error).
  [[nodiscard]] Result<T, error_type> wait() && {
    EREDU_TRY_VOID(completion.wait());
    return Result<T, error_type>(std::move(output));
  }
};

}  // namespace eredu
