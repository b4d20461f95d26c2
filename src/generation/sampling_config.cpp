#include "eredu/generation/sampling_config.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace eredu::generation {
namespace {

Unexpected<Error> invalid(const char* parameter, std::string message) {
  return fail(Error(ErrorCode::kInvalidArgument,
                    fmt::format("sampling parameter {} {}", parameter, message))
                  .with_subject(parameter));
}

}  // namespace

SamplingConfig SamplingConfig::greedy() noexcept {
  SamplingConfig config;
  config.temperature = 0.0f;
  config.top_k = 0;
  config.top_p = 1.0f;
  config.min_p = 0.0f;
  return config;
}

Result<void> SamplingConfig::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f || temperature > kMaxTemperature) {
    return invalid("temperature", fmt::format("is {}; expected a finite value in [0, {}]",
                                              temperature, kMaxTemperature));
  }
  if (top_k < 0) {
    return invalid("top_k", fmt::format("is {}; expected >= 0 (0 turns it off)", top_k));
  }
  if (!std::isfinite(top_p) || top_p <= 0.0f || top_p > 1.0f) {
    return invalid("top_p",
                   fmt::format("is {}; expected a value in (0, 1] (1 turns it off)", top_p));
  }
  if (!std::isfinite(min_p) || min_p < 0.0f || min_p > 1.0f) {
    return invalid("min_p",
                   fmt::format("is {}; expected a value in [0, 1] (0 turns it off)", min_p));
  }
  if (!std::isfinite(repeat_penalty) || repeat_penalty <= 0.0f) {
    return invalid(
        "repeat_penalty",
        fmt::format("is {}; expected a finite value > 0 (1 turns it off)", repeat_penalty));
  }
  if (!std::isfinite(frequency_penalty)) {
    return invalid("frequency_penalty",
                   fmt::format("is {}; expected a finite value", frequency_penalty));
  }
  if (!std::isfinite(presence_penalty)) {
    return invalid("presence_penalty",
                   fmt::format("is {}; expected a finite value", presence_penalty));
  }
  if (penalty_window < kWholeHistory || penalty_window > kMaxPenaltyWindow) {
    return invalid("penalty_window",
                   fmt::format("is {}; expected -1 (whole history), 0 (off) or a count up to {}",
                               penalty_window, kMaxPenaltyWindow));
  }
  return ok();
}

}  // namespace eredu::generation
