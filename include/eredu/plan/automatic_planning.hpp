#pragma once
// The vocabulary an AutomaticPlanningBackend answers in: the hardware it discovered, its verdict
// on one candidate plan, and the planning error.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eredu/core/descriptors.hpp"
#include "eredu/core/error.hpp"
#include "eredu/core/planning_fwd.hpp"

namespace eredu::plan {

// The devices a backend family found, with their fail-closed capabilities.
struct HardwareProfile {
  std::vector<DeviceReport> devices;
  std::optional<std::uint64_t> host_memory_bytes;  // absent when unknown (never guessed)

  // The device with this id, or nullptr.
  [[nodiscard]] const DeviceReport* find_device(std::string_view id) const noexcept {
    for (const auto& report : devices) {
      if (report.descriptor.id == id) return &report;
    }
    return nullptr;
  }
};

// A backend's verdict on one candidate plan: supported, or rejected with a reason.
struct CandidateAdmission {
  bool supported = false;  // fail closed
  std::string rejection;   // why not, when !supported

  [[nodiscard]] static CandidateAdmission accepted() { return CandidateAdmission{true, {}}; }
  [[nodiscard]] static CandidateAdmission rejected(std::string reason) {
    return CandidateAdmission{false, std::move(reason)};
  }
};

// Planning and plan-realization failures: the plan itself is invalid (structure, identity,
// capabilities: the cause says which), or the backend failed while performing `operation`.
class AutomaticPlanningError {
 public:
  enum class Kind : std::uint8_t { kInvalid, kBackend };

  [[nodiscard]] static AutomaticPlanningError invalid(Error cause) {
    return AutomaticPlanningError(Kind::kInvalid, {}, std::move(cause));
  }
  [[nodiscard]] static AutomaticPlanningError backend(std::string operation, Error cause) {
    return AutomaticPlanningError(Kind::kBackend, std::move(operation), std::move(cause));
  }

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& operation() const noexcept { return operation_; }
  [[nodiscard]] const Error& cause() const noexcept { return cause_; }

  [[nodiscard]] std::string what() const {
    if (kind_ == Kind::kInvalid) return "invalid execution plan: " + cause_.what();
    return "backend failed during " + operation_ + ": " + cause_.what();
  }

  friend bool operator==(const AutomaticPlanningError&, const AutomaticPlanningError&) = default;

 private:
  AutomaticPlanningError(Kind kind, std::string operation, Error cause)
      : kind_(kind), operation_(std::move(operation)), cause_(std::move(cause)) {}
  Kind kind_;
  std::string operation_;
  Error cause_;
};

}  // namespace eredu::plan
