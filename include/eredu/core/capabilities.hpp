#pragma once
// Device and session capabilities. They fail closed: every flag defaults to false, so a capability
// nobody reported is absent. `required.validate(available)` succeeds only when every required flag
// is available, and otherwise names the FIRST missing one (in declaration order) so that the
// error is stable and actionable.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "eredu/core/result.hpp"

namespace eredu {

namespace detail {
// A capability flag and the name it is reported under.
template <typename Caps>
struct CapabilityField {
  bool Caps::*member;
  std::string_view name;
};

template <typename Caps, std::size_t N>
constexpr std::optional<std::string_view> first_missing(
    const std::array<CapabilityField<Caps>, N>& fields, const Caps& required,
    const Caps& available) noexcept {
  for (const auto& field : fields) {
    if (required.*(field.member) && !(available.*(field.member))) return field.name;
  }
  return std::nullopt;
}

inline Error missing_capability_error(std::string_view kind, std::string_view name) {
  std::string message(kind);
  message += " capability '";
  message += name;
  message += "' is required but not available";
  return Error(ErrorCode::kCapabilityMissing, std::move(message)).with_subject(std::string(name));
}
}  // namespace detail

// What a device (with its backend) can do.
struct DeviceCapabilities {
  bool exact_completion = false;  // each submission has a completion observing only its own work
  bool transfers = false;         // host<->device weight promotion/demotion
  bool collectives = false;       // collective communication across devices

  static constexpr std::array<detail::CapabilityField<DeviceCapabilities>, 3> kFields{{
      {&DeviceCapabilities::exact_completion, "exact_completion"},
      {&DeviceCapabilities::transfers, "transfers"},
      {&DeviceCapabilities::collectives, "collectives"},
  }};

  // The name of the first capability required by `*this` but absent from `available`.
  [[nodiscard]] constexpr std::optional<std::string_view> first_missing(
      const DeviceCapabilities& available) const noexcept {
    return detail::first_missing(kFields, *this, available);
  }
  // Fails with kCapabilityMissing (subject = capability name) on the first missing capability.
  [[nodiscard]] Result<void> validate(const DeviceCapabilities& available) const {
    if (auto missing = first_missing(available)) {
      return Unexpected(detail::missing_capability_error("device", *missing));
    }
    return ok();
  }

  friend bool operator==(const DeviceCapabilities&, const DeviceCapabilities&) = default;
};

// What a prepared model's session can do.
struct SessionCapabilities {
  bool persistent_cache = false;       // the KV cache survives between submissions
  bool output_observation = false;     // outputs can be read back to the host (observe_output)
  bool activation_inspection = false;  // named intermediate activations can be captured

  static constexpr std::array<detail::CapabilityField<SessionCapabilities>, 3> kFields{{
      {&SessionCapabilities::persistent_cache, "persistent_cache"},
      {&SessionCapabilities::output_observation, "output_observation"},
      {&SessionCapabilities::activation_inspection, "activation_inspection"},
  }};

  [[nodiscard]] constexpr std::optional<std::string_view> first_missing(
      const SessionCapabilities& available) const noexcept {
    return detail::first_missing(kFields, *this, available);
  }
  [[nodiscard]] Result<void> validate(const SessionCapabilities& available) const {
    if (auto missing = first_missing(available)) {
      return Unexpected(detail::missing_capability_error("session", *missing));
    }
    return ok();
  }

  friend bool operator==(const SessionCapabilities&, const SessionCapabilities&) = default;
};

// "persistent_cache, output_observation" (or "none"): for error messages and reports.
template <typename Caps>
[[nodiscard]] std::string describe_capabilities(const Caps& caps) {
  std::string out;
  for (const auto& field : Caps::kFields) {
    if (!(caps.*(field.member))) continue;
    if (!out.empty()) out += ", ";
    out += field.name;
  }
  return out.empty() ? std::string("none") : out;
}

}  // namespace eredu
