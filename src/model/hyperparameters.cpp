// GGUF hyper-parameter readers shared by every family (see hyperparameters.hpp).
#include "eredu/model/hyperparameters.hpp"

#include <cmath>

#include "eredu/checkpoint/gguf.hpp"

namespace eredu::model {

Error hyperparameter_error(const std::string& key, std::string message) {
  return Error(ErrorCode::kInvalidModel, "hyper-parameter '" + key + "': " + std::move(message))
      .with_subject(key);
}

Result<std::string> read_architecture(const checkpoint::GgufContents& gguf) {
  if (gguf.find_metadata("general.architecture") == nullptr) {
    return fail(Error(ErrorCode::kUnsupported, "general.architecture is missing")
                    .with_subject("general.architecture"));
  }
  auto arch = gguf.get_string("general.architecture");
  if (!arch) {
    return fail(hyperparameter_error("general.architecture",
                                     "expected a string (" + arch.error().message() + ")"));
  }
  return std::string(*arch);
}

Result<std::uint32_t> required_u32(const checkpoint::GgufContents& gguf, const std::string& key,
                                   std::uint64_t min, std::uint64_t max) {
  if (gguf.find_metadata(key) == nullptr) return fail(hyperparameter_error(key, "missing"));
  auto value = gguf.get_u64(key);
  if (!value) {
    return fail(hyperparameter_error(
        key, "expected an unsigned integer (" + value.error().message() + ")"));
  }
  if (*value < min || *value > max) {
    return fail(hyperparameter_error(key, "value " + std::to_string(*value) + " is outside [" +
                                              std::to_string(min) + ", " + std::to_string(max) +
                                              "]"));
  }
  return static_cast<std::uint32_t>(*value);
}

Result<std::uint32_t> optional_u32(const checkpoint::GgufContents& gguf, const std::string& key,
                                   std::uint64_t min, std::uint64_t max, std::uint32_t fallback) {
  if (gguf.find_metadata(key) == nullptr) return fallback;
  return required_u32(gguf, key, min, max);
}

Result<float> optional_positive_float(const checkpoint::GgufContents& gguf, const std::string& key,
                                      float fallback) {
  if (gguf.find_metadata(key) == nullptr) return fallback;
  auto value = gguf.get_float(key);
  if (!value) {
    return fail(hyperparameter_error(key, "expected a float (" + value.error().message() + ")"));
  }
  if (!std::isfinite(*value) || !(*value > 0.0) || *value > 1e30) {
    return fail(hyperparameter_error(
        key, "value " + std::to_string(*value) + " must be finite and positive"));
  }
  return static_cast<float>(*value);
}

Result<std::string> optional_string(const checkpoint::GgufContents& gguf, const std::string& key,
                                    std::string_view fallback) {
  if (gguf.find_metadata(key) == nullptr) return std::string(fallback);
  auto value = gguf.get_string(key);
  if (!value) {
    return fail(hyperparameter_error(key, "expected a string (" + value.error().message() + ")"));
  }
  return std::string(*value);
}

}  // namespace eredu::model
