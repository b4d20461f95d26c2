#pragma once
// BackendId: the open, non-empty name a backend answers to ("cpu", "cuda", "vulkan", ...).
//
// The set of backends is open (a third party may add one), so this is a validated string rather
// than an enum. The only way to build one is `BackendId::create`, which rejects the empty name, so
// every BackendId in the program is known to be non-empty.

#include <compare>
#include <string>
#include <string_view>
#include <utility>

#include "eredu/core/result.hpp"

namespace eredu {

class BackendId {
 public:
  // Fails with kInvalidArgument when `name` is empty.
  [[nodiscard]] static Result<BackendId> create(std::string name) {
    if (name.empty()) {
      return fail(Error(ErrorCode::kInvalidArgument, "a backend id must not be empty")
                      .with_subject("backend id"));
    }
    return BackendId(std::move(name));
  }

  [[nodiscard]] const std::string& value() const noexcept { return name_; }
  [[nodiscard]] std::string_view view() const noexcept { return name_; }

  friend bool operator==(const BackendId&, const BackendId&) = default;
  friend auto operator<=>(const BackendId&, const BackendId&) = default;

 private:
  explicit BackendId(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

}  // namespace eredu
